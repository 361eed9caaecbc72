import { defineManifest, PUBLIC } from '../manifest.js'

export const productsManifest = defineManifest({
  name: 'products',
  scopes: ['product:create', 'product:list', 'product:read', 'product:update', 'product:delete'],
  eventTypes: ['product.created', 'product.updated', 'product.deleted'],
  eventRows: [
    {
      types: ['product.created', 'product.updated', 'product.deleted'],
      emittedBy: '`POST /products` / `PUT /products/{id}`, `POST /products/{id}/images` / `DELETE /products/{id}`',
      data: 'the product',
    },
  ],
  operations: [
    { method: 'POST', path: '/products', operationId: 'productControllerCreate', scope: 'product:create' },
    { method: 'GET', path: '/products', operationId: 'productControllerFindAll', scope: 'product:list' },
    { method: 'GET', path: '/products/:id', operationId: 'productControllerFindOne', scope: 'product:read' },
    { method: 'PUT', path: '/products/:id', operationId: 'productControllerUpdate', scope: 'product:update' },
    { method: 'DELETE', path: '/products/:id', operationId: 'productControllerRemove', scope: 'product:delete' },
    { method: 'POST', path: '/products/:id/images', operationId: 'productControllerUploadImage', scope: 'product:update' },
    // An uploaded image's bytes: public, so a checkout page or a shop can show it; its id is random.
    { method: 'GET', path: '/products/:id/images/:imageId', operationId: 'productControllerGetImage', scope: PUBLIC },
  ],
})
