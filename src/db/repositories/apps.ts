import type { Environment } from '../../keys/credentials.js'
import { generateKeyPair } from '../../keys/credentials.js'
import type { Db } from '../database.js'
import { PreparedQuery } from '../prepared.js'
import type { ApiKeysTable } from '../schema.js'
import { newId, nowIso } from '../time.js'

export interface App {
  id: string
  name: string
  created_at: string
}

export interface ApiKey {
  id: string
  app_id: string
  client_key: string
  environment: Environment
  scopes: string[]
  /** the operator's override, or null for the environment's limit */
  rate_limit_override: number | null
  active: boolean
  created_at: string
}

export interface CreatedApiKey extends ApiKey {
  client_secret: string
}

/** What the auth hook needs to verify a request: the stored row for a client key. */
export interface KeyCredentials extends ApiKey {
  secret_digest: string
}

function toApiKey(row: ApiKeysTable): KeyCredentials {
  return {
    id: row.id,
    app_id: row.app_id,
    client_key: row.client_key,
    environment: row.environment,
    scopes: JSON.parse(row.scopes) as string[],
    rate_limit_override: row.rate_limit_per_hour,
    active: row.active === 1,
    created_at: row.created_at,
    secret_digest: row.secret_digest,
  }
}

function publicKey({ secret_digest: _digest, ...key }: KeyCredentials): ApiKey {
  return key
}

/** Every authenticated request looks its key up: built once (PreparedQuery). */
const FIND_CREDENTIALS = new PreparedQuery<ApiKeysTable>(1, (db, clientKey) => db.selectFrom('api_keys').selectAll().where('client_key', '=', clientKey))

/** Applications and their API keys: operator-side, used by the CLI, start-up and the auth hook. */
export class AppsRepository {
  constructor(private readonly db: Db) {}

  async createApp(name: string): Promise<App> {
    const app = { id: newId(), name, created_at: nowIso() }
    await this.db.insertInto('apps').values(app).execute()
    return app
  }

  async listApps(): Promise<App[]> {
    return this.db.selectFrom('apps').selectAll().orderBy('created_at').orderBy('id').execute()
  }

  async findApp(id: string): Promise<App | undefined> {
    return this.db.selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst()
  }

  async countApps(): Promise<number> {
    const row = await this.db.selectFrom('apps').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    return Number(row.n)
  }

  async createKey(input: {
    appId: string
    environment: Environment
    scopes: readonly string[]
    rateLimitOverride: number | null
  }): Promise<CreatedApiKey> {
    const pair = generateKeyPair(input.environment)
    const row: ApiKeysTable = {
      id: newId(),
      app_id: input.appId,
      client_key: pair.clientKey,
      secret_digest: pair.secretDigest,
      environment: input.environment,
      scopes: JSON.stringify(input.scopes),
      rate_limit_per_hour: input.rateLimitOverride,
      active: 1,
      created_at: nowIso(),
      deactivated_at: null,
    }
    await this.db.insertInto('api_keys').values(row).execute()
    return { ...publicKey(toApiKey(row)), client_secret: pair.clientSecret }
  }

  async listKeys(appId: string): Promise<ApiKey[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().where('app_id', '=', appId).orderBy('created_at').orderBy('id').execute()
    return rows.map((row) => publicKey(toApiKey(row)))
  }

  async findCredentials(clientKey: string): Promise<KeyCredentials | undefined> {
    const row = await FIND_CREDENTIALS.executeTakeFirst(this.db, clientKey)
    return row === undefined ? undefined : toApiKey(row)
  }

  /** Deactivates by client key or id; undefined when neither matches. Idempotent. */
  async deactivateKey(clientKeyOrId: string): Promise<ApiKey | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where((eb) => eb.or([eb('client_key', '=', clientKeyOrId), eb('id', '=', clientKeyOrId)]))
      .executeTakeFirst()
    if (row === undefined) return undefined
    if (row.active === 1) {
      await this.db.updateTable('api_keys').set({ active: 0, deactivated_at: nowIso() }).where('id', '=', row.id).execute()
    }
    return { ...publicKey(toApiKey(row)), active: false }
  }
}
