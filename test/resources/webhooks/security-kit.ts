import { webhooksManifest } from '../../../src/resources/webhooks/manifest.js'
import { created, defineSecurityKit } from '../../auth/security-kit.js'

const notFound = 'Webhook not found'

export const securityKit = defineSecurityKit(webhooksManifest, {
  /** a webhook, and its own webhook.created delivery, ended (failed) so it can be resent */
  async fixtures({ server, key }) {
    // One active webhook at a time: past INLINE_FANOUT_MAX active webhooks an event's deliveries wait
    // for a dispatcher's fan-out (none runs here), and the delivery taken below would not exist yet.
    await server.app.db.updateTable('webhooks').set({ is_active: 0 }).where('app_id', '=', key.appId).execute()
    const webhook = await created(server, key, '/api/v0/webhooks', { name: 'w', url: 'https://example.com/h' })
    // No dispatcher here: end the webhook's own webhook.created delivery as a failed one would end.
    const delivery = await server.app.db.updateTable('deliveries').set({ status: 'failed', attempts: 1 }).where('webhook_id', '=', webhook).returning('id').executeTakeFirstOrThrow()
    return { webhook, delivery: delivery.id }
  },
  params: { id: 'webhook', deliveryId: 'delivery' },
  operations: {
    webhookControllerCreate: { body: () => ({ name: 'w', url: 'https://example.com/hook' }) },
    webhookControllerFindOne: { tenancy: { notFound, readBack: 'webhookControllerFindOne' } },
    webhookControllerUpdate: { body: () => ({ name: 'x' }), tenancy: { notFound, readBack: 'webhookControllerFindOne' } },
    webhookControllerRemove: { tenancy: { notFound, readBack: 'webhookControllerFindOne' } },
    webhookControllerGetSecret: { tenancy: { notFound, readBack: 'webhookControllerGetSecret' } },
    webhookControllerRotateSecret: { tenancy: { notFound, readBack: 'webhookControllerGetSecret' } },
    webhookControllerFindDeliveries: { tenancy: { notFound, readBack: 'webhookControllerFindDelivery' } },
    webhookControllerFindDelivery: { tenancy: { notFound, readBack: 'webhookControllerFindDelivery' } },
    webhookControllerRetryDelivery: { tenancy: { notFound, readBack: 'webhookControllerFindDelivery' } },
    webhookControllerSendTest: { tenancy: { notFound, readBack: 'webhookControllerFindOne' } },
  },
})
