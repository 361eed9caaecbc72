import { type AppsRepository, type KeyCredentials, NOT_AT_ONCE } from '../apps/repository.js'
import { hourlyLimitOf } from '../keys/credentials.js'
import type { AuthContext } from './context.js'

/** A key as each of its requests uses it: its row, and what is derived from it, made once per change of the row. */
export class KnownKey {
  readonly scopes: ReadonlySet<string>
  readonly limit: number
  /** every request of the key gets this one object as its caller (frozen) */
  readonly auth: AuthContext
  /** epoch ms from which the key is refused (Infinity: never) */
  private readonly expiresAtMs: number
  /** epoch ms until which the secret a rotation replaced still works (0: none) */
  private readonly previousUntilMs: number
  private policy = { windowSeconds: 0, header: '' }

  constructor(readonly credentials: KeyCredentials) {
    this.scopes = new Set(credentials.scopes)
    this.limit = hourlyLimitOf(credentials)
    this.auth = Object.freeze({ appId: credentials.app_id, keyId: credentials.id, environment: credentials.environment, scopes: Object.freeze([...credentials.scopes]) })
    this.expiresAtMs = credentials.expires_at === null ? Number.POSITIVE_INFINITY : Date.parse(credentials.expires_at)
    this.previousUntilMs = credentials.previous_secret_digest === null || credentials.previous_secret_expires_at === null ? 0 : Date.parse(credentials.previous_secret_expires_at)
  }

  /**
   * Whether the key has expired at `nowMs`. Asked on every request, not only when the row changes:
   * the clock passes an expiry without any write.
   */
  expired(nowMs: number): boolean {
    return nowMs >= this.expiresAtMs
  }

  /** The digest of the secret a rotation replaced, while it still works at `nowMs`. */
  previousDigest(nowMs: number): string | undefined {
    return nowMs < this.previousUntilMs ? (this.credentials.previous_secret_digest ?? undefined) : undefined
  }

  /** The RateLimit-Policy header of the key's limit in a window of `windowSeconds`. */
  policyHeader(windowSeconds: number): string {
    if (this.policy.windowSeconds !== windowSeconds) this.policy = { windowSeconds, header: `"hour";q=${this.limit};w=${windowSeconds}` }
    return this.policy.header
  }

  /** Whether `credentials` is this key's row unchanged. */
  isRow(credentials: KeyCredentials): boolean {
    const mine = this.credentials
    return (
      mine.id === credentials.id &&
      mine.app_id === credentials.app_id &&
      mine.secret_digest === credentials.secret_digest &&
      mine.previous_secret_digest === credentials.previous_secret_digest &&
      mine.previous_secret_expires_at === credentials.previous_secret_expires_at &&
      mine.expires_at === credentials.expires_at &&
      mine.active === credentials.active &&
      mine.environment === credentials.environment &&
      mine.rate_limit_override === credentials.rate_limit_override &&
      mine.scopes.length === credentials.scopes.length &&
      mine.scopes.every((scope, i) => credentials.scopes[i] === scope)
    )
  }
}

/** Keys remembered at most; past it, the one remembered first is forgotten. */
const MAX_KNOWN = 100_000

/**
 * The keys of the requests, each as the database holds it when its request is checked, so a key
 * deactivated by any process (the CLI, another instance) is refused on the next request, without
 * a statement per request for the key:
 *
 * - SQLite: a key read once is used as long as the keys' version (AppsRepository.keysVersion:
 *   SQLite's data_version, which moves with every other connection's commit, and this process's
 *   own key changes) has not moved since it was read; a moved version has the key read again. The
 *   version is read at once on every request: cheaper than the key's statement and its row.
 * - PostgreSQL: the keys of the requests that arrived while one read was under way are read
 *   together, in one statement sent after they all arrived: every request still sees its key as
 *   committed when it arrived, and a busy server sends one statement for many requests.
 *
 * Only keys that exist are remembered (an unknown key is read again each time), so guessed keys
 * cost no memory.
 */
export class KnownKeys {
  private readonly known = new Map<string, { key: KnownKey; version: number | undefined }>()
  /** PostgreSQL: the client keys of the read not sent yet, and its answer */
  private next: Batch | undefined
  private reading = false

  constructor(private readonly apps: AppsRepository) {}

  /** The key as the database holds it now (undefined: no such key): at once when that can be told without waiting. */
  current(clientKey: string): KnownKey | undefined | Promise<KnownKey | undefined> {
    const version = this.apps.keysVersion()
    if (version === undefined) return this.readTogether(clientKey)
    const entry = this.known.get(clientKey)
    if (entry !== undefined && entry.version === version) return entry.key
    // Read after the version was taken: a change committed meanwhile moves the version again.
    const row = this.apps.findCredentialsAtOnce(clientKey)
    if (row === NOT_AT_ONCE) return this.apps.findCredentials(clientKey).then((credentials) => this.remember(clientKey, credentials, version))
    return this.remember(clientKey, row, version)
  }

  /** The key as it was last read (it may have changed since), or undefined: only to start on what `current` will confirm. */
  lastRead(clientKey: string): KnownKey | undefined {
    return this.known.get(clientKey)?.key
  }

  private remember(clientKey: string, credentials: KeyCredentials | undefined, version: number | undefined): KnownKey | undefined {
    const entry = this.known.get(clientKey)
    if (credentials === undefined) {
      this.known.delete(clientKey)
      return undefined
    }
    if (entry !== undefined && entry.key.isRow(credentials)) {
      entry.version = version
      return entry.key
    }
    if (entry === undefined && this.known.size >= MAX_KNOWN) {
      const first = this.known.keys().next()
      if (first.done !== true) this.known.delete(first.value)
    }
    const key = new KnownKey(credentials)
    this.known.set(clientKey, { key, version })
    return key
  }

  /**
   * The key, read in the next statement not sent yet, together with the keys of every request that
   * arrives before it is sent: at the end of this turn of the event loop when no read is under
   * way, else when the one under way has answered.
   */
  private readTogether(clientKey: string): Promise<KnownKey | undefined> {
    let batch = this.next
    if (batch === undefined) {
      batch = new Batch()
      this.next = batch
      if (!this.reading) setImmediate(() => this.send())
    }
    batch.clientKeys.add(clientKey)
    return batch.rows.then((rows) => this.remember(clientKey, rows.get(clientKey), undefined))
  }

  private send(): void {
    const batch = this.next
    if (batch === undefined || this.reading) return
    this.next = undefined
    this.reading = true
    this.apps.findCredentialsOf([...batch.clientKeys]).then(
      (rows) => {
        this.reading = false
        batch.answer(new Map(rows.map((row) => [row.client_key, row])))
        this.send()
      },
      (error: unknown) => {
        this.reading = false
        batch.fail(error)
        this.send()
      },
    )
  }
}

/** One statement's worth of client keys, and its rows by client key once read. */
class Batch {
  readonly clientKeys = new Set<string>()
  readonly rows: Promise<Map<string, KeyCredentials>>
  answer!: (rows: Map<string, KeyCredentials>) => void
  fail!: (error: unknown) => void

  constructor() {
    this.rows = new Promise((resolve, reject) => {
      this.answer = resolve
      this.fail = reject
    })
  }
}
