/**
 * What a database error means, whichever engine raised it. The one place where SQLite's and
 * PostgreSQL's error codes are read; everything else asks these questions.
 */

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined
  const code = (error as { code: unknown }).code
  return typeof code === 'string' ? code : undefined
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : ''
}

/** A unique index refused the row (SQLite's constraint codes, PostgreSQL's 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const code = codeOf(error)
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505'
}

/** PostgreSQL aborted the transaction to break a deadlock or a serialization conflict, or for a stale plan: running it again is safe. */
export function isRetryableConflict(error: unknown): boolean {
  const code = codeOf(error)
  return code === '40P01' || code === '40001' || isStalePlan(error)
}

/**
 * PostgreSQL refused a prepared statement whose result columns a schema change altered (another
 * process migrated): the statement changed nothing, and prepared anew it runs (postgres/statements.ts).
 */
export function isStalePlan(error: unknown): boolean {
  return codeOf(error) === '0A000' && messageOf(error).includes('cached plan must not change result type')
}

/** PostgreSQL refused a write because the session is read-only (25006): a standby, or a demoted primary. */
export function isReadOnlyRefusal(error: unknown): boolean {
  return codeOf(error) === '25006'
}

/**
 * SQLite refused the statement because another connection (another process) holds a lock it needs
 * (SQLITE_BUSY and its extended codes). A statement refused so changed nothing.
 */
export function isSqliteBusy(error: unknown): boolean {
  const code = codeOf(error)
  return code === 'SQLITE_BUSY' || (code?.startsWith('SQLITE_BUSY_') ?? false)
}

// PostgreSQL SQLSTATEs that mean "not now": connection exceptions (08), insufficient resources
// (53: disk full, out of memory, too many connections), operator intervention (57: shutdown,
// cannot connect now, statement timeout), lock not available (55P03), read-only transaction
// (25006), I/O error (58030).
const POSTGRES_UNAVAILABLE = /^(08|53|57)|^55P03$|^25006$|^58030$/
// Node's socket errors on a connection to the database.
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])
// node-postgres raises these as plain Errors without a code.
const POSTGRES_CLIENT_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
]
// SQLite: another process holds the lock, the disk is full or read-only, I/O failed.
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN)/

/**
 * The database can't serve this request now, for a reason that passes (an outage, a restart,
 * a held lock, a full disk): the request is answered 503 with Retry-After, never 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = codeOf(error)
  // A transaction that met a stale plan and is not run again: its next run prepares anew.
  if (isStalePlan(error)) return true
  if (code !== undefined) {
    if (SQLITE_UNAVAILABLE.test(code) || SOCKET_ERRORS.has(code)) return true
    if (/^[0-9A-Z]{5}$/.test(code) && POSTGRES_UNAVAILABLE.test(code)) return true
  }
  const message = messageOf(error)
  return POSTGRES_CLIENT_MESSAGES.some((text) => message.includes(text))
}

// PostgreSQL SQLSTATEs that end a connection: connection exceptions (08) and operator
// intervention ending the backend (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect
// now, 57P04 database dropped, 57P05 idle session timeout).
const POSTGRES_CONNECTION_ENDED = /^08[0-9A-Z]{3}$|^57P0[1-5]$/
// ioredis's errors for a connection that is down or not answering (it reconnects by itself), and
// the Redis circuit's own (src/auth/redis-circuit.ts).
const REDIS_CONNECTION_MESSAGES = [
  'Connection is closed.',
  "Stream isn't writeable and enableOfflineQueue options is false",
  'Command timed out',
  'Command aborted due to connection close',
]
const REDIS_CONNECTION_ERROR_NAMES = new Set(['MaxRetriesPerRequestError', 'RedisUnavailableError'])

/**
 * A connection to a backend (PostgreSQL or Redis) broke, was refused or timed out, or its server
 * ended it (a terminated backend, a shutdown, a failover). The connection is dropped and the next
 * use opens another, so the process is sound: what the last-resort handler (src/uncaught.ts)
 * logs and lives through when such an error escaped every other handler. Node's socket errors count
 * whichever socket they came from: the process's only other sockets are its HTTP server's and its
 * webhook requests', whose errors are all handled where they arise.
 */
export function isBackendConnectionFault(error: unknown): boolean {
  const code = codeOf(error)
  if (code !== undefined && (SOCKET_ERRORS.has(code) || POSTGRES_CONNECTION_ENDED.test(code))) return true
  if (error instanceof Error && REDIS_CONNECTION_ERROR_NAMES.has(error.name)) return true
  const message = messageOf(error)
  return POSTGRES_CLIENT_MESSAGES.some((text) => message.includes(text)) || REDIS_CONNECTION_MESSAGES.includes(message)
}

/**
 * The database was closed under the statement (Kysely's driver destroyed, better-sqlite3's
 * connection closed): only ever while the server stops, for a request it did not wait for.
 */
export function isDatabaseClosed(error: unknown): boolean {
  const message = messageOf(error)
  return message.includes('driver has already been destroyed') || message.includes('The database connection is not open')
}

// Storage that can't take writes now: full (SQLite FULL, PostgreSQL 53100), read-only (SQLite
// READONLY, PostgreSQL 25006), failing (SQLite IOERR/CANTOPEN, PostgreSQL 58030).
const STORAGE_FAULTS = /^SQLITE_(FULL|READONLY|IOERR|CANTOPEN)|^53100$|^25006$|^58030$/

/** A database-unavailable fault whose cause is the storage (full, read-only, failing), not the connection or a lock. */
export function isStorageFault(error: unknown): boolean {
  const code = codeOf(error)
  return code !== undefined && STORAGE_FAULTS.test(code)
}
