import { CompiledQuery } from 'kysely'
import type { Environment } from '../keys/credentials.js'
import { generateKeyPair, generateSecret } from '../keys/credentials.js'
import { backendOf, type Db } from '../db/database.js'
import { PreparedQuery } from '../db/prepared.js'
import type { ApiKeysTable } from './tables.js'
import { queryOnce } from '../db/postgres/open.js'
import { dataVersionOf } from '../db/sqlite/open.js'
import { isoOf, newId, nowIso } from '../db/time.js'
import type { UnitOfWork } from '../db/unit-of-work.js'

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
  /** refused from then on; null: never */
  expires_at: string | null
  /** while set, the secret a rotation replaced still works, until then */
  previous_secret_expires_at: string | null
}

export interface CreatedApiKey extends ApiKey {
  client_secret: string
}

/** What the auth hook needs to verify a request: the stored row for a client key. */
export interface KeyCredentials extends ApiKey {
  secret_digest: string
  previous_secret_digest: string | null
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
    expires_at: row.expires_at,
    previous_secret_expires_at: row.previous_secret_expires_at,
    secret_digest: row.secret_digest,
    previous_secret_digest: row.previous_secret_digest,
  }
}

function publicKey({ secret_digest: _digest, previous_secret_digest: _previous, ...key }: KeyCredentials): ApiKey {
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

  /** `unit` is given inside a write transaction: a key changed there counts once it has committed */
  constructor(
    private readonly db: Db,
    private readonly unit?: UnitOfWork,
  ) {}

  async createApp(name: string): Promise<App> {
    const app = { id: newId(), name, created_at: nowIso() }
    await this.db.insertInto('apps').values(app).execute()
    return app
  }

  /** The applications not deleted. */
  async listApps(): Promise<App[]> {
    return this.db.selectFrom('apps').select(['id', 'name', 'created_at']).where('deleted_at', 'is', null).orderBy('created_at').orderBy('id').execute()
  }

  /** The application, unless it is deleted. */
  async findApp(id: string): Promise<App | undefined> {
    return this.db.selectFrom('apps').select(['id', 'name', 'created_at']).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst()
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
      previous_secret_digest: null,
      previous_secret_expires_at: null,
      expires_at: null,
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
    const rows = FIND_CREDENTIALS.rowsAtOnce(this.db, clientKey)
    if (rows === undefined) return NOT_AT_ONCE
    const [row] = rows
    return row === undefined ? undefined : toApiKey(row)
  }

  /** The keys of several client keys in one statement (those that exist). */
  async findCredentialsOf(clientKeys: readonly string[]): Promise<KeyCredentials[]> {
    if (backendOf(this.db) === 'postgres') {
      const query = CompiledQuery.raw(POSTGRES_CREDENTIALS_OF, [clientKeys])
      const rows = await (queryOnce<ApiKeysTable>(this.db, query) ?? this.db.executeQuery<ApiKeysTable>(query).then((result) => result.rows))
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

  /** A key by its client key or id, deactivated or not. */
  async findKey(clientKeyOrId: string): Promise<ApiKey | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where((eb) => eb.or([eb('client_key', '=', clientKeyOrId), eb('id', '=', clientKeyOrId)]))
      .executeTakeFirst()
    return row === undefined ? undefined : publicKey(toApiKey(row))
  }

  /**
   * A new secret for an active key (undefined when it is not active). The secret it replaces keeps
   * working for `graceMs` (none at 0); a secret an earlier rotation replaced stops at once, as only
   * one previous secret is kept. SET reads the row's old values on both backends.
   */
  async rotateSecret(keyId: string, graceMs: number): Promise<CreatedApiKey | undefined> {
    const key = await this.findKey(keyId)
    if (key === undefined) return undefined
    const secret = generateSecret(key.environment)
    const row = await this.db
      .updateTable('api_keys')
      .set((eb) => ({
        secret_digest: secret.secretDigest,
        previous_secret_digest: graceMs > 0 ? eb.ref('secret_digest') : null,
        previous_secret_expires_at: graceMs > 0 ? isoOf(Date.now() + graceMs) : null,
      }))
      .where('id', '=', keyId)
      .where('active', '=', 1)
      .returningAll()
      .executeTakeFirst()
    if (row === undefined) return undefined
    this.keysChanged()
    return { ...publicKey(toApiKey(row)), client_secret: secret.clientSecret }
  }

  /** Sets when an active key stops working (null: never); undefined when it is not active. */
  async setExpiry(keyId: string, expiresAt: string | null): Promise<ApiKey | undefined> {
    return this.changeActiveKey(keyId, { expires_at: expiresAt })
  }

  /** Replaces an active key's scopes; undefined when it is not active. */
  async setScopes(keyId: string, scopes: readonly string[]): Promise<ApiKey | undefined> {
    return this.changeActiveKey(keyId, { scopes: JSON.stringify(scopes) })
  }

  private async changeActiveKey(keyId: string, changes: { expires_at: string | null } | { scopes: string }): Promise<ApiKey | undefined> {
    const row = await this.db.updateTable('api_keys').set(changes).where('id', '=', keyId).where('active', '=', 1).returningAll().executeTakeFirst()
    if (row === undefined) return undefined
    this.keysChanged()
    return publicKey(toApiKey(row))
  }

  /**
   * The application, deleted or not, locked (PostgreSQL: FOR UPDATE) until the transaction ends,
   * so two deletions of one application take turns.
   */
  async lockApp(id: string): Promise<(App & { deleted_at: string | null }) | undefined> {
    let query = this.db.selectFrom('apps').select(['id', 'name', 'created_at', 'deleted_at']).where('id', '=', id)
    if (backendOf(this.db) === 'postgres') query = query.forUpdate()
    return query.executeTakeFirst()
  }

  /**
   * Deletes the application's keys (refused from the next request on: an unknown key) and marks it
   * deleted (its first deletion's time is kept). Returns how many keys it deleted.
   */
  async deleteApp(id: string): Promise<number> {
    const deleted = await this.db.deleteFrom('api_keys').where('app_id', '=', id).executeTakeFirst()
    await this.db.updateTable('apps').set({ deleted_at: nowIso() }).where('id', '=', id).where('deleted_at', 'is', null).execute()
    this.keysChanged()
    return Number(deleted.numDeletedRows)
  }

  /** A key changed here: counted now, or once the transaction it was changed in has committed. */
  private keysChanged(): void {
    if (this.unit === undefined) keyChangesHere++
    else
      this.unit.afterCommit(async () => {
        keyChangesHere++
      })
  }
}
