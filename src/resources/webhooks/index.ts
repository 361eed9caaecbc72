import type { Resource } from '../resource.js'
import { webhooksManifest } from './manifest.js'
import { webhookRoutes } from './routes.js'

export const webhooks: Resource = { manifest: webhooksManifest, routes: webhookRoutes }
