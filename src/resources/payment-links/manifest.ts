import { defineManifest } from '../manifest.js'

export const paymentLinksManifest = defineManifest({
  name: 'payment-links',
  scopes: ['payment_link:create', 'payment_link:list', 'payment_link:read', 'payment_link:update'],
  eventTypes: ['payment_link.created', 'payment_link.updated', 'payment_link.paid'],
  operations: [
    { method: 'POST', path: '/payment-links', operationId: 'paymentLinksControllerCreate', scope: 'payment_link:create' },
    { method: 'GET', path: '/payment-links', operationId: 'paymentLinksControllerFindAll', scope: 'payment_link:list' },
    { method: 'GET', path: '/payment-links/:id', operationId: 'paymentLinksControllerFindOne', scope: 'payment_link:read' },
    { method: 'PUT', path: '/payment-links/:id', operationId: 'paymentLinksControllerUpdate', scope: 'payment_link:update' },
  ],
})
