import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LedgerRepository, verifyLedger } from '../../../src/ledger/ledger.js'
import { walletAccountKey, WalletsRepository } from '../../../src/resources/wallets/repository.js'
import type { Drain } from '../../../src/resources/drains/schemas.js'
import { MISSING_UUID, randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../../helper.js'

/**
 * Deposits to a liquidation address become drains that move on by themselves (the scheduler runs
 * in the test server with short sandbox delays), through the ledger, with their events.
 */

let server: TestServer
let sandboxKey: TestKey
let liveKey: TestKey

/** Where a drain ends when nothing more follows (returned and canceled are followed by a refund when there is a return address). */
const TERMINAL = new Set(['payment_processed', 'undeliverable', 'refunded', 'error'])

beforeAll(async () => {
  server = await startTestServer({ config: { drains: { scheduler: true, fastDelayMs: 40, achDelayMs: 120, pollIntervalMs: 20, concurrency: 4 } } })
  sandboxKey = await server.createKey({ environment: 'development' })
  liveKey = await server.createKey({ appId: sandboxKey.appId, environment: 'production' })
})

afterAll(async () => {
  await server.close()
})

async function customer(key: TestKey): Promise<string> {
  const created = await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+14155550100' } })
  expect(created.status).toBe(201)
  return created.body.id
}

interface AddressFixture {
  customerId: string
  addressId: string
  base: string
}

async function liquidationAddress(key: TestKey, fields: Record<string, unknown> = {}): Promise<AddressFixture> {
  const customerId = await customer(key)
  const created = await server.request<{ id: string }>('POST', `/api/v0/customers/${customerId}/liquidation_addresses`, {
    key,
    body: { chain: 'base', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_123', ...fields },
  })
  expect(created.status, created.text).toBe(201)
  return { customerId, addressId: created.body.id, base: `/api/v0/customers/${customerId}/liquidation_addresses/${created.body.id}` }
}

async function deposit(fixture: AddressFixture, body: Record<string, unknown>, key: TestKey = sandboxKey) {
  return server.request<Drain>('POST', `${fixture.base}/simulate_deposit`, { key, body })
}

async function settled(fixture: AddressFixture, drainId: string, key: TestKey = sandboxKey): Promise<Drain> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const read = await server.request<Drain>('GET', `${fixture.base}/drains/${drainId}`, { key })
    expect(read.status).toBe(200)
    if (TERMINAL.has(read.body.state)) return read.body
    if (Date.now() > deadline) throw new Error(`drain ${drainId} is still ${read.body.state}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** The drain's events, oldest first, as their deliveries would carry them. */
async function eventsOf(drainId: string): Promise<{ type: string; state: string }[]> {
  const rows = await server.database.query<{ type: string; payload: string }>('select type, payload from events where type like ? order by created_at, id', 'liquidation_address.drain.%')
  return rows
    .map((row) => ({ type: row.type, drain: (JSON.parse(row.payload) as { data: Drain }).data }))
    .filter((event) => event.drain.id === drainId)
    .map((event) => ({ type: event.type, state: event.drain.state }))
}

describe('simulate_deposit and the drain it starts', () => {
  it('takes a deposit to payment_processed: fee, conversion to USD cents rounded down, events for each state, a ledger that verifies', async () => {
    const fixture = await liquidationAddress(sandboxKey, { custom_developer_fee_percent: '1.5' })
    const created = await deposit(fixture, { amount: '100.25' })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({
      state: 'funds_received',
      amount: '100.250000',
      currency: 'usdc',
      source_payment_rail: 'base',
      liquidation_address_id: fixture.addressId,
      customer_id: fixture.customerId,
      destination: { payment_rail: 'ach', currency: 'usd', external_account_id: 'ext_123' },
      receipt: { initial_amount: '100.250000', developer_fee: '1.503750', subtotal_amount: '98.746250', destination_currency: 'usd' },
    })
    expect(created.body.deposit_tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    const done = await settled(fixture, created.body.id)
    expect(done.state).toBe('payment_processed')
    expect(done.receipt).toEqual({
      initial_amount: '100.250000',
      developer_fee: '1.503750',
      subtotal_amount: '98.746250',
      destination_currency: 'usd',
      exchange_rate: '1',
      converted_amount: '98.74',
      gas_fee: '0.00',
      outgoing_amount: '98.74',
    })
    expect(done.destination.trace_number).toMatch(/^\d{15}$/)
    expect(await eventsOf(done.id)).toEqual([
      { type: 'liquidation_address.drain.created', state: 'funds_received' },
      { type: 'liquidation_address.drain.updated', state: 'payment_submitted' },
      { type: 'liquidation_address.drain.updated', state: 'payment_processed' },
    ])
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it("credits the application's wallet when bridge_wallet_id names it, in the wallet's currency", async () => {
    const [wallet] = await server.app.transact((tx) => new WalletsRepository(tx.db).ensure('sandbox', sandboxKey.appId))
    if (wallet === undefined) throw new Error('no wallet')
    const fixture = await liquidationAddress(sandboxKey, { destination_payment_rail: 'bridge_wallet', bridge_wallet_id: wallet.id, destination_currency: 'usdc', external_account_id: undefined })
    const created = await deposit(fixture, { amount: '250' })
    const done = await settled(fixture, created.body.id)
    expect(done.state).toBe('payment_processed')
    expect(done.receipt.outgoing_amount).toBe('250.000000')
    expect(done.destination_tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    const ledger = new LedgerRepository(server.app.db)
    const [balance] = await ledger.balances([await server.app.transact((tx) => new LedgerRepository(tx.db).account(walletAccountKey(wallet, 'usdc')))])
    expect(balance?.available).toBe(250_000_000n)
  })

  it('converts at the buy rate of the moment and stores it on the drain (USDC to EUR over SEPA)', async () => {
    const fixture = await liquidationAddress(sandboxKey, { destination_payment_rail: 'sepa', destination_currency: 'eur', destination_sepa_reference: 'REF-123456' })
    const created = await deposit(fixture, { amount: '10' })
    const done = await settled(fixture, created.body.id)
    expect(done.state).toBe('payment_processed')
    const rate = done.receipt.exchange_rate ?? ''
    expect(Number(rate)).toBeGreaterThan(0)
    // 10 USDC at the rate, rounded down to the cent: computed here in integers too.
    const [whole = '0', fraction = ''] = rate.split('.')
    const rateUnits = BigInt(whole + fraction)
    const cents = (10_000_000n * rateUnits) / 10n ** BigInt(fraction.length) / 10_000n
    expect(done.receipt.converted_amount).toBe(`${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`)
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })
})

describe('failure paths in the sandbox', () => {
  it('13.01 ends undeliverable with the deposit held, never paid out', async () => {
    const fixture = await liquidationAddress(sandboxKey)
    const created = await deposit(fixture, { amount: '13.01' })
    const done = await settled(fixture, created.body.id)
    expect(done.state).toBe('undeliverable')
    expect(done.return_details?.reason).toContain('sandbox')
    expect((await eventsOf(done.id)).map((event) => event.state)).toEqual(['funds_received', 'undeliverable'])
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it('13.02 is returned after submission and refunded to the return address', async () => {
    const fixture = await liquidationAddress(sandboxKey, { return_address: randomEvmAddress() })
    const created = await deposit(fixture, { amount: '13.02' })
    const deadline = Date.now() + 15_000
    let drain = created.body
    while (drain.state !== 'refunded' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25))
      drain = (await server.request<Drain>('GET', `${fixture.base}/drains/${created.body.id}`, { key: sandboxKey })).body
    }
    expect(drain.state).toBe('refunded')
    expect(drain.refund_tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect((await eventsOf(drain.id)).map((event) => event.state)).toEqual(['funds_received', 'payment_submitted', 'returned', 'refunded'])
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it('13.02 without a return address stays returned, the funds held', async () => {
    const fixture = await liquidationAddress(sandboxKey)
    const created = await deposit(fixture, { amount: '13.02' })
    const deadline = Date.now() + 15_000
    let drain = created.body
    while (drain.state !== 'returned' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25))
      drain = (await server.request<Drain>('GET', `${fixture.base}/drains/${created.body.id}`, { key: sandboxKey })).body
    }
    expect(drain.state).toBe('returned')
    const row = await server.database.query<{ next_step_at: string | null }>('select next_step_at from drains where id = ?', drain.id)
    expect(row[0]?.next_step_at).toBeNull()
  })

  it('13.03 ends in error', async () => {
    const fixture = await liquidationAddress(sandboxKey)
    const created = await deposit(fixture, { amount: '13.03' })
    expect((await settled(fixture, created.body.id)).state).toBe('error')
  })

  it('a deposit to a deactivated address is canceled, then refunded to its return address', async () => {
    const fixture = await liquidationAddress(sandboxKey, { return_address: randomEvmAddress() })
    await server.app.transact((tx) => tx.db.updateTable('liquidation_addresses').set({ state: 'deactivated' }).where('id', '=', fixture.addressId).execute())
    const created = await deposit(fixture, { amount: '5' })
    expect(created.status).toBe(201)
    const deadline = Date.now() + 15_000
    let drain = created.body
    while (drain.state !== 'refunded' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25))
      drain = (await server.request<Drain>('GET', `${fixture.base}/drains/${created.body.id}`, { key: sandboxKey })).body
    }
    expect((await eventsOf(drain.id)).map((event) => event.state)).toEqual(['funds_received', 'canceled', 'refunded'])
    expect(drain.return_details?.reason).toBe('the liquidation address is deactivated')
  })
})

describe('validation: every rule at its boundary, nothing written when refused', () => {
  let fixture: AddressFixture
  beforeAll(async () => {
    fixture = await liquidationAddress(sandboxKey)
  })

  it.each([
    ['0', 'amount must be greater than 0'],
    ['0.0000001', 'amount: "0.0000001" has more than 6 decimals, the most USDC has'],
    ['1000000000.000001', 'amount must be at most 1000000000'],
    ['10000000000', 'amount must be a decimal string'],
    ['-1', 'amount must be a decimal string'],
    ['1e3', 'amount must be a decimal string'],
    ['', 'amount must be a decimal string'],
    ['01', 'amount must be a decimal string'],
    ['1.', 'amount must be a decimal string'],
  ])('amount %j is refused', async (amount, message) => {
    const before = await server.database.count('select count(*) as n from drains')
    const refused = await deposit(fixture, { amount })
    expect(refused.status).toBe(400)
    expect((refused.body as unknown as { message: string }).message).toContain(message)
    expect(await server.database.count('select count(*) as n from drains')).toBe(before)
  })

  it.each(['0.000001', '1000000000', '1000000000.000000'])('amount %j is taken', async (amount) => {
    expect((await deposit(fixture, { amount })).status).toBe(201)
  })

  it('amount is required, and unknown fields are refused', async () => {
    expect((await deposit(fixture, {})).status).toBe(400)
    expect((await deposit(fixture, { amount: '1', memo: 'x' })).status).toBe(400)
    expect((await deposit(fixture, { amount: 1 })).status).toBe(400)
  })

  it('from_address must be valid on the address chain', async () => {
    const refused = await deposit(fixture, { amount: '1', from_address: 'So11111111111111111111111111111111111111112' })
    expect(refused.status).toBe(400)
    expect((refused.body as unknown as { message: string }).message).toContain('from_address must be a valid base address')
    expect((await deposit(fixture, { amount: '1', from_address: randomEvmAddress() })).status).toBe(201)
  })

  it('deposit_tx_hash: 16 to 128 letters and digits, one drain per hash and address (409)', async () => {
    expect((await deposit(fixture, { amount: '1', deposit_tx_hash: 'a'.repeat(15) })).status).toBe(400)
    expect((await deposit(fixture, { amount: '1', deposit_tx_hash: 'a'.repeat(129) })).status).toBe(400)
    expect((await deposit(fixture, { amount: '1', deposit_tx_hash: 'a'.repeat(128) })).status).toBe(201)
    const hash = `0x${'ab'.repeat(32)}`
    expect((await deposit(fixture, { amount: '1', deposit_tx_hash: hash })).status).toBe(201)
    const again = await deposit(fixture, { amount: '2', deposit_tx_hash: hash })
    expect(again.status).toBe(409)
    expect((again.body as unknown as { message: string }).message).toBe('A deposit with this deposit_tx_hash was already received at this liquidation address')
  })
})

describe('environments and tenants', () => {
  it('a production key may not simulate a deposit (403) and sees no sandbox drain', async () => {
    const fixture = await liquidationAddress(sandboxKey)
    const refused = await deposit(fixture, { amount: '1' }, liveKey)
    expect(refused.status).toBe(403)
    expect((refused.body as unknown as { message: string }).message).toBe('Deposits can only be simulated with a development key: a production key moves live money')
    const created = await deposit(fixture, { amount: '1' })
    expect(created.status).toBe(201)
    expect((await server.request('GET', `${fixture.base}/drains/${created.body.id}`, { key: liveKey })).status).toBe(404)
    const listed = await server.request<{ data: Drain[]; total: number }>('GET', `${fixture.base}/drains`, { key: liveKey })
    expect(listed.body).toMatchObject({ data: [], total: 0 })
  })

  it("another application's address and drains answer exactly like missing ones", async () => {
    const fixture = await liquidationAddress(sandboxKey)
    const created = await deposit(fixture, { amount: '1' })
    const stranger = await server.createKey({ environment: 'development' })
    const theirs = await server.request('GET', `${fixture.base}/drains/${created.body.id}`, { key: stranger })
    expect(theirs.status).toBe(404)
    expect((await deposit(fixture, { amount: '1' }, stranger)).status).toBe(404)
    const missing = await server.request('GET', `${fixture.base}/drains/${MISSING_UUID}`, { key: sandboxKey })
    expect(missing.status).toBe(404)
    expect((missing.body as { message: string }).message).toBe('Drain not found')
    const unknownAddress = await server.request('GET', `/api/v0/customers/${fixture.customerId}/liquidation_addresses/${MISSING_UUID}/drains`, { key: sandboxKey })
    expect((unknownAddress.body as { message: string }).message).toBe('Liquidation address not found')
    expect((await server.request('GET', `${fixture.base}/drains/not-a-uuid`, { key: sandboxKey })).status).toBe(400)
  })

  it('lists newest first, paged', async () => {
    const fixture = await liquidationAddress(sandboxKey)
    const ids: string[] = []
    for (const amount of ['1', '2', '3']) ids.push((await deposit(fixture, { amount })).body.id)
    const page = await server.request<{ data: Drain[]; total: number; skip: number; take: number }>('GET', `${fixture.base}/drains?take=2`, { key: sandboxKey })
    expect(page.body.total).toBe(3)
    expect(page.body.data.map((drain) => drain.id)).toEqual([ids[2], ids[1]])
    const next = await server.request<{ data: Drain[] }>('GET', `${fixture.base}/drains?take=2&skip=2`, { key: sandboxKey })
    expect(next.body.data.map((drain) => drain.id)).toEqual([ids[0]])
  })
})
