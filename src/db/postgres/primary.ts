import pg from 'pg'
import { postgresHostUrls, redactUrl } from '../../config.js'

/** The pg error code of "no host of the list takes writes now": a connection exception (08), so a 503. */
export const NO_PRIMARY_CODE = '08001'

/** No host of a PostgreSQL URL's list took writes: each was unreachable or read-only (a standby). */
export class NoPrimaryError extends Error {
  readonly code = NO_PRIMARY_CODE

  constructor(readonly refusals: readonly string[]) {
    super(`no writable primary among the hosts: ${refusals.join('; ')}`)
    this.name = 'NoPrimaryError'
  }
}

/** Where a URL points, for messages: its host and port, never its password. */
function hostOf(url: string): string {
  return new URL(redactUrl(url)).host
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * Whether a connected session takes writes, as libpq's target_session_attrs=read-write asks it: a
 * standby (in recovery) and a server set read-only both answer "on".
 */
async function isWritable(client: pg.Client | pg.PoolClient): Promise<boolean> {
  const result = await client.query<{ transaction_read_only: string }>('show transaction_read_only')
  return result.rows[0]?.transaction_read_only === 'off'
}

function ignoreConnectionError(): void {}

interface Host {
  readonly name: string
  readonly pool: pg.Pool
  /** Bumped when a session of this host refused a write: its pooled sessions are checked again. */
  generation: number
}

/**
 * The pools of a PostgreSQL URL's hosts, handing out connections to the one that takes writes.
 * A new connection (or one of a host that refused a write since it was checked) is asked whether
 * it takes writes before it is handed out; a host that is unreachable or read-only is passed over
 * for the next, and the host that answered is tried first next time. So after a failover the first
 * checkout that meets the old primary's broken or read-only sessions moves on to the promoted
 * standby, without a restart. Broken connections leave their pool by themselves (pg-pool drops a
 * connection that ended); one that refused a write is dropped by its releaser (release(true)).
 */
export class PrimaryPool {
  private readonly hosts: Host[]
  private current = 0
  private readonly checked = new WeakMap<pg.PoolClient, { host: Host; generation: number }>()

  constructor(url: string, config: Omit<pg.PoolConfig, 'connectionString'>) {
    this.hosts = postgresHostUrls(url).map((hostUrl) => {
      const pool = new pg.Pool({ ...config, connectionString: hostUrl })
      // A pooled idle connection that dies emits 'error' on the pool; without a listener the
      // process would crash. The next query gets a fresh connection (or a 503 while it is down).
      pool.on('error', ignoreConnectionError)
      // pg-pool listens for a connection's errors only while it is idle, and stops before handing
      // it over: an error read then (before the caller's await resumes: ReadyForQuery and a FATAL
      // in one socket read) or while it is checked out would be an 'error' event with no listener,
      // which ends the process. 'connect' is emitted synchronously as a new connection joins the
      // pool, so this listener is there for the whole of its life. The query under way, or the
      // next one, fails by itself (503), and release() drops the broken connection from the pool.
      pool.on('connect', (client) => client.on('error', ignoreConnectionError))
      return { name: hostOf(hostUrl), pool, generation: 0 }
    })
  }

  /** A connection to the host that takes writes; NoPrimaryError (a 503) when none does. */
  async connect(): Promise<pg.PoolClient> {
    const refusals: string[] = []
    let lastError: unknown
    for (let step = 0; step < this.hosts.length; step++) {
      const index = (this.current + step) % this.hosts.length
      const host = this.hosts[index]
      if (host === undefined) continue
      let client: pg.PoolClient
      try {
        client = await host.pool.connect()
      } catch (error) {
        lastError = error
        refusals.push(`${host.name}: ${reasonOf(error)}`)
        continue
      }
      // One host has no other to choose: it is used as it is (libpq's target_session_attrs=any), and
      // a write it refuses as read-only is answered as a storage fault.
      if (this.hosts.length > 1 && this.checked.get(client)?.generation !== host.generation) {
        let writable: boolean
        try {
          writable = await isWritable(client)
        } catch (error) {
          client.release(true)
          lastError = error
          refusals.push(`${host.name}: ${reasonOf(error)}`)
          continue
        }
        if (!writable) {
          client.release(true)
          lastError = undefined
          refusals.push(`${host.name}: read-only (a standby)`)
          continue
        }
        this.checked.set(client, { host, generation: host.generation })
      }
      this.current = index
      return client
    }
    // One host: its own error, as a single-host URL has always answered.
    if (this.hosts.length === 1 && lastError !== undefined) throw lastError
    throw new NoPrimaryError(refusals)
  }

  /**
   * A session handed out by connect() refused a write as read-only: its host's other pooled
   * sessions are asked again before their next use (the caller drops this one).
   */
  refusedWrite(client: pg.PoolClient): void {
    const seen = this.checked.get(client)
    if (seen !== undefined) seen.host.generation++
  }

  async end(): Promise<void> {
    await Promise.all(this.hosts.map((host) => host.pool.end()))
  }
}

/**
 * One connection outside any pool (the LISTEN connection) to the host of the URL's list that
 * takes writes, trying each in turn; `prepare` sets up each candidate before it connects.
 * Rejects with the single host's error, or NoPrimaryError.
 */
export async function connectToPrimary(url: string, config: Omit<pg.ClientConfig, 'connectionString'>): Promise<pg.Client> {
  const hostUrls = postgresHostUrls(url)
  const refusals: string[] = []
  let lastError: unknown
  for (const hostUrl of hostUrls) {
    const client = new pg.Client({ ...config, connectionString: hostUrl })
    // Until the caller listens: a candidate that breaks must not end the process.
    client.on('error', ignoreConnectionError)
    try {
      await client.connect()
      if (hostUrls.length === 1 || (await isWritable(client))) return client
      lastError = undefined
      refusals.push(`${hostOf(hostUrl)}: read-only (a standby)`)
    } catch (error) {
      lastError = error
      refusals.push(`${hostOf(hostUrl)}: ${reasonOf(error)}`)
    }
    await client.end().catch(() => undefined)
  }
  if (hostUrls.length === 1 && lastError !== undefined) throw lastError
  throw new NoPrimaryError(refusals)
}
