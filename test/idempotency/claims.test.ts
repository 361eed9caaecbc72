import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { type Config, loadConfig, parseDatabaseUrl } from '../../src/config.js'
import { openDatabase } from '../../src/modules/database.js'
import { IDEMPOTENCY, renewWhileHeld, schedulePurge } from '../../src/idempotency/plugin.js'
import { IdempotencyKeysRepository } from '../../src/idempotency/repository.js'
import { TEST_BACKEND } from '../backend.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { countRows, errorBody, expectReplay, freshKey, KEY_IN_PROGRESS, KEY_REUSED, postWithKey } from './helpers.js'

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => server.close())

const CUSTOMER = { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }
const HOUR = 60 * 60 * 1000
const iso = (ms: number) => new Date(ms).toISOString()
/** the environment of the keys server.createKey() makes here: rows written by hand are theirs */
const CALLER_ENVIRONMENT = 'production' as const

function keyRow(appId: string, idempotencyKey: string) {
  return server.app.db.selectFrom('idempotency_keys').selectAll().where('app_id', '=', appId).where('key', '=', idempotencyKey).executeTakeFirst()
}

/** A claim as a request in another process would have left it (that process may have died since). */
async function insertRunningClaim(caller: TestKey, idempotencyKey: string, fingerprint: string, leaseUntil: string): Promise<void> {
  await server.app.db
    .insertInto('idempotency_keys')
    .values({ app_id: caller.appId, environment: CALLER_ENVIRONMENT, key: idempotencyKey, fingerprint, status_code: null, content_type: null, body: null, created_at: iso(Date.now() - 1000), lease_until: leaseUntil })
    .execute()
}

/** The fingerprint the server stores for a POST /api/v0/customers with this body (learnt from a scratch application). */
async function customerFingerprint(body: Record<string, unknown>): Promise<string> {
  const scratch = await server.createKey()
  const idempotencyKey = freshKey('scratch')
  expect((await postWithKey(server, scratch, '/api/v0/customers', idempotencyKey, body)).status).toBe(201)
  const row = await keyRow(scratch.appId, idempotencyKey)
  if (row === undefined) throw new Error('no stored key')
  return row.fingerprint
}

describe('50 concurrent POSTs with one key', () => {
  it('create exactly one customer and one event; every other answer is the replay or 409', async () => {
    const caller = await server.createKey()
    const idempotencyKey = freshKey('storm')
    // Open the 50 connections first, so the POSTs arrive together rather than as each connects.
    await Promise.all(Array.from({ length: 50 }, () => server.request('GET', '/api/v0/health/public')))
    const responses = await Promise.all(Array.from({ length: 50 }, () => postWithKey(server, caller, '/api/v0/customers', idempotencyKey, CUSTOMER)))

    expect(await countRows(server, 'customers', caller.appId)).toBe(1)
    expect(await countRows(server, 'events', caller.appId)).toBe(1)
    expect(await countRows(server, 'idempotency_keys', caller.appId)).toBe(1)

    const original = responses.filter((res) => res.status === 201 && res.headers.get('idempotent-replayed') === null)
    expect(original).toHaveLength(1)
    const [first] = original
    if (first === undefined) throw new Error('unreachable')
    for (const res of responses) {
      if (res === first) continue
      if (res.status === 409) {
        expect(res.body).toEqual(errorBody(409, 'Conflict', KEY_IN_PROGRESS))
      } else {
        expectReplay(first, res)
      }
    }
    const statuses = responses.map((res) => res.status)
    expect(statuses.filter((status) => status !== 201 && status !== 409)).toEqual([])
    // Afterwards every retry is the replay.
    expectReplay(first, await postWithKey(server, caller, '/api/v0/customers', idempotencyKey, CUSTOMER))
  })
})

describe('two instances on one database', () => {
  it('50 POSTs with one key spread over both create one customer and one event', async () => {
    const defaults = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent' })
    const config: Config = { ...defaults, database: parseDatabaseUrl(server.database.url, 'DATABASE_URL', 5), webhooks: { ...defaults.webhooks, dispatcher: false } }
    const second = await buildApp({ config, db: await openDatabase(config.database) })
    try {
      await second.listen({ port: 0, host: '127.0.0.1' })
      const address = second.server.address()
      if (address === null || typeof address === 'string') throw new Error('no port')
      const secondUrl = `http://127.0.0.1:${address.port}`
      const caller = await server.createKey()
      const idempotencyKey = freshKey('two-instances')
      const post = (baseUrl: string) =>
        fetch(`${baseUrl}/api/v0/customers`, {
          method: 'POST',
          headers: { ...caller.headers, 'content-type': 'application/json', 'Idempotency-Key': idempotencyKey },
          body: JSON.stringify(CUSTOMER),
        }).then(async (res) => ({ status: res.status, replayed: res.headers.get('idempotent-replayed'), text: await res.text() }))
      const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => post(i % 2 === 0 ? server.baseUrl : secondUrl)))

      expect(await countRows(server, 'customers', caller.appId)).toBe(1)
      expect(await countRows(server, 'events', caller.appId)).toBe(1)
      const originals = responses.filter((res) => res.status === 201 && res.replayed === null)
      expect(originals).toHaveLength(1)
      const replays = responses.filter((res) => res.replayed === 'true')
      expect(replays.every((res) => res.status === 201 && res.text === originals[0]?.text)).toBe(true)
      expect(responses.length - originals.length - replays.length).toBe(responses.filter((res) => res.status === 409).length)
    } finally {
      await second.close()
    }
  })
})

describe('a key whose first request is still running', () => {
  it('is 409 for the same request and 422 for another, while its lease holds', async () => {
    const caller = await server.createKey()
    const idempotencyKey = freshKey()
    await insertRunningClaim(caller, idempotencyKey, await customerFingerprint(CUSTOMER), iso(Date.now() + 60_000))

    const same = await postWithKey(server, caller, '/api/v0/customers', idempotencyKey, CUSTOMER)
    expect(same.status).toBe(409)
    expect(same.body).toEqual(errorBody(409, 'Conflict', KEY_IN_PROGRESS))
    const other = await postWithKey(server, caller, '/api/v0/customers', idempotencyKey, { ...CUSTOMER, last_name: 'Byron' })
    expect(other.status).toBe(422)
    expect(other.body).toEqual(errorBody(422, 'Unprocessable Entity', KEY_REUSED))
    expect(await countRows(server, 'customers', caller.appId)).toBe(0)
  })

  it('runs again once its lease has lapsed (its process died), and stores the new answer', async () => {
    const caller = await server.createKey()
    const idempotencyKey = freshKey()
    await insertRunningClaim(caller, idempotencyKey, await customerFingerprint(CUSTOMER), iso(Date.now() - 1))

    const retried = await postWithKey<{ id: string }>(server, caller, '/api/v0/customers', idempotencyKey, CUSTOMER)
    expect(retried.status).toBe(201)
    expect(retried.headers.get('idempotent-replayed')).toBeNull()
    const row = await keyRow(caller.appId, idempotencyKey)
    expect(row).toMatchObject({ status_code: 201, body: retried.text })
    expectReplay(retried, await postWithKey(server, caller, '/api/v0/customers', idempotencyKey, CUSTOMER))
    expect(await countRows(server, 'customers', caller.appId)).toBe(1)
    expect(await countRows(server, 'events', caller.appId)).toBe(1)
  })

  it('a lapsed lease frees the key for another request too', async () => {
    const caller = await server.createKey()
    const idempotencyKey = freshKey()
    await insertRunningClaim(caller, idempotencyKey, await customerFingerprint({ ...CUSTOMER, last_name: 'Byron' }), iso(Date.now() - 1))
    const res = await postWithKey(server, caller, '/api/v0/customers', idempotencyKey, CUSTOMER)
    expect(res.status).toBe(201)
  })
})

describe('after 24 hours', () => {
  it('an expired key counts as absent: the request runs again and replaces the row', async () => {
    const caller = await server.createKey()
    const idempotencyKey = freshKey()
    const first = await postWithKey<{ id: string }>(server, caller, '/api/v0/customers', idempotencyKey, CUSTOMER)
    expect(first.status).toBe(201)
    const expired = iso(Date.now() - 24 * HOUR - 1000)
    await server.app.db.updateTable('idempotency_keys').set({ created_at: expired }).where('app_id', '=', caller.appId).where('key', '=', idempotencyKey).execute()

    // Even another request may use it now.
    const again = await postWithKey<{ id: string }>(server, caller, '/api/v0/customers', idempotencyKey, { ...CUSTOMER, last_name: 'Byron' })
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBeNull()
    expect(again.body.id).not.toBe(first.body.id)
    const row = await keyRow(caller.appId, idempotencyKey)
    expect(row?.created_at ?? '').toSatisfy((createdAt: string) => createdAt > expired)
    expect(row?.body).toBe(again.text)
    expect(await countRows(server, 'idempotency_keys', caller.appId)).toBe(1)
    expect(await countRows(server, 'customers', caller.appId)).toBe(2)
  })

  it('a key just inside 24 hours still replays', async () => {
    const caller = await server.createKey()
    const idempotencyKey = freshKey()
    const first = await postWithKey(server, caller, '/api/v0/customers', idempotencyKey, CUSTOMER)
    await server.app.db
      .updateTable('idempotency_keys')
      .set({ created_at: iso(Date.now() - 24 * HOUR + 60_000) })
      .where('app_id', '=', caller.appId)
      .where('key', '=', idempotencyKey)
      .execute()
    expectReplay(first, await postWithKey(server, caller, '/api/v0/customers', idempotencyKey, CUSTOMER))
  })

  it('expired rows are purged in the background, in batches, and fresh ones kept', async () => {
    const caller = await server.createKey()
    const fresh = await postWithKey(server, caller, '/api/v0/customers', freshKey('fresh'), CUSTOMER)
    expect(fresh.status).toBe(201)
    const old = iso(Date.now() - 25 * HOUR)
    const expiredRow = (key: string, completed: boolean) => ({
      app_id: caller.appId,
      environment: CALLER_ENVIRONMENT,
      key,
      fingerprint: 'x',
      status_code: completed ? 201 : null,
      content_type: completed ? 'application/json; charset=utf-8' : null,
      body: completed ? '{}' : null,
      created_at: old,
      lease_until: old,
    })
    const expiredRows = Array.from({ length: 1_234 }, (_, i) => expiredRow(`old-${i}`, i % 2 === 0))
    for (let i = 0; i < expiredRows.length; i += 200) await server.app.db.insertInto('idempotency_keys').values(expiredRows.slice(i, i + 200)).execute()
    expect(await countRows(server, 'idempotency_keys', caller.appId)).toBe(1_235)

    const purger = schedulePurge(new IdempotencyKeysRepository(server.app.db), server.app.log, 50)
    purger.start()
    try {
      await expect.poll(() => countRows(server, 'idempotency_keys', caller.appId), { timeout: 5_000 }).toBe(1)
      // It keeps running: rows that expire later go too.
      await server.app.db.insertInto('idempotency_keys').values(expiredRow('later', true)).execute()
      await expect.poll(() => countRows(server, 'idempotency_keys', caller.appId), { timeout: 5_000 }).toBe(1)
    } finally {
      await purger.stop()
    }
    expect(server.logs()).toContain('purged expired Idempotency-Keys')
  })

  it('the purge deletes exactly the rows created before the retention', async () => {
    const caller = await server.createKey()
    const keys = new IdempotencyKeysRepository(server.app.db)
    const now = Date.now()
    const row = (key: string, createdAt: number) => ({
      app_id: caller.appId,
      environment: CALLER_ENVIRONMENT,
      key,
      fingerprint: 'x',
      status_code: 201,
      content_type: 'application/json',
      body: '{}',
      created_at: iso(createdAt),
      lease_until: iso(createdAt),
    })
    await server.app.db.insertInto('idempotency_keys').values([row('before', now - IDEMPOTENCY.retentionMs - 1), row('at', now - IDEMPOTENCY.retentionMs), row('after', now - IDEMPOTENCY.retentionMs + 1)]).execute()
    await keys.purgeExpired(iso(now - IDEMPOTENCY.retentionMs))
    const left = await server.app.db.selectFrom('idempotency_keys').select('key').where('app_id', '=', caller.appId).orderBy('key').execute()
    expect(left.map((r) => r.key)).toEqual(['after', 'at'])
  })
})

describe('a 5xx answer is not stored', () => {
  // A real fault in the handler's transaction: a trigger on the server's own database refuses
  // one customer's insert. SQLite's RAISE and a plain PL/pgSQL exception are unexpected errors
  // (500); on PostgreSQL a "cannot connect now" SQLSTATE is a passing database fault (503).
  const faults: { name: string; status: number; postgresRaise: string }[] = [
    { name: 'an unexpected database error (500)', status: 500, postgresRaise: `raise exception 'injected fault'` },
    ...(TEST_BACKEND === 'postgres' ? [{ name: 'the database unavailable (503)', status: 503, postgresRaise: `raise exception 'injected outage' using errcode = '57P03'` }] : []),
  ]

  async function injectFault(raise: string): Promise<void> {
    if (TEST_BACKEND === 'postgres') {
      await sql.raw(`create or replace function fail_customer() returns trigger language plpgsql as $$ begin if new.first_name = 'Faulty' then ${raise}; end if; return new; end $$`).execute(server.app.db)
      await sql`create trigger fail_customer before insert on customers for each row execute function fail_customer()`.execute(server.app.db)
    } else {
      await sql`create trigger fail_customer before insert on customers when new.first_name = 'Faulty' begin select raise(abort, 'injected fault'); end`.execute(server.app.db)
    }
  }

  async function removeFault(): Promise<void> {
    await sql`drop trigger fail_customer${sql.raw(TEST_BACKEND === 'postgres' ? ' on customers' : '')}`.execute(server.app.db)
  }

  it.each(faults)('$name: the key is free again and the retry runs', async ({ status, postgresRaise }) => {
    const caller = await server.createKey()
    const idempotencyKey = freshKey()
    const faulty = { ...CUSTOMER, first_name: 'Faulty' }
    await injectFault(postgresRaise)
    try {
      const failed = await postWithKey(server, caller, '/api/v0/customers', idempotencyKey, faulty)
      expect(failed.status).toBe(status)
      expect(await keyRow(caller.appId, idempotencyKey)).toBeUndefined()
      const failedAgain = await postWithKey(server, caller, '/api/v0/customers', idempotencyKey, faulty)
      expect(failedAgain.status).toBe(status)
      expect(failedAgain.headers.get('idempotent-replayed')).toBeNull()
    } finally {
      await removeFault()
    }
    const retried = await postWithKey(server, caller, '/api/v0/customers', idempotencyKey, faulty)
    expect(retried.status).toBe(201)
    expect(retried.headers.get('idempotent-replayed')).toBeNull()
    expect(await countRows(server, 'customers', caller.appId)).toBe(1)
    expect(await countRows(server, 'events', caller.appId)).toBe(1)
    expectReplay(retried, await postWithKey(server, caller, '/api/v0/customers', idempotencyKey, faulty))
  })
})

describe('the lease renewal', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  const timing = { leaseMs: 150, renewEveryMs: 30, maxHoldMs: 600 }

  it('keeps a running claim held past its first lease, then stops after maxHoldMs so the key frees itself', async () => {
    const caller = await server.createKey()
    const keys = new IdempotencyKeysRepository(server.app.db)
    const key = freshKey()
    const claimed = await keys.claim({ appId: caller.appId, environment: CALLER_ENVIRONMENT, key, fingerprint: 'f', leaseMs: timing.leaseMs, retentionMs: IDEMPOTENCY.retentionMs })
    if (claimed.outcome !== 'claimed') throw new Error(`expected a claim, got ${claimed.outcome}`)
    const renewal = renewWhileHeld(keys, claimed.claim, server.app.log, timing)
    try {
      await sleep(400) // well past the first lease
      expect((await keyRow(caller.appId, key))?.lease_until ?? '').toSatisfy((leaseUntil: string) => leaseUntil > iso(Date.now()))
      expect((await keys.claim({ appId: caller.appId, environment: CALLER_ENVIRONMENT, key, fingerprint: 'f', leaseMs: timing.leaseMs, retentionMs: IDEMPOTENCY.retentionMs })).outcome).toBe('running')
      await sleep(timing.maxHoldMs + timing.leaseMs + 100)
      expect((await keyRow(caller.appId, key))?.lease_until ?? '').toSatisfy((leaseUntil: string) => leaseUntil < iso(Date.now()))
      expect(server.logs()).toContain('its Idempotency-Key lease is no longer renewed')
    } finally {
      clearInterval(renewal)
    }
  })

  it('a cleared renewal lets the lease lapse', async () => {
    const caller = await server.createKey()
    const keys = new IdempotencyKeysRepository(server.app.db)
    const key = freshKey()
    const claimed = await keys.claim({ appId: caller.appId, environment: CALLER_ENVIRONMENT, key, fingerprint: 'f', leaseMs: timing.leaseMs, retentionMs: IDEMPOTENCY.retentionMs })
    if (claimed.outcome !== 'claimed') throw new Error(`expected a claim, got ${claimed.outcome}`)
    clearInterval(renewWhileHeld(keys, claimed.claim, server.app.log, timing))
    await sleep(timing.leaseMs + 50)
    expect((await keys.claim({ appId: caller.appId, environment: CALLER_ENVIRONMENT, key, fingerprint: 'f', leaseMs: timing.leaseMs, retentionMs: IDEMPOTENCY.retentionMs })).outcome).toBe('claimed')
  })
})

describe('the claim (repository)', () => {
  const claimRequest = (appId: string, key: string) => ({ appId, environment: CALLER_ENVIRONMENT, key, fingerprint: 'f', leaseMs: 30_000, retentionMs: IDEMPOTENCY.retentionMs })

  it('a renewal extends the lease; a holder whose claim was taken over can neither renew nor store', async () => {
    const caller = await server.createKey()
    const keys = new IdempotencyKeysRepository(server.app.db)
    const key = freshKey()
    const first = await keys.claim(claimRequest(caller.appId, key))
    if (first.outcome !== 'claimed') throw new Error(`expected a claim, got ${first.outcome}`)
    const leaseBefore = (await keyRow(caller.appId, key))?.lease_until ?? ''
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(await keys.renew(first.claim, 60_000)).toBe(true)
    expect((await keyRow(caller.appId, key))?.lease_until ?? '').toSatisfy((leaseUntil: string) => leaseUntil > leaseBefore)

    expect((await keys.claim(claimRequest(caller.appId, key))).outcome).toBe('running')
    // The first holder's process stalls past its lease; another request takes the key over.
    await server.app.db.updateTable('idempotency_keys').set({ lease_until: iso(Date.now() - 1) }).where('key', '=', key).execute()
    const second = await keys.claim(claimRequest(caller.appId, key))
    expect(second.outcome).toBe('claimed')

    expect(await keys.renew(first.claim, 60_000)).toBe(false)
    expect(await keys.complete(first.claim, { statusCode: 201, contentType: 'application/json', body: '{"stale":true}' })).toBe(false)
    await keys.release(first.claim)
    expect(await keyRow(caller.appId, key)).toMatchObject({ status_code: null, body: null })
    if (second.outcome !== 'claimed') throw new Error('unreachable')
    expect(await keys.complete(second.claim, { statusCode: 201, contentType: 'application/json', body: '{"fresh":true}' })).toBe(true)
    expect(await keys.claim(claimRequest(caller.appId, key))).toEqual({
      outcome: 'completed',
      response: { statusCode: 201, contentType: 'application/json', body: '{"fresh":true}' },
    })
  })
})
