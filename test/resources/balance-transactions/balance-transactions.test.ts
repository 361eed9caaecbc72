import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Currency, parseAmount } from '../../../src/ledger/amount.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../../helper.js'

/**
 * GET /balance-transactions: every movement of the application's money from the ledger, exact in
 * decimal strings, adding up to GET /balance (the wallets) and to the developer fees collected.
 */

interface Txn {
  id: string
  type: string
  balance: 'wallet' | 'fees'
  currency: Currency
  amount: string
  fee: string
  net: string
  status: string
  source: { type: string; id: string }
  created_at: string
}
interface Page {
  data: Txn[]
  has_more: boolean
}

let server: TestServer
let key: TestKey
let other: TestKey

const TERMINAL = new Set(['payment_processed', 'undeliverable', 'error', 'returned', 'canceled', 'refunded'])

async function post<T>(path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await server.request<T>('POST', path, { key, body, headers })
  expect(res.status, `${path}: ${res.text}`).toBeLessThan(300)
  return res.body
}

/** A drain of `amount` USDC at 2 % through an address paying to `destination`, until it ends. */
async function drain(amount: string, destination: Record<string, unknown>): Promise<string> {
  const customer = await post<{ id: string }>('/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+14155550100' })
  const base = `/api/v0/customers/${customer.id}/liquidation_addresses`
  const address = await post<{ id: string }>(base, { chain: 'base', currency: 'usdc', address: randomEvmAddress(), custom_developer_fee_percent: '2', ...destination })
  const made = await post<{ id: string }>(`${base}/${address.id}/simulate_deposit`, { amount })
  const deadline = Date.now() + 20_000
  for (;;) {
    const read = await server.request<{ state: string }>('GET', `${base}/${address.id}/drains/${made.id}`, { key })
    if (TERMINAL.has(read.body.state)) return made.id
    if (Date.now() > deadline) throw new Error(`drain still ${read.body.state}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

beforeAll(async () => {
  server = await startTestServer({ config: { drains: { scheduler: true, fastDelayMs: 20, achDelayMs: 20, pollIntervalMs: 10, concurrency: 4 } } })
  key = await server.createKey({ environment: 'development' })
  other = await server.createKey({ environment: 'development' })
  const wallets = (await server.request<{ data: { id: string; chain: string }[] }>('GET', '/api/v0/wallets', { key })).body.data
  const base = wallets.find((wallet) => wallet.chain === 'base')?.id
  // Mixed activity: card payments in both currencies and a refund; drains into the wallet and out to
  // a bank, each with a 2 % fee; a failed drain (held in clearing, not the application's balance);
  // a payout from the wallet with a developer fee; a USDC → EURC conversion.
  const payment = await post<{ id: string }>('/api/v0/test-payment', { amount: 100, currency: 'USD', description: 'a' }, { 'idempotency-key': 'btx-1' })
  await post('/api/v0/test-payment', { amount: 20.5, currency: 'EUR', description: 'b' }, { 'idempotency-key': 'btx-2' })
  await post('/api/v0/test-payment', { amount: 7.25, currency: 'USD', description: 'c' }, { 'idempotency-key': 'btx-3' })
  await post(`/api/v0/test-payment/${payment.id}/refund`, undefined, { 'idempotency-key': 'btx-4' })
  await drain('300.123457', { destination_payment_rail: 'bridge_wallet', bridge_wallet_id: base, destination_currency: 'usdc' })
  for (let i = 0; i < 3; i++) await drain('250', { destination_payment_rail: 'ach', destination_currency: 'usd', external_account_id: 'ext_1' })
  await drain('13.03', { destination_payment_rail: 'ach', destination_currency: 'usd', external_account_id: 'ext_1' })
  await post('/api/v0/transfers/external-stablecoin-transfer', { sourceWalletId: base, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'beneficiary_1', amount: 40, developer_fee: 1.5 })
  await post('/api/v0/transfers/stablecoin-conversion', { walletId: base, sourceNetwork: 'base', sourceCurrency: 'usdc', destinationCurrency: 'eurc', amount: 10 })
  // The money scheduler settles the two transfers: the sums are compared once nothing moves.
  const deadline = Date.now() + 20_000
  while ((await server.app.db.selectFrom('ledger_entries').select('id').where('app_id', '=', key.appId).where('status', '=', 'pending').execute()).length > 0) {
    if (Date.now() > deadline) throw new Error('entries still pending')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
})
afterAll(async () => server.close())

async function all(query = ''): Promise<Txn[]> {
  const found: Txn[] = []
  let after = ''
  for (;;) {
    const page = await server.request<Page>('GET', `/api/v0/balance-transactions?take=3${query}${after}`, { key })
    expect(page.status, page.text).toBe(200)
    found.push(...page.body.data)
    if (!page.body.has_more) return found
    after = `&starting_after=${page.body.data.at(-1)?.id ?? ''}`
  }
}

const units = (text: string, currency: Currency) => (text.startsWith('-') ? -parseAmount(text.slice(1), currency) : parseAmount(text, currency))
const sum = (txns: Txn[], field: 'net' | 'amount' | 'fee', currency: Currency) => txns.filter((txn) => txn.currency === currency).reduce((total, txn) => total + units(txn[field], txn.currency), 0n)

describe('GET /balance-transactions', () => {
  it("the wallet movements' nets add up to GET /balance, to the unit, in each currency; amount = net + fee on every one", async () => {
    const txns = await all()
    const balance = (await server.request<{ usdc: { total_balance: string }; eurc: { total_balance: string } }>('GET', '/api/v0/balance', { key })).body
    const wallet = txns.filter((txn) => txn.balance === 'wallet')
    expect(sum(wallet, 'net', 'usdc')).toBe(parseAmount(balance.usdc.total_balance, 'usdc'))
    expect(sum(wallet, 'net', 'eurc')).toBe(parseAmount(balance.eurc.total_balance, 'eurc'))
    expect(sum(wallet, 'net', 'usdc')).toBeGreaterThan(0n)
    for (const txn of txns) expect(units(txn.amount, txn.currency), txn.id).toBe(units(txn.net, txn.currency) + units(txn.fee, txn.currency))
    // Newest first, every id once.
    expect(new Set(txns.map((txn) => txn.id)).size).toBe(txns.length)
    expect([...txns].sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0)).map((txn) => txn.created_at)).toEqual(txns.map((txn) => txn.created_at))
    expect(new Set(wallet.map((txn) => txn.type))).toEqual(new Set(['test_payment', 'refund', 'drain', 'transfer']))
  })

  it('type=fee is the fee report: the developer fees collected, adding up to the fee accounts', async () => {
    const fees = await all('&type=fee')
    // 2 % of 300.123457 (rounded down) and of 3 × 250, and the payout's 1.5: 22.502469 USDC; the failed drain's fee is never collected.
    const collected = sum(fees, 'net', 'usdc')
    expect(collected).toBe(6_002_469n + 3n * 5_000_000n + 1_500_000n)
    expect(fees.every((txn) => txn.type === 'fee' && txn.balance === 'fees' && txn.fee === '0.000000' && txn.status === 'posted')).toBe(true)
    const rows = await server.app.db.selectFrom('ledger_accounts').select('available').where('app_id', '=', key.appId).where('kind', '=', 'developer_fee').where('environment', '=', 'sandbox').execute()
    expect(collected).toBe(rows.reduce((total, row) => total + BigInt(row.available), 0n))
    // The wallet movement of a drain into the wallet shows the fee it paid.
    const intoWallet = (await all('&type=drain'))[0]
    expect(intoWallet).toMatchObject({ amount: '300.123457', fee: '6.002469', net: '294.120988', currency: 'usdc', status: 'posted', source: { type: 'drain' } })
  })

  it('filters: several types, currency, created_after/created_before (exclusive, both sides); another application sees none of it', async () => {
    const txns = await all()
    expect((await all('&type=refund,test_payment')).map((txn) => txn.id)).toEqual(txns.filter((txn) => ['refund', 'test_payment'].includes(txn.type)).map((txn) => txn.id))
    expect((await all('&currency=eurc')).map((txn) => txn.id)).toEqual(txns.filter((txn) => txn.currency === 'eurc').map((txn) => txn.id))
    const refund = txns.find((txn) => txn.type === 'refund') as Txn
    const at = Date.parse(refund.created_at)
    const iso = (ms: number) => new Date(ms).toISOString()
    expect((await all(`&type=refund&created_after=${iso(at - 1)}`)).length).toBe(1)
    expect((await all(`&type=refund&created_after=${iso(at)}`)).length).toBe(0)
    expect((await all(`&type=refund&created_before=${iso(at + 1)}`)).length).toBe(1)
    expect((await all(`&type=refund&created_before=${iso(at)}`)).length).toBe(0)
    const list = (query: string) => server.request('GET', `/api/v0/balance-transactions?${query}`, { key })
    expect((await list(`created_after=${iso(at)}&created_before=${iso(at)}`)).status).toBe(400)
    expect((await list('type=payout')).body).toMatchObject({ statusCode: 400, message: expect.stringMatching(/^type: "payout" is not a balance transaction type/) })
    expect((await list('currency=dai')).status).toBe(400)
    expect((await list('take=0')).status).toBe(400)
    expect((await list('take=101')).status).toBe(400)
    expect((await list('take=100')).status).toBe(200)
    expect((await list('created_after=2026-02-30T00:00:00Z')).status).toBe(400)
    expect((await list('starting_after=nope')).status).toBe(400)
    // Another application's movement is no cursor, and its list is its own.
    expect((await server.request('GET', `/api/v0/balance-transactions?starting_after=${refund.id}`, { key: other })).status).toBe(400)
    expect((await server.request<Page>('GET', '/api/v0/balance-transactions', { key: other })).body).toEqual({ data: [], has_more: false })
  })
})
