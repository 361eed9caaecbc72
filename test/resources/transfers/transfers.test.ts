import { testChainsConfig } from '../../helpers/chains.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyLedger } from '../../../src/ledger/ledger.js'
import type { Transfer } from '../../../src/resources/transfers/schemas.js'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { available, baseWallet, fund, settled, type Wallet } from './fixtures.js'

/**
 * The five transfer operations and the routes that follow a transfer (list, get, cancel,
 * simulate_funds), through the ledger, on a server whose scheduler runs with short sandbox delays.
 */

let server: TestServer
let key: TestKey
let liveKey: TestKey
let wallet: Wallet

beforeAll(async () => {
  server = await startTestServer({ config: { chains: testChainsConfig(), drains: { scheduler: true, fastDelayMs: 30, achDelayMs: 60, pollIntervalMs: 15, concurrency: 4 } } })
  key = await server.createKey({ environment: 'development' })
  liveKey = await server.createKey({ appId: key.appId, environment: 'production' })
  wallet = await baseWallet(server, key)
})

afterAll(async () => {
  await server.close()
})

const post = (path: string, body: unknown, as: TestKey = key) => server.request<Transfer>('POST', `/api/v0/transfers/${path}`, { key: as, body })
const transferCount = async () => Number((await server.database.query<{ n: number | string }>('select count(*) as n from transfers'))[0]?.n ?? 0)

async function eventsOf(id: string): Promise<{ type: string; state: string }[]> {
  const rows = await server.database.query<{ type: string; payload: string }>("select type, payload from events where type like 'transfer.%' order by created_at, id")
  return rows
    .map((row) => ({ type: row.type, transfer: (JSON.parse(row.payload) as { data: Transfer }).data }))
    .filter((event) => event.transfer.id === id)
    .map((event) => ({ type: event.type, state: event.transfer.state }))
}

describe('money in: direct-bank and direct-wallet', () => {
  it('direct-bank awaits funds with bank instructions, then converts USD to USDC into the wallet, fee withheld, with an event per state', async () => {
    const created = await post('direct-bank', { walletId: wallet.id, paymentRail: 'wire', sourceCurrency: 'usd', destinationCurrency: 'usdc', amount: 100, developer_fee: 1.5, wire_message: 'order 42' })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({
      type: 'direct_bank',
      state: 'awaiting_funds',
      amount: '100.00',
      currency: 'usd',
      developer_fee: '1.50',
      source: { payment_rail: 'wire', currency: 'usd', wire_message: 'order 42' },
      destination: { payment_rail: 'base', currency: 'usdc', bridge_wallet_id: wallet.id, to_address: wallet.address },
      source_deposit_instructions: { payment_rail: 'wire', currency: 'usd', amount: '100.00', bank_routing_number: '101019644' },
    })
    expect(created.body.source_deposit_instructions?.deposit_message).toMatch(/^DP[A-Z2-7]{12}$/)
    const before = await available(server, key, wallet.id)
    const arrived = await server.request<Transfer>('POST', `/api/v0/transfers/${created.body.id}/simulate_funds`, { key })
    expect(arrived.status, arrived.text).toBe(200)
    expect(arrived.body.state).toBe('funds_received')
    const done = await settled(server, key, created.body.id)
    expect(done).toMatchObject({ state: 'payment_processed', receipt: { initial_amount: '100.00', developer_fee: '1.50', subtotal_amount: '98.50', exchange_rate: '1', converted_amount: '98.500000', final_amount: '98.500000' } })
    expect(done.destination_tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(BigInt((await available(server, key, wallet.id)).replace('.', '')) - BigInt(before.replace('.', ''))).toBe(98_500_000n)
    expect(await eventsOf(created.body.id)).toEqual([
      { type: 'transfer.created', state: 'awaiting_funds' },
      { type: 'transfer.updated', state: 'funds_received' },
      { type: 'transfer.updated', state: 'payment_submitted' },
      { type: 'transfer.updated', state: 'payment_processed' },
    ])
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it('direct-wallet gives an address on the sender\'s chain and credits the same stablecoin', async () => {
    const created = await post('direct-wallet', { walletId: wallet.id, network: 'ethereum', stableCoinCurrency: 'EURC', amount: '250.5' })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({ state: 'awaiting_funds', amount: '250.500000', currency: 'eurc', source: { payment_rail: 'ethereum', currency: 'eurc' } })
    expect(created.body.source_deposit_instructions?.to_address).toMatch(/^0x[0-9a-f]{40}$/)
    const before = await available(server, key, wallet.id, 'eurc')
    await server.request('POST', `/api/v0/transfers/${created.body.id}/simulate_funds`, { key, body: { amount: 250.5 } })
    expect((await settled(server, key, created.body.id)).state).toBe('payment_processed')
    expect(Number(await available(server, key, wallet.id, 'eurc')) - Number(before)).toBeCloseTo(250.5, 6)
  })

  it('a fixed amount arrives as itself: another amount is 400; a second arrival is 409', async () => {
    const created = await post('direct-wallet', { walletId: wallet.id, network: 'base', stableCoinCurrency: 'usdc', amount: 10 })
    const wrong = await server.request('POST', `/api/v0/transfers/${created.body.id}/simulate_funds`, { key, body: { amount: '10.000001' } })
    expect(wrong.status).toBe(400)
    expect(wrong.body).toMatchObject({ message: 'amount must be 10.000000, the amount awaited' })
    expect((await server.request('POST', `/api/v0/transfers/${created.body.id}/simulate_funds`, { key, body: { amount: '10' } })).status).toBe(200)
    const again = await server.request('POST', `/api/v0/transfers/${created.body.id}/simulate_funds`, { key })
    expect(again.status).toBe(409)
  })

  it('the sandbox amount 13.02 takes money in back to its sender: returned, then refunded, the wallet unchanged', async () => {
    const own = await server.createKey({ environment: 'development' })
    const ownWallet = await baseWallet(server, own)
    const created = await post('direct-wallet', { walletId: ownWallet.id, network: 'base', stableCoinCurrency: 'usdc', amount: 13.02 }, own)
    await server.request('POST', `/api/v0/transfers/${created.body.id}/simulate_funds`, { key: own })
    const done = await settled(server, own, created.body.id)
    expect(done.state).toBe('refunded')
    expect(done.refund_tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect((await eventsOf(created.body.id)).map((event) => event.state)).toEqual(['awaiting_funds', 'funds_received', 'payment_submitted', 'returned', 'refunded'])
    expect(await available(server, own, ownWallet.id)).toBe('0.000000')
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })
})

describe('money out: external-bank-transfer and external-stablecoin-transfer', () => {
  it('reserves amount + fee at once, pays out converted at the buy rate, and posts on payment_processed', async () => {
    const own = await server.createKey({ environment: 'development' })
    const ownWallet = await baseWallet(server, own)
    await fund(server, own, ownWallet.id, '50')
    const created = await server.request<Transfer>('POST', '/api/v0/transfers/external-bank-transfer', {
      key: own,
      body: { sourceWalletId: ownWallet.id, sourceCurrency: 'usdc', destinationCurrency: 'eur', destinationPaymentRail: 'sepa', external_account_id: 'ext_acct_1', sepa_reference: 'INV-1042', amount: 20, developer_fee: '0.5' },
    })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({
      state: 'funds_received',
      amount: '20.000000',
      developer_fee: '0.500000',
      source: { payment_rail: 'bridge_wallet', currency: 'usdc', bridge_wallet_id: ownWallet.id },
      destination: { payment_rail: 'sepa', currency: 'eur', external_account_id: 'ext_acct_1', sepa_reference: 'INV-1042' },
      receipt: { initial_amount: '20.500000', subtotal_amount: '20.000000', exchange_rate: '0.84500', converted_amount: '16.90' },
    })
    expect(created.body.source_deposit_instructions).toBeUndefined()
    // Reserved at once: 50 - 20.5 available while it is in flight.
    expect(await available(server, own, ownWallet.id)).toBe('29.500000')
    expect((await settled(server, own, created.body.id)).state).toBe('payment_processed')
    expect(await available(server, own, ownWallet.id)).toBe('29.500000')
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it('refuses what the wallet does not hold with 409 giving the balance available, and writes nothing', async () => {
    const own = await server.createKey({ environment: 'development' })
    const ownWallet = await baseWallet(server, own)
    await fund(server, own, ownWallet.id, '5')
    const count = await transferCount()
    const refused = await server.request('POST', '/api/v0/transfers/external-stablecoin-transfer', {
      key: own,
      body: { sourceWalletId: ownWallet.id, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'beneficiary_12345', amount: 5, developer_fee: 0.01 },
    })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ message: 'Insufficient funds: the wallet has 5.000000 USDC available and this transfer needs 5.010000' })
    expect(await transferCount()).toBe(count)
    const exact = await server.request<Transfer>('POST', '/api/v0/transfers/external-stablecoin-transfer', {
      key: own,
      body: { sourceWalletId: ownWallet.id, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'beneficiary_12345', amount: 5, blockchain_memo: 'thanks' },
    })
    expect(exact.status, exact.text).toBe(201)
    expect(exact.body.destination).toMatchObject({ payment_rail: 'base', beneficiary_id: 'beneficiary_12345', blockchain_memo: 'thanks' })
    expect(await available(server, own, ownWallet.id)).toBe('0.000000')
  })

  it('100 concurrent transfers against a balance that covers 10 give exactly 10 successes', async () => {
    const own = await server.createKey({ environment: 'development' })
    const ownWallet = await baseWallet(server, own)
    await fund(server, own, ownWallet.id, '10')
    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        server.request('POST', '/api/v0/transfers/external-stablecoin-transfer', {
          key: own,
          body: { sourceWalletId: ownWallet.id, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'b_1', amount: 1 },
        }),
      ),
    )
    const statuses = results.map((result) => result.status)
    expect(statuses.filter((status) => status === 201)).toHaveLength(10)
    expect(statuses.filter((status) => status === 409)).toHaveLength(90)
    expect(await available(server, own, ownWallet.id)).toBe('0.000000')
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it('the sandbox amounts 13.01 and 13.02 release the reservation: the wallet gets its funds back', async () => {
    const own = await server.createKey({ environment: 'development' })
    const ownWallet = await baseWallet(server, own)
    await fund(server, own, ownWallet.id, '30')
    const body = (amount: number) => ({ sourceWalletId: ownWallet.id, sourceCurrency: 'usdc', destinationCurrency: 'usd', destinationPaymentRail: 'ach', external_account_id: 'ext_1', amount })
    const undeliverable = await server.request<Transfer>('POST', '/api/v0/transfers/external-bank-transfer', { key: own, body: body(13.01) })
    const returned = await server.request<Transfer>('POST', '/api/v0/transfers/external-bank-transfer', { key: own, body: body(13.02) })
    expect((await settled(server, own, undeliverable.body.id)).state).toBe('undeliverable')
    expect((await settled(server, own, returned.body.id)).state).toBe('refunded')
    expect(await available(server, own, ownWallet.id)).toBe('30.000000')
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })
})

describe('stablecoin-conversion', () => {
  it('converts USDC to EURC inside the wallet at the buy rate, stored on the transfer', async () => {
    const own = await server.createKey({ environment: 'development' })
    const ownWallet = await baseWallet(server, own)
    await fund(server, own, ownWallet.id, '100')
    const created = await server.request<Transfer>('POST', '/api/v0/transfers/stablecoin-conversion', { key: own, body: { walletId: ownWallet.id, sourceNetwork: 'base', sourceCurrency: 'usdc', destinationCurrency: 'eurc', amount: 100 } })
    expect(created.status, created.text).toBe(201)
    expect(created.body.receipt).toMatchObject({ exchange_rate: '0.84500', converted_amount: '84.500000' })
    expect((await settled(server, own, created.body.id)).state).toBe('payment_processed')
    expect(await available(server, own, ownWallet.id, 'usdc')).toBe('0.000000')
    expect(await available(server, own, ownWallet.id, 'eurc')).toBe('84.500000')
  })

  it('refuses a conversion without a fresh rate with 503 and Retry-After (live money has no default rate), not guessed', async () => {
    const liveWallet = await baseWallet(server, liveKey)
    const refused = await server.request('POST', '/api/v0/transfers/stablecoin-conversion', { key: liveKey, body: { walletId: liveWallet.id, sourceNetwork: 'base', sourceCurrency: 'usdc', destinationCurrency: 'eurc', amount: 1 } })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('60')
  })
})

describe('validation: each rule on both sides of its boundary, nothing written on a refusal', () => {
  const bank = (fields: Record<string, unknown>) => ({ walletId: wallet.id, paymentRail: 'ach', sourceCurrency: 'usd', destinationCurrency: 'usdc', amount: 1, ...fields })
  const cases: [string, Record<string, unknown>, string][] = [
    ['amount with more decimals than the currency', { amount: 1.005 }, 'amount: "1.005" has more than 2 decimals, the most USD has'],
    ['amount zero', { amount: 0 }, 'amount must be greater than 0'],
    ['amount above the largest', { amount: '1000000000.01' }, 'amount must be at most 1000000000'],
    ['amount negative', { amount: -1 }, 'amount: "-1" is not a decimal amount (digits, and at most one decimal point)'],
    ['an unknown source currency', { sourceCurrency: 'gbp' }, 'sourceCurrency must be one of usd, eur, mxn'],
    ['a rail of another currency', { paymentRail: 'sepa' }, 'paymentRail must be one of ach, ach_push, ach_same_day, wire for usd'],
    ['an unknown destination currency', { destinationCurrency: 'usdt' }, 'destinationCurrency must be one of usdc, eurc'],
    ['an ach_reference of 11 characters', { ach_reference: 'ABCDEFGHIJK' }, ''],
    ['an ach_reference with punctuation', { ach_reference: 'INV-1' }, 'ach_reference must be 1 to 10 letters, digits and spaces'],
    ['a sepa_reference of 5 characters', { sepa_reference: 'ABCDE' }, ''],
    ['a developer_fee equal to the amount', { amount: 2, developer_fee: 2 }, 'developer_fee must be less than the amount'],
    ['a developer_fee with 3 decimals', { developer_fee: '0.001' }, ''],
    ['another application\'s wallet', { walletId: MISSING_UUID }, 'Bridge wallet not found'],
  ]
  it.each(cases)('refuses %s', async (_name, fields, message) => {
    const count = await transferCount()
    const refused = await post('direct-bank', bank(fields))
    expect([400, 404]).toContain(refused.status)
    if (message !== '') expect(refused.body).toMatchObject({ message })
    expect(await transferCount()).toBe(count)
  })

  it('takes each boundary value that is allowed', async () => {
    for (const fields of [{ amount: 1.01 }, { amount: '1000000000' }, { amount: 0.01 }, { ach_reference: 'ABCDEFGHIJ' }, { ach_reference: 'INV 1' }, { sepa_reference: 'ABCDEF' }, { amount: 2, developer_fee: 1.99 }, { developer_fee: '0.01' }, { paymentRail: 'ACH_PUSH', sourceCurrency: 'USD' }]) {
      const created = await post('direct-bank', bank(fields))
      expect(created.status, `${JSON.stringify(fields)}: ${created.text}`).toBe(201)
    }
  })

  it('refuses a JSON number written with an exponent', async () => {
    const refused = await server.request('POST', '/api/v0/transfers/direct-bank', { key, body: JSON.stringify(bank({})).replace('"amount":1', '"amount":1e2'), headers: { 'content-type': 'application/json' } })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ message: 'amount: "1e2" is not a decimal amount (digits, and at most one decimal point)' })
  })

  it('reads a JSON number from its text: 12345678.123456 USDC is exact', async () => {
    const created = await server.request<Transfer>('POST', '/api/v0/transfers/direct-wallet', {
      key,
      body: `{"walletId":"${wallet.id}","network":"base","stableCoinCurrency":"usdc","amount":12345678.123456}`,
      headers: { 'content-type': 'application/json' },
    })
    expect(created.status, created.text).toBe(201)
    expect(created.body.amount).toBe('12345678.123456')
  })

  it('refuses transfers out without an amount, conversions between one currency, and a network other than the wallet\'s', async () => {
    const noAmount = await post('external-stablecoin-transfer', { sourceWalletId: wallet.id, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'b' })
    expect(noAmount.body).toMatchObject({ statusCode: 400, message: 'amount is required' })
    const same = await post('stablecoin-conversion', { walletId: wallet.id, sourceNetwork: 'base', sourceCurrency: 'usdc', destinationCurrency: 'usdc', amount: 1 })
    expect(same.body).toMatchObject({ statusCode: 400, message: 'destinationCurrency must differ from sourceCurrency' })
    const network = await post('stablecoin-conversion', { walletId: wallet.id, sourceNetwork: 'solana', sourceCurrency: 'usdc', destinationCurrency: 'eurc', amount: 1 })
    expect(network.body).toMatchObject({ statusCode: 400, message: "sourceNetwork must be the wallet's chain, base" })
    const memoChain = await post('direct-wallet', { walletId: wallet.id, network: 'stellar', stableCoinCurrency: 'usdc', amount: 1 })
    expect(memoChain.body).toMatchObject({ statusCode: 400, message: 'network must be one of ethereum, solana, polygon, avalanche_c_chain, base, arbitrum, optimism' })
  })

  it('answers 404 for a wallet of the other environment', async () => {
    const liveWallet = await baseWallet(server, liveKey)
    const refused = await post('direct-wallet', { walletId: liveWallet.id, network: 'base', stableCoinCurrency: 'usdc', amount: 1 })
    expect(refused.status).toBe(404)
  })
})

describe('following a transfer: list, get, cancel, simulate_funds', () => {
  it('cancels only while awaiting funds; funds cannot arrive after', async () => {
    const created = await post('direct-wallet', { walletId: wallet.id, network: 'base', stableCoinCurrency: 'usdc', amount: 3 })
    const canceled = await server.request<Transfer>('DELETE', `/api/v0/transfers/${created.body.id}`, { key })
    expect(canceled.status, canceled.text).toBe(200)
    expect(canceled.body.state).toBe('canceled')
    expect((await server.request('DELETE', `/api/v0/transfers/${created.body.id}`, { key })).status).toBe(409)
    expect((await server.request('POST', `/api/v0/transfers/${created.body.id}/simulate_funds`, { key })).status).toBe(409)
  })

  it('simulate_funds is for development keys; another application\'s transfer is 404 to any key', async () => {
    const created = await post('direct-wallet', { walletId: wallet.id, network: 'base', stableCoinCurrency: 'usdc', amount: 3 })
    const other = await server.createKey({ environment: 'development' })
    for (const path of [`/api/v0/transfers/${created.body.id}`, `/api/v0/transfers/${created.body.id}/simulate_funds`]) {
      const method = path.endsWith('simulate_funds') ? 'POST' : 'GET'
      const answer = await server.request(method, path, { key: other })
      expect(answer.status).toBe(404)
      expect(answer.body).toMatchObject({ message: 'Transfer not found' })
    }
    const liveWallet = await baseWallet(server, liveKey)
    const live = await post('direct-wallet', { walletId: liveWallet.id, network: 'base', stableCoinCurrency: 'usdc', amount: 3 }, liveKey)
    expect(live.status).toBe(201)
    const refused = await server.request('POST', `/api/v0/transfers/${live.body.id}/simulate_funds`, { key: liveKey })
    expect(refused.status).toBe(403)
    // The sandbox transfer is not the live key's.
    expect((await server.request('GET', `/api/v0/transfers/${created.body.id}`, { key: liveKey })).status).toBe(404)
  })

  it('lists newest first, filtered by state and wallet, a page at a time', async () => {
    const own = await server.createKey({ environment: 'development' })
    const ownWallet = await baseWallet(server, own)
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await server.request<Transfer>('POST', '/api/v0/transfers/direct-wallet', { key: own, body: { walletId: ownWallet.id, network: 'base', stableCoinCurrency: 'usdc', amount: i + 1 } })).body.id)
    await server.request('DELETE', `/api/v0/transfers/${ids[0]}`, { key: own })
    const all = await server.request<{ data: Transfer[]; total: number; skip: number; take: number }>('GET', '/api/v0/transfers', { key: own })
    expect(all.body.total).toBe(3)
    expect(all.body.data.map((transfer) => transfer.id)).toEqual([...ids].reverse())
    const awaiting = await server.request<{ data: Transfer[]; total: number }>('GET', `/api/v0/transfers?state=awaiting_funds&wallet_id=${ownWallet.id}&take=1&skip=1`, { key: own })
    expect(awaiting.body).toMatchObject({ total: 2, skip: 1, take: 1 })
    expect(awaiting.body.data.map((transfer) => transfer.id)).toEqual([ids[1]])
    expect((await server.request('GET', '/api/v0/transfers?state=pending', { key: own })).status).toBe(400)
    expect((await server.request('GET', '/api/v0/transfers?take=101', { key: own })).status).toBe(400)
  })
})
