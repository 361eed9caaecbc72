import { defineManifest } from '../manifest.js'

export const invoicesManifest = defineManifest({
  name: 'invoices',
  scopes: ['invoice:create', 'invoice:list', 'invoice:read', 'invoice:update'],
  eventTypes: ['invoice.created', 'invoice.updated', 'invoice.paid'],
  eventRows: [
    {
      types: ['invoice.created', 'invoice.updated'],
      emittedBy: '`POST /invoices` / `PUT /invoices/{id}` (a PUT that changes nothing emits none)',
      data: 'the invoice ([invoices.md](invoices.md))',
    },
    {
      types: ['invoice.paid'],
      emittedBy: "a payment through the invoice's checkout page pays what is left due (a part payment emits `invoice.updated`, `PARTIALLYPAID`)",
      data: 'the invoice, `PAID`, and `payment` as for `payment_link.paid`',
    },
  ],
  operations: [
    { method: 'POST', path: '/invoices', operationId: 'invoiceControllerCreate', scope: 'invoice:create' },
    { method: 'GET', path: '/invoices', operationId: 'invoiceControllerFindAll', scope: 'invoice:list' },
    { method: 'GET', path: '/invoices/:id', operationId: 'invoiceControllerFindOne', scope: 'invoice:read' },
    { method: 'PUT', path: '/invoices/:id', operationId: 'invoiceControllerUpdate', scope: 'invoice:update' },
  ],
})
