import { defineResource } from '../resource.js'
import { webhooksManifest } from './manifest.js'
import { webhooksMigrations } from './migrations.js'
import { webhookRoutes, type WebhookRoutesOptions } from './routes.js'
import { WebhookSchema } from './schemas.js'
import { webhooksTables } from './tables.js'

export const webhooks = defineResource({
  manifest: webhooksManifest,
  configure: ({ urlAddressProblem, eventTypes }): WebhookRoutesOptions => ({ urlAddressProblem, eventTypes }),
  tables: webhooksTables,
  migrations: webhooksMigrations,
  routes: webhookRoutes,
  // The webhook as the API answers it: never its signing secret.
  events: { 'webhook.created': WebhookSchema, 'webhook.updated': WebhookSchema, 'webhook.test': WebhookSchema },
})
