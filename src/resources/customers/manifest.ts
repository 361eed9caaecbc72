import { defineManifest } from '../manifest.js'

export const customersManifest = defineManifest({
  name: 'customers',
  scopes: ['customer:create', 'customer:read', 'customer:update'],
  eventTypes: ['customer.created', 'customer.updated'],
  eventRows: [
    {
      types: ['customer.created', 'customer.updated'],
      emittedBy: '`POST /customers` / `PATCH /customers/{id}`',
      data: 'the customer',
    },
  ],
  operations: [
    { method: 'POST', path: '/customers', operationId: 'customerControllerCreate', scope: 'customer:create' },
    { method: 'GET', path: '/customers', operationId: 'customerControllerFindAll', scope: 'customer:read' },
    { method: 'GET', path: '/customers/:id', operationId: 'customerControllerFindOne', scope: 'customer:read' },
    { method: 'PATCH', path: '/customers/:id', operationId: 'customerControllerUpdate', scope: 'customer:update' },
  ],
})
