import { SCOPES } from './auth/scopes.js'
import type { AppsRepository, CreatedApiKey } from './db/repositories/apps.js'

/**
 * On an empty database outside production, creates a development application with a
 * development key (all scopes) so a fresh checkout can be tried at once. Returns the key
 * (with its secret, shown this once) or undefined when nothing was created.
 */
export async function ensureDevelopmentKey(apps: AppsRepository, nodeEnv: string): Promise<CreatedApiKey | undefined> {
  if (nodeEnv === 'production' || (await apps.countApps()) > 0) return undefined
  const app = await apps.createApp('Development')
  return apps.createKey({ appId: app.id, environment: 'development', scopes: SCOPES, rateLimitOverride: null })
}
