import { defineManifest } from '../manifest.js'

export const paymentLinksManifest = defineManifest({
  name: 'payment-links',
  scopes: ['payment_link:create', 'payment_link:list', 'payment_link:read', 'payment_link:update'],
  eventTypes: ['payment_link.created', 'payment_link.updated', 'payment_link.paid'],
  eventRows: [
    {
      types: ['payment_link.created', 'payment_link.updated'],
      emittedBy: '`POST /payment-links` / `PUT /payment-links/{id}` (an empty body emits none)',
      data: 'the payment link ([payment-links.md](payment-links.md))',
    },
    {
      types: ['payment_link.paid'],
      emittedBy: "a payment through the link's checkout page arrives ([checkout.md](checkout.md))",
      data: "the payment link (`payments_count` counted) and `payment`: the intent id, amount, payer's email and address, items bought",
    },
  ],
  operations: [
    { method: 'POST', path: '/payment-links', operationId: 'paymentLinksControllerCreate', scope: 'payment_link:create' },
    { method: 'GET', path: '/payment-links', operationId: 'paymentLinksControllerFindAll', scope: 'payment_link:list' },
    { method: 'GET', path: '/payment-links/:id', operationId: 'paymentLinksControllerFindOne', scope: 'payment_link:read' },
    { method: 'PUT', path: '/payment-links/:id', operationId: 'paymentLinksControllerUpdate', scope: 'payment_link:update' },
  ],
})
