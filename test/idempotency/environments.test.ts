import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IDEMPOTENCY } from '../../src/idempotency/plugin.js'
import { IdempotencyKeysRepository } from '../../src/idempotency/repository.js'
import type { Environment } from '../../src/keys/credentials.js'
import { type ApiResponse, startTestServer, type TestKey, type TestServer } from '../helper.js'
import { testChainsConfig } from '../helpers/chains.js'
import { errorBody, expectReplay, freshKey, KEY_IN_PROGRESS, postWithKey } from './helpers.js'

/**
 * Idempotency-Keys belong to (application, environment): a development key and a production key
 * of one application never see each other's stored answers or claims, whichever comes first.
 */

let server: TestServer

beforeAll(async () => {
  server = await startTestServer({ config: { chains: testChainsConfig() } })
})
afterAll(async () => server.close())

const INTENT_PATH = '/api/v0/payment-intents/stablecoin'
const INTENT = { sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base', amount: '12.5' }
const TEST_PAYMENT = { amount: 10, currency: 'USD', description: 'Order 7' }
const DEVELOPMENT_ONLY = 'Test payments can only be made, read and refunded with a development key: they move sandbox money, and a production key moves live money'
const CUSTOMER = { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }
const iso = (ms: number) => new Date(ms).toISOString()

interface Intent {
  id: string
}

/** A new application with a development key and a production key. */
async function newApplication(): Promise<Record<Environment, TestKey>> {
  const development = await server.createKey({ environment: 'development' })
  const production = await server.createKey({ appId: development.appId, environment: 'production' })
  return { development, production }
}

/** An answer the request itself made: no replay, a new object. */
function expectExecutedFresh(res: ApiResponse<Intent>, other: ApiResponse<Intent>): void {
  expect(res.status, res.text).toBe(201)
  expect(res.headers.get('idempotent-replayed')).toBeNull()
  expect(res.body.id).not.toBe(other.body.id)
}

/** The intent read with `key`: 200 for its own environment's, 404 for the other's. */
async function readIntent(key: TestKey, id: string): Promise<number> {
  return (await server.request('GET', `/api/v0/payment-intents/${id}`, { key })).status
}

function keyRows(appId: string, idempotencyKey: string) {
  return server.app.db.selectFrom('idempotency_keys').select(['environment', 'status_code']).where('app_id', '=', appId).where('key', '=', idempotencyKey).orderBy('environment').execute()
}

/** The fingerprint the server stores for a POST /api/v0/customers with CUSTOMER (learnt from a scratch application). */
async function customerFingerprint(): Promise<string> {
  const scratch = await server.createKey()
  const idempotencyKey = freshKey('scratch')
  expect((await postWithKey(server, scratch, '/api/v0/customers', idempotencyKey, CUSTOMER)).status).toBe(201)
  const row = await server.app.db.selectFrom('idempotency_keys').select('fingerprint').where('app_id', '=', scratch.appId).where('key', '=', idempotencyKey).executeTakeFirstOrThrow()
  return row.fingerprint
}

describe('one Idempotency-Key used by a development and a production key of one application', () => {
  it('development first, then production: the production request runs fresh and makes a live intent', async () => {
    const keys = await newApplication()
    const idempotencyKey = freshKey('dev-first')
    const sandbox = await postWithKey<Intent>(server, keys.development, INTENT_PATH, idempotencyKey, INTENT)
    expect(sandbox.status, sandbox.text).toBe(201)

    const live = await postWithKey<Intent>(server, keys.production, INTENT_PATH, idempotencyKey, INTENT)
    expectExecutedFresh(live, sandbox)
    expect(await readIntent(keys.production, live.body.id)).toBe(200)
    expect(await readIntent(keys.production, sandbox.body.id)).toBe(404)
    expect(await readIntent(keys.development, sandbox.body.id)).toBe(200)

    // Each environment's retry replays its own answer.
    expectReplay(sandbox, await postWithKey(server, keys.development, INTENT_PATH, idempotencyKey, INTENT))
    expectReplay(live, await postWithKey(server, keys.production, INTENT_PATH, idempotencyKey, INTENT))
    expect(await keyRows(keys.development.appId, idempotencyKey)).toEqual([
      { environment: 'development', status_code: 201 },
      { environment: 'production', status_code: 201 },
    ])
  })

  it('production first, then development: the development request runs fresh and makes a sandbox intent', async () => {
    const keys = await newApplication()
    const idempotencyKey = freshKey('prod-first')
    const live = await postWithKey<Intent>(server, keys.production, INTENT_PATH, idempotencyKey, INTENT)
    expect(live.status, live.text).toBe(201)

    const sandbox = await postWithKey<Intent>(server, keys.development, INTENT_PATH, idempotencyKey, INTENT)
    expectExecutedFresh(sandbox, live)
    expect(await readIntent(keys.development, sandbox.body.id)).toBe(200)
    expect(await readIntent(keys.development, live.body.id)).toBe(404)
    expect(await readIntent(keys.production, live.body.id)).toBe(200)

    expectReplay(live, await postWithKey(server, keys.production, INTENT_PATH, idempotencyKey, INTENT))
    expectReplay(sandbox, await postWithKey(server, keys.development, INTENT_PATH, idempotencyKey, INTENT))
  })

  it("a production key's 403 is not replayed to the development key, which makes its test payment", async () => {
    const keys = await newApplication()
    const idempotencyKey = freshKey('refused')
    const refused = await postWithKey(server, keys.production, '/api/v0/test-payment', idempotencyKey, TEST_PAYMENT)
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual(errorBody(403, 'Forbidden', DEVELOPMENT_ONLY))

    const made = await postWithKey<{ id: string }>(server, keys.development, '/api/v0/test-payment', idempotencyKey, TEST_PAYMENT)
    expect(made.status, made.text).toBe(201)
    expect(made.headers.get('idempotent-replayed')).toBeNull()
    expect((await server.request('GET', `/api/v0/test-payment/${made.body.id}`, { key: keys.development })).status).toBe(200)

    // The production key's own retry still gets its 403 back.
    expectReplay(refused, await postWithKey(server, keys.production, '/api/v0/test-payment', idempotencyKey, TEST_PAYMENT))
  })

  it('another body in the other environment is not "the same key with a different request": it runs (no 422)', async () => {
    const keys = await newApplication()
    const idempotencyKey = freshKey('other-body')
    const sandbox = await postWithKey<Intent>(server, keys.development, INTENT_PATH, idempotencyKey, INTENT)
    expect(sandbox.status, sandbox.text).toBe(201)
    const live = await postWithKey<Intent>(server, keys.production, INTENT_PATH, idempotencyKey, { ...INTENT, amount: '99' })
    expectExecutedFresh(live, sandbox)
    // Within one environment the rule holds.
    expect((await postWithKey(server, keys.development, INTENT_PATH, idempotencyKey, { ...INTENT, amount: '99' })).status).toBe(422)
  })

  it("a claim still running in one environment answers 409 to that environment only; the other's request runs", async () => {
    const keys = await newApplication()
    const repository = new IdempotencyKeysRepository(server.app.db)
    const fingerprint = await customerFingerprint()
    for (const [holder, other] of [
      ['development', 'production'],
      ['production', 'development'],
    ] as const) {
      const idempotencyKey = freshKey(`running-${holder}`)
      const held = await repository.claim({ appId: keys[holder].appId, environment: holder, key: idempotencyKey, fingerprint, leaseMs: 60_000, retentionMs: IDEMPOTENCY.retentionMs })
      expect(held.outcome).toBe('claimed')
      const waiting = await postWithKey(server, keys[holder], '/api/v0/customers', idempotencyKey, CUSTOMER)
      expect(waiting.status).toBe(409)
      expect(waiting.body).toEqual(errorBody(409, 'Conflict', KEY_IN_PROGRESS))
      const ran = await postWithKey(server, keys[other], '/api/v0/customers', idempotencyKey, CUSTOMER)
      expect(ran.status, ran.text).toBe(201)
      expect(ran.headers.get('idempotent-replayed')).toBeNull()
    }
  })

  it("the purge deletes one environment's expired row and keeps the other's fresh one with the same key", async () => {
    const keys = await newApplication()
    const idempotencyKey = freshKey('purge')
    const sandbox = await postWithKey<Intent>(server, keys.development, INTENT_PATH, idempotencyKey, INTENT)
    expect(sandbox.status, sandbox.text).toBe(201)
    const live = await postWithKey<Intent>(server, keys.production, INTENT_PATH, idempotencyKey, INTENT)
    expectExecutedFresh(live, sandbox)
    const now = Date.now()
    await server.app.db
      .updateTable('idempotency_keys')
      .set({ created_at: iso(now - IDEMPOTENCY.retentionMs - 1000) })
      .where('app_id', '=', keys.development.appId)
      .where('environment', '=', 'development')
      .where('key', '=', idempotencyKey)
      .execute()
    await new IdempotencyKeysRepository(server.app.db).purgeExpired(iso(now - IDEMPOTENCY.retentionMs))
    expect(await keyRows(keys.development.appId, idempotencyKey)).toEqual([{ environment: 'production', status_code: 201 }])
    expectReplay(live, await postWithKey(server, keys.production, INTENT_PATH, idempotencyKey, INTENT))
  })
})

describe('two keys of the same environment of one application', () => {
  it('two development keys share their Idempotency-Keys: the second gets the replay (production keys: replay.test.ts)', async () => {
    const first = await server.createKey({ environment: 'development' })
    const second = await server.createKey({ appId: first.appId, environment: 'development' })
    const idempotencyKey = freshKey('same-environment')
    const made = await postWithKey<Intent>(server, first, INTENT_PATH, idempotencyKey, INTENT)
    expect(made.status, made.text).toBe(201)
    expectReplay(made, await postWithKey(server, second, INTENT_PATH, idempotencyKey, INTENT))
  })
})
