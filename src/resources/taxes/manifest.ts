import { defineManifest, PUBLIC } from '../manifest.js'

export const taxesManifest = defineManifest({
  name: 'taxes',
  scopes: ['tax:create', 'tax:read', 'tax:update', 'tax:delete'],
  eventTypes: ['tax.created', 'tax.updated', 'tax.deleted'],
  eventRows: [
    {
      types: ['tax.created', 'tax.updated', 'tax.deleted'],
      emittedBy: '`POST /taxes` / `PUT /taxes/{id}` / `DELETE /taxes/{id}`',
      data: 'the tax',
    },
  ],
  operations: [
    { method: 'POST', path: '/taxes', operationId: 'taxControllerCreate', scope: 'tax:create' },
    { method: 'GET', path: '/taxes', operationId: 'taxControllerFindAll', scope: 'tax:read' },
    { method: 'GET', path: '/taxes/:id', operationId: 'taxControllerFindOne', scope: 'tax:read' },
    { method: 'PUT', path: '/taxes/:id', operationId: 'taxControllerUpdate', scope: 'tax:update' },
    { method: 'DELETE', path: '/taxes/:id', operationId: 'taxControllerRemove', scope: 'tax:delete' },
    // Without an id: always 400 with the contract's message, before authentication.
    { method: 'PUT', path: '/taxes', operationId: 'taxControllerUpdateWithoutId', scope: PUBLIC },
    { method: 'DELETE', path: '/taxes', operationId: 'taxControllerDeleteWithoutId', scope: PUBLIC },
  ],
})
