import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AccountKey, LedgerRepository, verifyLedger } from '../../../src/ledger/ledger.js'
import { ExchangeRates } from '../../../src/ledger/rates.js'
import type { MoneyContext } from '../../../src/ledger/money-context.js'
import { advanceDrain } from '../../../src/resources/drains/lifecycle.js'
import { advanceTransfer } from '../../../src/resources/transfers/lifecycle.js'
import { DEFAULT_SCOPES } from '../../../src/resources/index.js'
import type { HeldAction, HeldItem } from '../../../src/resources/held/public.js'
import { WalletsRepository } from '../../../src/resources/wallets/repository.js'
import { MISSING_UUID, randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { CLI, serviceEnv } from '../../processes.js'

/*
 * Operators' tools for held money (docs/operations.md#held-money), over real HTTP on one server
 * with no scheduler: each held drain or transfer is moved on in-process (advanceDrain with a clock
 * an hour ahead), so nothing moves but what the test moves. About 4 s per backend, two CLI runs
 * (the built dist/: `npm run build`) included.
 */

let server: TestServer
let operator: TestKey
let plain: TestKey
let stranger: TestKey
let walletId: string

const later: MoneyContext = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 1, achDelayMs: 1 }, now: () => Date.now() + 3_600_000 }

beforeAll(async () => {
  server = await startTestServer({ config: { drains: { scheduler: false, fastDelayMs: 1_000, achDelayMs: 3_000, pollIntervalMs: 250, concurrency: 4 } } })
  operator = await server.createKey({ environment: 'development', scopes: [...DEFAULT_SCOPES, 'held:read', 'held:manage'] })
  plain = await server.createKey({ appId: operator.appId, environment: 'development', scopes: DEFAULT_SCOPES })
  stranger = await server.createKey({ environment: 'development', scopes: [...DEFAULT_SCOPES, 'held:read', 'held:manage'] })
  const [wallet] = await server.app.transact((tx) => new WalletsRepository(tx.db).ensure('sandbox', operator.appId))
  if (wallet === undefined) throw new Error('no wallet')
  walletId = wallet.id
})

afterAll(async () => {
  await server.close()
})

interface HeldDrain {
  id: string
  addressId: string
}

/** A sandbox drain of `amount` USDC (13.03: error, 13.01: undeliverable) stopped where its funds are held. */
async function heldDrain(amount: string, fields: Record<string, unknown> = {}): Promise<HeldDrain> {
  const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', { key: plain, body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+14155550100' } })
  const address = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses`, {
    key: plain,
    body: { chain: 'base', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_123', ...fields },
  })
  expect(address.status, address.text).toBe(201)
  const drain = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses/${address.body.id}/simulate_deposit`, { key: plain, body: { amount } })
  expect(drain.status, drain.text).toBe(201)
  await server.app.transact((tx) => advanceDrain(tx, later, drain.body.id))
  return { id: drain.body.id, addressId: address.body.id }
}

/** A sandbox direct-wallet transfer (money in) of `amount` USDC whose funds arrived and ended in error (13.03) or undeliverable (13.01). */
async function heldTransfer(amount: number): Promise<string> {
  const created = await server.request<{ id: string }>('POST', '/api/v0/transfers/direct-wallet', { key: plain, body: { walletId, network: 'base', stableCoinCurrency: 'usdc', amount } })
  expect(created.status, created.text).toBe(201)
  const funded = await server.request('POST', `/api/v0/transfers/${created.body.id}/simulate_funds`, { key: plain, body: {} })
  expect(funded.status, funded.text).toBe(200)
  await server.app.transact((tx) => advanceTransfer(tx, later, created.body.id))
  return created.body.id
}

/** The available balance of an account, in smallest units. */
async function available(key: AccountKey): Promise<bigint> {
  return server.app.transact(async (tx) => {
    const ledger = new LedgerRepository(tx.db)
    const [balance] = await ledger.balances([await ledger.account(key)])
    return balance?.available ?? 0n
  })
}

const clearingOf = (drain: HeldDrain): AccountKey => ({ environment: 'sandbox', appId: operator.appId, kind: 'clearing', currency: 'usdc', reference: drain.addressId })
const transferClearing = (id: string): AccountKey => ({ environment: 'sandbox', appId: operator.appId, kind: 'clearing', currency: 'usdc', reference: `transfer:${id}` })
const walletUsdc = (): AccountKey => ({ environment: 'sandbox', appId: operator.appId, kind: 'wallet', currency: 'usdc', reference: walletId })

function act<T = HeldAction>(path: string, body: Record<string, unknown>, key: TestKey = operator, idempotencyKey: string = crypto.randomUUID()) {
  return server.request<T>('POST', `/api/v0/held/${path}`, { key, body, headers: { 'idempotency-key': idempotencyKey } })
}

async function drainState(id: string): Promise<{ state: string; pending_entry_id: string | null }> {
  const row = await server.app.db.selectFrom('drains').select(['state', 'pending_entry_id']).where('id', '=', id).executeTakeFirstOrThrow()
  return row
}

describe('held money: list', () => {
  it('lists held drains and transfers with why and what may be done; the scopes are opt-in', async () => {
    const drain = await heldDrain('13.03')
    const undeliverable = await heldDrain('13.01')
    const transfer = await heldTransfer(13.03)
    const listed = await server.request<{ data: HeldItem[] }>('GET', '/api/v0/held', { key: operator })
    expect(listed.status, listed.text).toBe(200)
    const byId = new Map(listed.body.data.map((item) => [item.id, item]))
    expect(byId.get(drain.id)).toMatchObject({ type: 'drain', state: 'error', amount: '13.030000', currency: 'usdc', actions: ['retry', 'refund', 'release'], reason: expect.stringContaining('needs an operator') })
    expect(byId.get(undeliverable.id)).toMatchObject({ type: 'drain', state: 'undeliverable', actions: ['refund', 'release'] })
    expect(byId.get(transfer)).toMatchObject({ type: 'transfer', state: 'error', amount: '13.030000', actions: ['retry', 'refund', 'release'] })
    // A key made without --scopes has neither held scope.
    const refused = await server.request('GET', '/api/v0/held', { key: plain })
    expect(refused.status).toBe(403)
    expect((await act(`drains/${drain.id}/release`, { by: 'ada', reason: 'r', wallet_id: walletId }, plain)).status).toBe(403)
    // Another application sees none of them.
    const other = await server.request<{ data: HeldItem[] }>('GET', '/api/v0/held', { key: stranger })
    expect(other.body.data.map((item) => item.id)).not.toContain(drain.id)
  })
})

describe('held money: each action is one ledger entry and one audit record', () => {
  it('release: the whole deposit from clearing into the wallet, posted; replayed with its key; a second release is 409', async () => {
    const drain = await heldDrain('13.01')
    const clearingBefore = await available(clearingOf(drain))
    const walletBefore = await available(walletUsdc())
    const key = crypto.randomUUID()
    const released = await act(`drains/${drain.id}/release`, { by: 'ada@ops', reason: 'ticket 1: into the wallet', wallet_id: walletId }, operator, key)
    expect(released.status, released.text).toBe(200)
    expect(released.body).toMatchObject({ target_type: 'drain', target_id: drain.id, action: 'release', from_state: 'undeliverable', to_state: 'released', amount: '13.010000', currency: 'usdc', wallet_id: walletId, by: 'ada@ops', reason: 'ticket 1: into the wallet', livemode: false })
    expect(clearingBefore - (await available(clearingOf(drain)))).toBe(13_010_000n)
    expect((await available(walletUsdc())) - walletBefore).toBe(13_010_000n)
    const entry = await server.app.db.selectFrom('ledger_entries').selectAll().where('id', '=', released.body.ledger_entry_id ?? '').executeTakeFirstOrThrow()
    expect(entry).toMatchObject({ status: 'posted', reason_type: 'drain', reason_id: drain.id })
    const replay = await act(`drains/${drain.id}/release`, { by: 'ada@ops', reason: 'ticket 1: into the wallet', wallet_id: walletId }, operator, key)
    expect(replay.status).toBe(200)
    expect(replay.body.id).toBe(released.body.id)
    expect((await available(walletUsdc())) - walletBefore).toBe(13_010_000n)
    const again = await act(`drains/${drain.id}/release`, { by: 'bob', reason: 'twice', wallet_id: walletId })
    expect(again.status).toBe(409)
    const audit = await server.request<{ data: HeldAction[] }>('GET', '/api/v0/held/actions', { key: operator })
    expect(audit.body.data.filter((action) => action.target_id === drain.id)).toEqual([released.body])
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it('refund: an address without a return address is given one, then clearing → the chain\'s outflow, posted', async () => {
    const drain = await heldDrain('13.01')
    const before = await available(clearingOf(drain))
    const missing = await act(`drains/${drain.id}/refund`, { by: 'ada', reason: 'sender asked' })
    expect(missing.status).toBe(400)
    const invalid = await act(`drains/${drain.id}/refund`, { by: 'ada', reason: 'sender asked', return_address: 'not-an-address' })
    expect(invalid.status).toBe(400)
    expect(await available(clearingOf(drain))).toBe(before)
    const to = randomEvmAddress()
    const refunded = await act(`drains/${drain.id}/refund`, { by: 'ada', reason: 'sender asked', return_address: to })
    expect(refunded.status, refunded.text).toBe(200)
    expect(refunded.body).toMatchObject({ action: 'refund', from_state: 'undeliverable', to_state: 'refunded', amount: '13.010000', return_address: to })
    expect(before - (await available(clearingOf(drain)))).toBe(13_010_000n)
    const address = await server.app.db.selectFrom('liquidation_addresses').select('return_address').where('id', '=', drain.addressId).executeTakeFirstOrThrow()
    expect(address.return_address).toBe(to)
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it('retry: a drain in error is submitted again (a pending entry reserves its payout) and the scheduler pays it out', async () => {
    const drain = await heldDrain('13.03')
    const before = await available(clearingOf(drain))
    const retried = await act(`drains/${drain.id}/retry`, { by: 'ada', reason: 'the rail is back' })
    expect(retried.status, retried.text).toBe(200)
    expect(retried.body).toMatchObject({ action: 'retry', from_state: 'error', to_state: 'payment_submitted', amount: '13.030000' })
    const row = await drainState(drain.id)
    expect(row.pending_entry_id).toBe(retried.body.ledger_entry_id)
    const entry = await server.app.db.selectFrom('ledger_entries').select('status').where('id', '=', retried.body.ledger_entry_id ?? '').executeTakeFirstOrThrow()
    expect(entry.status).toBe('pending')
    // A pending debit is reserved at once.
    expect(before - (await available(clearingOf(drain)))).toBe(13_030_000n)
    await server.app.transact((tx) => advanceDrain(tx, later, drain.id))
    expect((await drainState(drain.id)).state).toBe('payment_processed')
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it('transfers: release into the wallet, refund to an address, retry; undeliverable is not retried', async () => {
    const released = await heldTransfer(13.03)
    const walletBefore = await available(walletUsdc())
    const release = await act(`transfers/${released}/release`, { by: 'ada', reason: 'to the wallet', wallet_id: walletId })
    expect(release.status, release.text).toBe(200)
    expect(release.body).toMatchObject({ target_type: 'transfer', from_state: 'error', to_state: 'released', amount: '13.030000' })
    expect((await available(walletUsdc())) - walletBefore).toBe(13_030_000n)
    expect(await available(transferClearing(released))).toBe(0n)

    const refunded = await heldTransfer(13.01)
    expect((await act(`transfers/${refunded}/retry`, { by: 'ada', reason: 'r' })).status).toBe(409)
    const to = randomEvmAddress()
    const refund = await act(`transfers/${refunded}/refund`, { by: 'ada', reason: 'sender asked', return_address: to })
    expect(refund.status, refund.text).toBe(200)
    expect(refund.body).toMatchObject({ from_state: 'undeliverable', to_state: 'refunded', return_address: to })
    expect(await available(transferClearing(refunded))).toBe(0n)

    const retried = await heldTransfer(13.03)
    const retry = await act(`transfers/${retried}/retry`, { by: 'ada', reason: 'again' })
    expect(retry.status, retry.text).toBe(200)
    expect(retry.body.to_state).toBe('payment_submitted')
    await server.app.transact((tx) => advanceTransfer(tx, later, retried))
    expect((await available(walletUsdc())) - walletBefore).toBe(13_030_000n + 13_030_000n)
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })
})

describe('held money: exact under concurrency, and bad input changes nothing', () => {
  it('two operators acting on one drain at once: one wins, the other gets 409', async () => {
    const drain = await heldDrain('13.03')
    const walletBefore = await available(walletUsdc())
    const [first, second] = await Promise.all([
      act(`drains/${drain.id}/release`, { by: 'ada', reason: 'mine', wallet_id: walletId }),
      act(`drains/${drain.id}/refund`, { by: 'bob', reason: 'mine', return_address: randomEvmAddress() }),
    ])
    const statuses = [first.status, second.status].sort()
    expect(statuses).toEqual([200, 409])
    const audit = await server.app.db.selectFrom('held_actions').select('action').where('target_id', '=', drain.id).execute()
    expect(audit).toHaveLength(1)
    const wallet = (await available(walletUsdc())) - walletBefore
    expect(wallet).toBe(audit[0]?.action === 'release' ? 13_030_000n : 0n)
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it('unknown, not held, another application\'s: 404 or 409, nothing written', async () => {
    const drain = await heldDrain('13.03')
    const count = async () => (await server.app.db.selectFrom('held_actions').select('id').execute()).length
    const before = await count()
    expect((await act(`drains/${MISSING_UUID}/retry`, { by: 'ada', reason: 'r' })).status).toBe(404)
    expect((await act(`transfers/${MISSING_UUID}/release`, { by: 'ada', reason: 'r', wallet_id: walletId })).status).toBe(404)
    const other = await act(`drains/${drain.id}/retry`, { by: 'eve', reason: 'r' }, stranger)
    expect(other.status).toBe(404)
    expect(other.body).toMatchObject({ message: 'Drain not found' })
    expect((await act(`drains/${drain.id}/release`, { by: 'ada', reason: 'r', wallet_id: MISSING_UUID })).status).toBe(404)
    expect((await act(`drains/${drain.id}/release`, { by: ' ', reason: 'r', wallet_id: walletId })).status).toBe(400)
    const processed = await heldDrain('2')
    expect((await act(`drains/${processed.id}/refund`, { by: 'ada', reason: 'r', return_address: randomEvmAddress() })).status).toBe(409)
    expect(await count()).toBe(before)
    expect((await drainState(drain.id)).state).toBe('error')
  })
})

describe('devplatform held', () => {
  const execute = promisify(execFile)
  async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await execute(process.execPath, [CLI, ...args], { env: serviceEnv({ DATABASE_URL: server.database.url }), timeout: 20_000 })
      return { code: 0, stdout, stderr }
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string }
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
    }
  }

  it('release with --by and --reason: the audit record printed; the same --idempotency-key again does nothing more; a bad id exits 2', async () => {
    const drain = await heldDrain('13.01')
    const walletBefore = await available(walletUsdc())
    const args = ['held', 'release', '--app', operator.appId, '--drain', drain.id, '--wallet', walletId, '--by', 'grace@ops', '--reason', 'ticket 7', '--idempotency-key', `k-${drain.id}`, '--json']
    const [first, second] = [await cli(...args), await cli(...args)]
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    const printed = JSON.parse(first.stdout) as HeldAction & { idempotency_key: string }
    expect(printed).toMatchObject({ target_id: drain.id, action: 'release', to_state: 'released', amount: '13.010000', by: 'grace@ops', reason: 'ticket 7', idempotency_key: `k-${drain.id}` })
    expect(second.code).toBe(0)
    expect((JSON.parse(second.stdout) as HeldAction).id).toBe(printed.id)
    expect((await available(walletUsdc())) - walletBefore).toBe(13_010_000n)
    const unknown = await cli('held', 'retry', '--app', operator.appId, '--drain', MISSING_UUID, '--by', 'grace', '--reason', 'r')
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('Drain not found')
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })
})
