import { fileURLToPath } from 'node:url'
import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { readSnapshot } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { isSqliteBusy } from '../../src/db/errors.js'
import { dropFreshDatabases } from '../backend.js'
import { type ApiResponse, startTestServer, type TestKey, type TestServer } from '../helper.js'
import { CLI, cleanUp, exitWithin, freshDb, launch, type Running, SERVER } from '../processes.js'

const LOCK_HOLDER = fileURLToPath(new URL('../fixtures/sqlite-lock-holder.mjs', import.meta.url))

/** The servers here wait this long for a lock before answering 503 (the default is 5 s). */
const LOCK_WAIT_MS = 2_000
/** A lock released this long after a write started: well within LOCK_WAIT_MS. */
const RELEASED_WITHIN_MS = 1_000

const DATABASE_DOWN = { statusCode: 503, error: 'Service Unavailable', message: 'The database is unavailable', details: 'Retry the request shortly' }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

afterAll(async () => {
  cleanUp()
  await dropFreshDatabases()
})

interface HeldLock {
  release(): Promise<void>
}

/** Another process takes a lock on the SQLite file and holds it until release() (see the fixture). */
async function holdLock(file: string, mode: 'immediate' | 'exclusive', options: { wal?: boolean } = {}): Promise<HeldLock> {
  const holder: Running = launch(LOCK_HOLDER, [file, mode, ...(options.wal === true ? ['wal'] : [])], {})
  await holder.waitFor(/^held$/m)
  let released = false
  return {
    async release() {
      if (released) return
      released = true
      holder.child.stdin.write('release\n')
      await holder.waitFor(/^released$/m)
      await exitWithin(holder)
    },
  }
}

function fileOf(server: TestServer): string {
  return server.database.url.slice('sqlite:'.length)
}

/** A request and whether it has been answered yet. */
function send<T>(request: Promise<ApiResponse<T>>): { answered: () => boolean; response: Promise<ApiResponse<T>> } {
  let answered = false
  const response = request.then((res) => {
    answered = true
    return res
  })
  return { answered: () => answered, response }
}

/** The tables in a SQLite file, read by a connection of this process's own (readers don't wait in WAL mode). */
function tablesOf(file: string): string[] {
  const reader = new SQLite(file, { readonly: true })
  try {
    return reader
      .prepare("select name from sqlite_master where type = 'table'")
      .all()
      .map((row) => String((row as { name: unknown }).name))
  } finally {
    reader.close()
  }
}

const tax = (name: string) => ({ name, description: 'lock test', percentage: 5 })

describe('another process holds the write lock (BEGIN IMMEDIATE)', () => {
  let server: TestServer
  let key: TestKey
  beforeAll(async () => {
    server = await startTestServer({ sqliteLockWaitMs: LOCK_WAIT_MS })
    key = await server.createKey()
  })
  afterAll(async () => server.close())

  const taxesNamed = (name: string) => server.database.count('select count(*) as n from taxes where name = ?', name)

  it('reads and /health/public answer while a write waits; past the bound the write is 503 with Retry-After and changes nothing; once released it succeeds', async () => {
    const lock = await holdLock(fileOf(server), 'immediate')
    try {
      const startedAt = Date.now()
      const write = send(server.request('POST', '/api/v0/taxes', { key, body: tax('refused') }))
      // The write is now waiting for the lock. Everything that needs no write lock answers meanwhile.
      await sleep(100)
      const health = await server.request('GET', '/api/v0/health/public')
      expect(health.status).toBe(200)
      expect(write.answered()).toBe(false)
      const list = await server.request('GET', '/api/v0/taxes', { key })
      expect(list.status).toBe(200)
      const customers = await server.request('GET', '/api/v0/customers', { key }) // a read snapshot (page and total)
      expect(customers.status).toBe(200)
      const authenticatedHealth = await server.request('GET', '/api/v0/health', { key })
      expect(authenticatedHealth.status).toBe(200)
      expect(write.answered()).toBe(false)

      const refused = await write.response
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(LOCK_WAIT_MS)
      expect(refused.status).toBe(503)
      expect(refused.body).toEqual(DATABASE_DOWN)
      expect(refused.headers.get('retry-after')).toBe('1')
      expect(await taxesNamed('refused')).toBe(0)
    } finally {
      await lock.release()
    }
    // Released: the same write succeeds, with no restart.
    const again = await server.request('POST', '/api/v0/taxes', { key, body: tax('refused') })
    expect(again.status).toBe(201)
    expect(await taxesNamed('refused')).toBe(1)
  })

  it.each([
    ['a write transaction (BEGIN IMMEDIATE)', {}],
    ['a single statement (the Idempotency-Key claim)', { 'idempotency-key': 'lock-wait-claim' }],
  ])('%s started while the lock is held succeeds once the lock is released within the bound', async (_what, headers) => {
    const name = `waited ${JSON.stringify(headers)}`
    const lock = await holdLock(fileOf(server), 'immediate')
    let write: ReturnType<typeof send>
    try {
      write = send(server.request('POST', '/api/v0/taxes', { key, body: tax(name), headers }))
      await sleep(RELEASED_WITHIN_MS)
      expect(write.answered()).toBe(false)
    } finally {
      await lock.release()
    }
    const created = await write.response
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(await taxesNamed(name)).toBe(1)
  })

  it('several writes waiting at once all succeed once the lock is released, and reads answer meanwhile', async () => {
    const lock = await holdLock(fileOf(server), 'immediate')
    let writes: ReturnType<typeof send>[]
    try {
      writes = Array.from({ length: 5 }, (_, i) => send(server.request('POST', '/api/v0/taxes', { key, body: tax(`concurrent ${i}`) })))
      await sleep(100)
      const reads = await Promise.all(Array.from({ length: 5 }, () => server.request('GET', '/api/v0/taxes', { key })))
      expect(reads.map((res) => res.status)).toEqual([200, 200, 200, 200, 200])
      expect(writes.some((write) => write.answered())).toBe(false)
    } finally {
      await lock.release()
    }
    const statuses = (await Promise.all(writes.map((write) => write.response))).map((res) => res.status)
    expect(statuses).toEqual([201, 201, 201, 201, 201])
    expect(await server.database.count("select count(*) as n from taxes where name like 'concurrent %'")).toBe(5)
  })
})

/**
 * In WAL mode readers meet a lock only briefly (WAL recovery, a checkpoint), which a test can't
 * hold on purpose; in rollback-journal mode BEGIN EXCLUSIVE holds readers off for as long as it
 * lasts. The server's file is switched to that mode here to make readers meet the lock.
 */
describe('another process holds a lock readers need too', () => {
  let server: TestServer
  let key: TestKey
  beforeAll(async () => {
    server = await startTestServer({ sqliteLockWaitMs: LOCK_WAIT_MS })
    key = await server.createKey()
    await sql`pragma journal_mode = delete`.execute(server.app.db)
  })
  afterAll(async () => server.close())

  it('a read waits for the lock without stopping the server, and answers once it is released within the bound', async () => {
    const lock = await holdLock(fileOf(server), 'exclusive')
    let read: ReturnType<typeof send>
    try {
      read = send(server.request('GET', '/api/v0/taxes', { key }))
      await sleep(100)
      expect((await server.request('GET', '/api/v0/health/public')).status).toBe(200)
      await sleep(RELEASED_WITHIN_MS)
      expect(read.answered()).toBe(false)
    } finally {
      await lock.release()
    }
    expect((await read.response).status).toBe(200)
  })

  it('a read snapshot (a transaction that has read nothing yet) is begun again once the lock is released', async () => {
    const lock = await holdLock(fileOf(server), 'exclusive')
    let snapshot: Promise<number>
    try {
      snapshot = readSnapshot(server.app.db, async (tx) => {
        const { rows } = await sql<{ n: number }>`select count(*) as n from api_keys`.execute(tx)
        return Number(rows[0]?.n)
      })
      await sleep(RELEASED_WITHIN_MS)
    } finally {
      await lock.release()
    }
    expect(await snapshot).toBe(1)
  })

  it('past the bound a read fails with SQLITE_BUSY (503) rather than waiting on', async () => {
    const lock = await holdLock(fileOf(server), 'exclusive')
    try {
      const startedAt = Date.now()
      const refused = await server.request('GET', '/api/v0/taxes', { key })
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(LOCK_WAIT_MS)
      expect(refused.status).toBe(503)
      expect(refused.body).toEqual(DATABASE_DOWN)
      const failure = await readSnapshot(server.app.db, (tx) => sql`select count(*) from taxes`.execute(tx)).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(isSqliteBusy(failure)).toBe(true)
    } finally {
      await lock.release()
    }
    expect((await server.request('GET', '/api/v0/taxes', { key })).status).toBe(200)
  })
})

describe('start-up while another process holds the lock of a database that still needs its schema', () => {
  it('migrating waits for the lock, and finishes once it is released within the bound', async () => {
    const { file, url } = freshDb('devplatform-lock-')
    const lock = await holdLock(file, 'immediate', { wal: true })
    let opening: ReturnType<typeof openDatabase>
    try {
      opening = openDatabase(parseDatabaseUrl(url), { sqliteLockWaitMs: LOCK_WAIT_MS })
      await sleep(RELEASED_WITHIN_MS)
    } finally {
      await lock.release()
    }
    const db = await opening
    try {
      const { rows } = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(db)
      expect(Number(rows[0]?.n)).toBeGreaterThan(0)
    } finally {
      await db.destroy()
    }
  })

  it('past the bound opening fails (database is locked), having created nothing', async () => {
    const { file, url } = freshDb('devplatform-lock-')
    const lock = await holdLock(file, 'immediate', { wal: true })
    try {
      const startedAt = Date.now()
      const failure = await openDatabase(parseDatabaseUrl(url), { sqliteLockWaitMs: LOCK_WAIT_MS }).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(LOCK_WAIT_MS)
      // The migrator reports which step failed, with SQLite's own words for the cause.
      expect(String(failure)).toMatch(/database is locked/)
      expect(tablesOf(file)).toEqual([])
    } finally {
      await lock.release()
    }
    const db = await openDatabase(parseDatabaseUrl(url), { sqliteLockWaitMs: LOCK_WAIT_MS })
    await db.destroy()
  })

  it('the server process starts once the lock is released (the default bound, 5 s), and serves', async () => {
    const { file, url } = freshDb('devplatform-lock-')
    const lock = await holdLock(file, 'immediate', { wal: true })
    const server = launch(SERVER, [], { PORT: '0', DATABASE_URL: url, NODE_ENV: 'test' })
    try {
      await sleep(RELEASED_WITHIN_MS)
      expect(server.stdout()).not.toMatch(/Server listening/)
      expect(server.child.exitCode).toBeNull()
    } finally {
      await lock.release()
    }
    const [, port] = await server.waitFor(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/)
    expect((await fetch(`http://127.0.0.1:${String(port)}/api/v0/health/public`)).status).toBe(200)
    server.child.kill('SIGTERM')
    expect((await exitWithin(server)).code).toBe(0)
  })
})

describe('the devplatform command while another process holds the write lock', () => {
  it('waits for the lock and succeeds once it is released within the bound', async () => {
    const { file, url } = freshDb('devplatform-lock-')
    // The schema first, so the command's only write is its own.
    const db = await openDatabase(parseDatabaseUrl(url))
    await db.destroy()
    const lock = await holdLock(file, 'immediate')
    const command = launch(CLI, ['apps', 'create', '--name', 'Waited', '--json'], { DATABASE_URL: url })
    try {
      await sleep(RELEASED_WITHIN_MS)
      expect(command.child.exitCode).toBeNull()
    } finally {
      await lock.release()
    }
    const exit = await exitWithin(command)
    expect(exit.code, command.stderr()).toBe(0)
    expect(JSON.parse(command.stdout())).toMatchObject({ name: 'Waited' })
  })
})
