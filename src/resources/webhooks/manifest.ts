import { defineManifest } from '../manifest.js'

export const webhooksManifest = defineManifest({
  name: 'webhooks',
  scopes: ['webhook:create', 'webhook:read', 'webhook:update', 'webhook:delete'],
  eventTypes: ['webhook.created', 'webhook.updated', 'webhook.test'],
  eventRows: [
    {
      types: ['webhook.created', 'webhook.updated'],
      emittedBy: '`POST /webhooks` / `PATCH /webhooks/{id}`, `POST /webhooks/{id}/secret/rotate`',
      data: 'the webhook (never its secret)',
    },
    {
      types: ['webhook.test'],
      emittedBy: '`POST /webhooks/{id}/test`: to that webhook only',
      data: 'the webhook',
    },
  ],
  operations: [
    { method: 'POST', path: '/webhooks', operationId: 'webhookControllerCreate', scope: 'webhook:create' },
    { method: 'GET', path: '/webhooks', operationId: 'webhookControllerFindAll', scope: 'webhook:read' },
    { method: 'GET', path: '/webhooks/:id', operationId: 'webhookControllerFindOne', scope: 'webhook:read' },
    { method: 'PATCH', path: '/webhooks/:id', operationId: 'webhookControllerUpdate', scope: 'webhook:update' },
    { method: 'DELETE', path: '/webhooks/:id', operationId: 'webhookControllerRemove', scope: 'webhook:delete' },
    { method: 'GET', path: '/webhooks/:id/secret', operationId: 'webhookControllerGetSecret', scope: 'webhook:read' },
    { method: 'POST', path: '/webhooks/:id/secret/rotate', operationId: 'webhookControllerRotateSecret', scope: 'webhook:update' },
    { method: 'GET', path: '/webhooks/:id/deliveries', operationId: 'webhookControllerFindDeliveries', scope: 'webhook:read' },
    { method: 'GET', path: '/webhooks/:id/deliveries/:deliveryId', operationId: 'webhookControllerFindDelivery', scope: 'webhook:read' },
    { method: 'POST', path: '/webhooks/:id/deliveries/:deliveryId/retry', operationId: 'webhookControllerRetryDelivery', scope: 'webhook:update' },
    { method: 'POST', path: '/webhooks/:id/test', operationId: 'webhookControllerSendTest', scope: 'webhook:update' },
  ],
})
