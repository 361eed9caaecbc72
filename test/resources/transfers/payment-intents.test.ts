import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyLedger } from '../../../src/ledger/ledger.js'
import type { Transfer } from '../../../src/resources/transfers/schemas.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { available, baseWallet, settled, walletsOf } from './fixtures.js'

/** The two payment-intent operations, their required idempotency-key, and the routes that follow an intent. */

let server: TestServer
let key: TestKey

beforeAll(async () => {
  server = await startTestServer({ config: { drains: { scheduler: true, fastDelayMs: 30, achDelayMs: 60, pollIntervalMs: 15, concurrency: 4 } } })
  key = await server.createKey({ environment: 'development' })
})

afterAll(async () => {
  await server.close()
})

let keys = 0
/** `idempotencyKey` null sends none. */
const post = (path: string, body: unknown, as: TestKey = key, idempotencyKey: string | null = `intent-${++keys}-${Date.now()}`) =>
  server.request<Transfer>('POST', `/api/v0/payment-intents/${path}`, { key: as, body, headers: idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey } })
const intentCount = async () => Number((await server.database.query<{ n: number | string }>("select count(*) as n from transfers where kind like 'payment_intent_%'"))[0]?.n ?? 0)
const BASE = '/api/v0/payment-intents'

describe('POST /payment-intents/bank and /stablecoin', () => {
  it('requires idempotency-key: 400 without it, nothing written; a replay answers the first intent', async () => {
    const body = { sourcePaymentRail: 'ach_push', sourceCurrency: 'usd', destinationCurrency: 'usdc', destinationNetwork: 'base', amount: '25.00' }
    const count = await intentCount()
    const missing = await post('bank', body, key, null)
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({ message: 'The idempotency-key header is required for this operation' })
    expect(await intentCount()).toBe(count)
    const first = await post('bank', body, key, 'intent-replay-1')
    const again = await post('bank', body, key, 'intent-replay-1')
    expect(first.status, first.text).toBe(201)
    expect(again.status).toBe(201)
    expect(again.body.id).toBe(first.body.id)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await intentCount()).toBe(count + 1)
  })

  it('a bank intent waits for the payer, then settles USD into the application\'s base wallet as USDC, with its own events', async () => {
    const own = await server.createKey({ environment: 'development' })
    const created = await post('bank', { sourcePaymentRail: 'ACH_PUSH', sourceCurrency: 'usd', destinationCurrency: 'usdc', destinationNetwork: 'base', amount: '25.00', customer_first_name: 'Ada', customer_email: 'ada@example.com', customer_countryISO: 'gb', ach_reference: 'INV 7' }, own)
    expect(created.status, created.text).toBe(201)
    const wallet = await baseWallet(server, own)
    expect(created.body).toMatchObject({
      type: 'payment_intent_bank',
      state: 'awaiting_funds',
      amount: '25.00',
      source: { payment_rail: 'ach_push', currency: 'usd', ach_reference: 'INV 7' },
      destination: { payment_rail: 'base', currency: 'usdc', bridge_wallet_id: wallet.id },
      source_deposit_instructions: { payment_rail: 'ach_push', currency: 'usd', amount: '25.00' },
      customer: { first_name: 'Ada', email: 'ada@example.com', countryISO: 'GB' },
    })
    const paid = await server.request<Transfer>('POST', `${BASE}/${created.body.id}/simulate_funds`, { key: own })
    expect(paid.status, paid.text).toBe(200)
    expect((await settled(server, own, created.body.id, BASE)).state).toBe('payment_processed')
    expect(await available(server, own, wallet.id)).toBe('25.000000')
    const events = await server.database.query<{ type: string; payload: string }>("select type, payload from events where type like 'payment_intent.%' order by created_at, id")
    const states = events.filter((event) => (JSON.parse(event.payload) as { data: Transfer }).data.id === created.body.id).map((event) => `${event.type} ${(JSON.parse(event.payload) as { data: Transfer }).data.state}`)
    expect(states).toEqual(['payment_intent.created awaiting_funds', 'payment_intent.updated funds_received', 'payment_intent.updated payment_submitted', 'payment_intent.updated payment_processed'])
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it('a flexible intent (no amount) takes the amount the payer sends', async () => {
    const own = await server.createKey({ environment: 'development' })
    const created = await post('stablecoin', { sourceCurrency: 'usdc', sourceNetwork: 'ethereum', destinationNetwork: 'solana' }, own)
    expect(created.status, created.text).toBe(201)
    expect(created.body.amount).toBeNull()
    expect(created.body.source_deposit_instructions).toMatchObject({ payment_rail: 'ethereum', currency: 'usdc', amount: null })
    const without = await server.request('POST', `${BASE}/${created.body.id}/simulate_funds`, { key: own })
    expect(without.status).toBe(400)
    expect(without.body).toMatchObject({ message: 'amount is required: this one has a flexible amount' })
    const paid = await server.request<Transfer>('POST', `${BASE}/${created.body.id}/simulate_funds`, { key: own, body: { amount: '7.5' } })
    expect(paid.status, paid.text).toBe(200)
    expect(paid.body.amount).toBe('7.500000')
    expect((await settled(server, own, created.body.id, BASE)).state).toBe('payment_processed')
    const solana = (await walletsOf(server, own)).find((wallet) => wallet.chain === 'solana')
    expect(await available(server, own, solana?.id ?? '')).toBe('7.500000')
  })

  it('converts EURC to USDC at the buy rate, and pays out to a destinationAddress without touching the wallets', async () => {
    const own = await server.createKey({ environment: 'development' })
    const to = randomEvmAddress()
    const created = await post('stablecoin', { sourceCurrency: 'eurc', sourceNetwork: 'base', destinationNetwork: 'arbitrum', destinationCurrency: 'usdc', destinationAddress: to, amount: 10 }, own)
    expect(created.status, created.text).toBe(201)
    expect(created.body.destination).toMatchObject({ payment_rail: 'arbitrum', currency: 'usdc', to_address: to })
    await server.request('POST', `${BASE}/${created.body.id}/simulate_funds`, { key: own })
    const done = await settled(server, own, created.body.id, BASE)
    expect(done).toMatchObject({ state: 'payment_processed', receipt: { exchange_rate: expect.any(String) as string } })
    for (const wallet of await walletsOf(server, own)) expect(await available(server, own, wallet.id)).toBe('0.000000')
  })

  it('refuses each rule on both sides of its boundary, writing nothing', async () => {
    const bank = (fields: Record<string, unknown>) => ({ sourcePaymentRail: 'wire', sourceCurrency: 'usd', destinationCurrency: 'usdc', destinationNetwork: 'base', amount: '1000.00', ...fields })
    const refused: [Record<string, unknown>, string][] = [
      [{ amount: '1000.01' }, 'customer_first_name and customer_last_name are required above 1000 usd'],
      [{ amount: '1000.01', customer_first_name: 'Ada' }, 'customer_first_name and customer_last_name are required above 1000 usd'],
      [{ customer_countryISO: 'US' }, 'customer_provinceISO is required for a payer in US'],
      [{ customer_countryISO: 'USA' }, 'customer_countryISO must be an ISO 3166-1 alpha-2 code (2 letters)'],
      [{ destinationNetwork: 'polygon' }, "destinationNetwork must be one of base, ethereum, solana to settle into the application's wallet; give a destinationAddress to settle elsewhere"],
      [{ destinationNetwork: 'polygon', destinationAddress: 'nope' }, 'destinationAddress must be a valid polygon address'],
      [{ sourcePaymentRail: 'spei' }, 'sourcePaymentRail must be one of ach, ach_push, ach_same_day, wire for usd'],
      [{ amount: '1.001' }, 'amount: "1.001" has more than 2 decimals, the most USD has'],
      [{ sepa_reference: 'ABCDE' }, 'sepa_reference must be longer than or equal to 6 characters'],
      [{ ach_reference: 'ABCDEFGHIJK' }, 'ach_reference must be shorter than or equal to 10 characters'],
    ]
    const count = await intentCount()
    for (const [fields, message] of refused) {
      const answer = await post('bank', bank(fields))
      expect(answer.status, JSON.stringify(fields)).toBe(400)
      expect((answer.body as unknown as { message: string }).message).toContain(message)
    }
    expect(await intentCount()).toBe(count)
    for (const fields of [{}, { amount: '1000.01', customer_first_name: 'Ada', customer_last_name: 'Lovelace' }, { customer_countryISO: 'US', customer_provinceISO: 'CA' }, { destinationNetwork: 'polygon', destinationAddress: randomEvmAddress() }, { sepa_reference: 'ABCDEF' }, { ach_reference: 'ABCDEFGHIJ' }]) {
      const answer = await post('bank', bank(fields))
      expect(answer.status, `${JSON.stringify(fields)} ${answer.text}`).toBe(201)
    }
  })
})

describe('following an intent', () => {
  it('lists, gets, and cancels intents apart from transfers; another application\'s intent is 404', async () => {
    const own = await server.createKey({ environment: 'development' })
    const created = await post('stablecoin', { sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base', amount: 1 }, own)
    const list = await server.request<{ data: Transfer[]; total: number }>('GET', BASE, { key: own })
    expect(list.body.total).toBe(1)
    expect((await server.request<{ total: number }>('GET', '/api/v0/transfers', { key: own })).body.total).toBe(0)
    expect((await server.request('GET', `/api/v0/transfers/${created.body.id}`, { key: own })).status).toBe(404)
    expect((await server.request('GET', `${BASE}/${created.body.id}`, { key })).body).toMatchObject({ statusCode: 404, message: 'Payment intent not found' })
    const canceled = await server.request<Transfer>('DELETE', `${BASE}/${created.body.id}`, { key: own })
    expect(canceled.body.state).toBe('canceled')
  })
})
