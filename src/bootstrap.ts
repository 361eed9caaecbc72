import { sql } from 'kysely'
import { DEFAULT_SCOPES } from './resources/index.js'
import { backendOf, type Db, writeTransaction } from './db/database.js'
import { AppsRepository, type CreatedApiKey } from './apps/repository.js'

/**
 * On an empty database outside production, creates a development application with a
 * development key (every scope but the opt-in ones) so a fresh checkout can be tried at once. Returns the key
 * (with its secret, shown this once) or undefined when nothing was created. Several instances
 * starting at once on one empty PostgreSQL database create one between them: the check and the
 * creation run under one transaction-scoped advisory lock (SQLite: under its write lock).
 */
export async function ensureDevelopmentKey(db: Db, nodeEnv: string): Promise<CreatedApiKey | undefined> {
  if (nodeEnv === 'production') return undefined
  return writeTransaction(db, async (tx) => {
    if (backendOf(tx) === 'postgres') await sql`select pg_advisory_xact_lock(hashtext('devplatform: development key'))`.execute(tx)
    const apps = new AppsRepository(tx)
    if ((await apps.countApps()) > 0) return undefined
    const app = await apps.createApp('Development')
    return apps.createKey({ appId: app.id, environment: 'development', scopes: DEFAULT_SCOPES, rateLimitOverride: null })
  })
}
