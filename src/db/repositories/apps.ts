import { CompiledQuery } from 'kysely'
import type { Environment } from '../../keys/credentials.js'
import { generateKeyPair } from '../../keys/credentials.js'
import { backendOf, type Db } from '../database.js'
import { PreparedQuery } from '../prepared.js'
import type { ApiKeysTable } from '../schema.js'
import { dataVersionOf, readNow } from '../sqlite/open.js'
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

/** A key's row looked up by its client key: built once (PreparedQuery). */
const FIND_CREDENTIALS = new PreparedQuery<ApiKeysTable>(1, (db, clientKey) => db.selectFrom('api_keys').selectAll().where('client_key', '=', clientKey))

/** PostgreSQL: the rows of several client keys in one statement, whatever their number (one array parameter). */
const POSTGRES_CREDENTIALS_OF = 'select * from api_keys where client_key = any($1)'

/**
 * Changes to keys made by this process: SQLite's data_version counts only other connections'
 * commits, so a key this process changes (through this repository) is counted here, after the
 * change is committed.
 */
let keyChangesHere = 0

/** findCredentialsAtOnce: the key must be read through findCredentials instead. */
export const NOT_AT_ONCE = Symbol('not at once')

/** Applications and their API keys: operator-side, used by the CLI, start-up and the auth hook. */
export class AppsRepository {
  /** keysVersion's counts when it last looked, and the version it answered */
  private readonly seen = { dataVersion: 0, keyChangesHere: 0, version: 0 }

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
    keyChangesHere++
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

  /**
   * SQLite: the key's row read at once, when the connection is free and nothing has to be waited
   * for (readNow); NOT_AT_ONCE when it must be read through findCredentials. PostgreSQL: always
   * NOT_AT_ONCE.
   */
  findCredentialsAtOnce(clientKey: string): KeyCredentials | undefined | typeof NOT_AT_ONCE {
    const rows = readNow(this.db, FIND_CREDENTIALS.bind(this.db, clientKey))
    if (rows === undefined) return NOT_AT_ONCE
    const [row] = rows
    return row === undefined ? undefined : toApiKey(row)
  }

  /** The keys of several client keys in one statement (those that exist). */
  async findCredentialsOf(clientKeys: readonly string[]): Promise<KeyCredentials[]> {
    if (backendOf(this.db) === 'postgres') {
      const { rows } = await this.db.executeQuery<ApiKeysTable>(CompiledQuery.raw(POSTGRES_CREDENTIALS_OF, [clientKeys]))
      return rows.map(toApiKey)
    }
    const found: KeyCredentials[] = []
    for (const clientKey of clientKeys) {
      const key = await this.findCredentials(clientKey)
      if (key !== undefined) found.push(key)
    }
    return found
  }

  /**
   * SQLite: a number that changes whenever a key may have changed since it was last taken: a commit
   * of another connection (SQLite's data_version) or a key changed by this process. Taken before a
   * key is read, it tells later whether what was read may have changed since. Undefined on
   * PostgreSQL, and when SQLite cannot tell at once (another process's lock).
   */
  keysVersion(): number | undefined {
    const dataVersion = dataVersionOf(this.db)
    if (dataVersion === undefined) return undefined
    if (dataVersion !== this.seen.dataVersion || keyChangesHere !== this.seen.keyChangesHere) {
      this.seen.dataVersion = dataVersion
      this.seen.keyChangesHere = keyChangesHere
      this.seen.version++
    }
    return this.seen.version
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
      keyChangesHere++
    }
    return { ...publicKey(toApiKey(row)), active: false }
  }
}
