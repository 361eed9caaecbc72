import { defineManifest } from '../manifest.js'

export const invoicesManifest = defineManifest({
  name: 'invoices',
  scopes: ['invoice:create', 'invoice:list', 'invoice:read', 'invoice:update'],
  eventTypes: ['invoice.created', 'invoice.updated', 'invoice.paid'],
  operations: [
    { method: 'POST', path: '/invoices', operationId: 'invoiceControllerCreate', scope: 'invoice:create' },
    { method: 'GET', path: '/invoices', operationId: 'invoiceControllerFindAll', scope: 'invoice:list' },
    { method: 'GET', path: '/invoices/:id', operationId: 'invoiceControllerFindOne', scope: 'invoice:read' },
    { method: 'PUT', path: '/invoices/:id', operationId: 'invoiceControllerUpdate', scope: 'invoice:update' },
  ],
})
