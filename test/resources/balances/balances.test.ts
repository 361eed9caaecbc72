import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LedgerEnvironment } from '../../../src/ledger/ledger.js'
import { TOKEN_CONTRACTS, type WalletChain, type WalletCurrency, type WalletRow } from '../../../src/resources/wallets/repository.js'
import { isoOf } from '../../../src/db/time.js'
import { saveRates } from '../../../src/ledger/rates.js'
import type { AggregatedBalanceResponse, AllBalancesResponse } from '../../../src/resources/balances/schemas.js'
import type { WalletList } from '../../../src/resources/wallets/schemas.js'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { deposit, storedWallet, withdraw } from '../wallets/money.js'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => server.close())

/** A new application with a production key and a development key. */
async function newApplication(): Promise<{ live: TestKey; sandbox: TestKey }> {
  const live = await server.createKey({ environment: 'production' })
  const sandbox = await server.createKey({ appId: live.appId, environment: 'development' })
  return { live, sandbox }
}

async function balanceOf(key: TestKey, currency: WalletCurrency): Promise<AggregatedBalanceResponse> {
  const res = await server.request<AggregatedBalanceResponse>('GET', `/api/v0/balance/${currency}`, { key })
  expect(res.status, res.text).toBe(200)
  return res.body
}

/** The key's wallets as stored, in chain order (base, ethereum, solana). */
async function storedWallets(key: TestKey, environment: LedgerEnvironment): Promise<WalletRow[]> {
  const res = await server.request<WalletList>('GET', '/api/v0/wallets', { key })
  expect(res.status).toBe(200)
  return Promise.all(res.body.data.map((wallet) => storedWallet(server.app.db, environment, key.appId, wallet.id)))
}

const totals = async (key: TestKey) => [(await balanceOf(key, 'usdc')).total_balance, (await balanceOf(key, 'eurc')).total_balance]

describe.each(['usdc', 'eurc'] as const)('GET /api/v0/balance/%s', (currency) => {
  it("a new application's balance is zero, with a part per wallet, in the platform's AggregatedBalanceResponse", async () => {
    const { live } = await newApplication()
    const body = await balanceOf(live, currency)
    const wallets = await storedWallets(live, 'live')
    expect(body).toEqual({
      currency,
      total_balance: '0.000000',
      balances: wallets.map((wallet) => ({
        wallet_id: wallet.id,
        chain: wallet.chain,
        address: wallet.address,
        currency,
        contract_address: TOKEN_CONTRACTS[wallet.chain as WalletChain][currency],
        balance: '0.000000',
        pending_incoming: '0.000000',
        pending_outgoing: '0.000000',
      })),
    })
    expect(body.balances.map((part) => part.chain)).toEqual(['base', 'ethereum', 'solana'])
  })

  it('adds up every wallet of the currency exactly, to the last of its 6 decimals, and leaves the other currency alone', async () => {
    const { live } = await newApplication()
    const [base, ethereum, solana] = await storedWallets(live, 'live')
    if (base === undefined || ethereum === undefined || solana === undefined) throw new Error('three wallets')
    const other = currency === 'usdc' ? 'eurc' : 'usdc'
    await deposit(server.app.db, base, currency, '0.000001')
    await deposit(server.app.db, ethereum, currency, '1234567.89')
    await deposit(server.app.db, solana, currency, '0.1')
    await deposit(server.app.db, solana, other, '50')
    const body = await balanceOf(live, currency)
    expect(body.total_balance).toBe('1234567.990001')
    expect(body.balances.map((part) => part.balance)).toEqual(['0.000001', '1234567.890000', '0.100000'])
    expect((await balanceOf(live, other)).total_balance).toBe('50.000000')
  })

  it('counts available money: pending credits are shown but not counted; pending debits are already taken out; a void gives them back', async () => {
    const { live } = await newApplication()
    const [base] = await storedWallets(live, 'live')
    if (base === undefined) throw new Error('a wallet')
    await deposit(server.app.db, base, currency, '100')
    await deposit(server.app.db, base, currency, '40.5', 'pending')
    await withdraw(server.app.db, base, currency, '30.25', 'pending')
    await withdraw(server.app.db, base, currency, '10')
    const body = await balanceOf(live, currency)
    expect(body.total_balance).toBe('59.750000')
    expect(body.balances[0]).toMatchObject({ balance: '59.750000', pending_incoming: '40.500000', pending_outgoing: '30.250000' })
    expect(body.balances.slice(1).map((part) => [part.balance, part.pending_incoming, part.pending_outgoing])).toEqual([
      ['0.000000', '0.000000', '0.000000'],
      ['0.000000', '0.000000', '0.000000'],
    ])
  })

  it('a development key reads only sandbox money, a production key only live money', async () => {
    const { live, sandbox } = await newApplication()
    const [sandboxBase] = await storedWallets(sandbox, 'sandbox')
    const [, liveEthereum] = await storedWallets(live, 'live')
    if (sandboxBase === undefined || liveEthereum === undefined) throw new Error('wallets')
    await deposit(server.app.db, sandboxBase, currency, '7')
    const sandboxBody = await balanceOf(sandbox, currency)
    expect(sandboxBody.total_balance).toBe('7.000000')
    expect((await balanceOf(live, currency)).total_balance).toBe('0.000000')
    await deposit(server.app.db, liveEthereum, currency, '2')
    const liveBody = await balanceOf(live, currency)
    expect(liveBody.total_balance).toBe('2.000000')
    expect((await balanceOf(sandbox, currency)).total_balance).toBe('7.000000')
    const sandboxIds = sandboxBody.balances.map((part) => part.wallet_id)
    expect(liveBody.balances.filter((part) => sandboxIds.includes(part.wallet_id))).toEqual([])
  })

  it("another application's money and wallets are never counted or shown", async () => {
    const owner = await newApplication()
    const other = await newApplication()
    const [base] = await storedWallets(owner.live, 'live')
    if (base === undefined) throw new Error('a wallet')
    await deposit(server.app.db, base, currency, '99')
    expect((await balanceOf(owner.live, currency)).total_balance).toBe('99.000000')
    const body = await balanceOf(other.live, currency)
    expect(body.total_balance).toBe('0.000000')
    expect(body.balances.map((part) => part.wallet_id)).not.toContain(base.id)
  })

  it("makes the application's wallets on first use, once, when read before GET /wallets", async () => {
    const { live } = await newApplication()
    const answers = await Promise.all(Array.from({ length: 12 }, () => server.request<AggregatedBalanceResponse>('GET', `/api/v0/balance/${currency}`, { key: live })))
    const ids = answers.map((answer) => answer.body.balances.map((part) => part.wallet_id))
    for (const each of ids) expect(each).toEqual(ids[0])
    expect(ids[0]).toHaveLength(3)
    const wallets = await server.request<WalletList>('GET', '/api/v0/wallets', { key: live })
    expect(wallets.body.data.map((wallet) => wallet.id)).toEqual(ids[0])
  })
})

/** Loads a EUR→USD rate of the environment, true `ageMs` ago. */
async function loadEurToUsd(environment: LedgerEnvironment, midmarket: string, buy: string, sell: string, ageMs = 0): Promise<void> {
  await saveRates(server.app.db, [{ environment, from: 'eur', to: 'usd', midmarket, buy, sell, asOf: isoOf(Date.now() - ageMs) }])
}

async function allBalances(key: TestKey): Promise<AllBalancesResponse> {
  const res = await server.request<AllBalancesResponse>('GET', '/api/v0/balance', { key })
  expect(res.status, res.text).toBe(200)
  return res.body
}

describe('GET /api/v0/balance', () => {
  it("a new application: both currencies at zero and 0.00 in US dollars, in the platform's AllBalancesResponse, with no rate needed", async () => {
    const { live } = await newApplication()
    const body = await allBalances(live)
    expect(body).toEqual({ usdc: await balanceOf(live, 'usdc'), eurc: await balanceOf(live, 'eurc'), total_usd_value: '0.00' })
    expect(Object.keys(body)).toEqual(['usdc', 'eurc', 'total_usd_value'])
  })

  it('total_usd_value: USDC at par plus EURC at the sandbox default mid-market rate (1.17647), rounded down to the cent once', async () => {
    const { sandbox } = await newApplication()
    const [base, ethereum] = await storedWallets(sandbox, 'sandbox')
    if (base === undefined || ethereum === undefined) throw new Error('wallets')
    await deposit(server.app.db, base, 'usdc', '10.005')
    await deposit(server.app.db, ethereum, 'eurc', '100.000001')
    const body = await allBalances(sandbox)
    expect(body.usdc.total_balance).toBe('10.005000')
    expect(body.eurc.total_balance).toBe('100.000001')
    // 100.000001 EURC × 1.17647 = 117.647001176… USDC → 117.647001; + 10.005 = 127.652001 → 127.65
    expect(body.total_usd_value).toBe('127.65')
  })

  it('rounds down, never up: 0.009999 USDC is worth 0.00, 0.01 is worth 0.01', async () => {
    const { live } = await newApplication()
    const [base] = await storedWallets(live, 'live')
    if (base === undefined) throw new Error('a wallet')
    await deposit(server.app.db, base, 'usdc', '0.009999')
    expect((await allBalances(live)).total_usd_value).toBe('0.00')
    await deposit(server.app.db, base, 'usdc', '0.000001')
    expect((await allBalances(live)).total_usd_value).toBe('0.01')
  })

  it('counts available money only, as the per-currency reads do: pending credits add nothing, pending debits are already out', async () => {
    const { sandbox } = await newApplication()
    const [base] = await storedWallets(sandbox, 'sandbox')
    if (base === undefined) throw new Error('a wallet')
    await deposit(server.app.db, base, 'usdc', '20')
    await deposit(server.app.db, base, 'usdc', '500', 'pending')
    await withdraw(server.app.db, base, 'usdc', '5', 'pending')
    const body = await allBalances(sandbox)
    expect(body.usdc.total_balance).toBe('15.000000')
    expect(body.total_usd_value).toBe('15.00')
  })

  it('live: EURC without a fresh EUR→USD rate is 503 with Retry-After, naming the pair; a loaded rate is used; a stale one is not', async () => {
    const { live } = await newApplication()
    const [, , solana] = await storedWallets(live, 'live')
    if (solana === undefined) throw new Error('a wallet')
    await deposit(server.app.db, solana, 'usdc', '1')
    // USDC alone needs no rate.
    expect((await allBalances(live)).total_usd_value).toBe('1.00')
    await deposit(server.app.db, solana, 'eurc', '2')
    const refused = await server.request('GET', '/api/v0/balance', { key: live })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('60')
    expect(refused.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: expect.stringContaining('No live eur to usd exchange rate'),
      details: expect.stringContaining('devplatform rates load'),
    })
    // The per-currency reads need no rate.
    expect((await balanceOf(live, 'eurc')).total_balance).toBe('2.000000')
    // A rate older than EXCHANGE_RATE_MAX_AGE_SECONDS (an hour by default) is never used.
    await loadEurToUsd('live', '1.5', '1.4', '1.6', 2 * 3_600_000)
    expect((await server.request('GET', '/api/v0/balance', { key: live })).status).toBe(503)
    await loadEurToUsd('live', '1.08333', '1.08', '1.09')
    // 2 EURC × 1.08333 = 2.16666 USDC; + 1 = 3.16666 → 3.16
    expect((await allBalances(live)).total_usd_value).toBe('3.16')
  })

  it("the sandbox takes an operator's fresh sandbox rate over its default, and a live rate never reaches the sandbox", async () => {
    const { sandbox } = await newApplication()
    const [base] = await storedWallets(sandbox, 'sandbox')
    if (base === undefined) throw new Error('a wallet')
    await deposit(server.app.db, base, 'eurc', '10')
    // Rates are the environment's, not the application's: the tests above that take the sandbox's default come first.
    const before = (await allBalances(sandbox)).total_usd_value
    await loadEurToUsd('live', '3', '2.9', '3.1')
    expect((await allBalances(sandbox)).total_usd_value).toBe(before)
    await loadEurToUsd('sandbox', '2', '1.9', '2.1')
    expect((await allBalances(sandbox)).total_usd_value).toBe('20.00')
  })

  it('a development key reads only sandbox money, a production key only live money', async () => {
    const { live, sandbox } = await newApplication()
    const [sandboxBase] = await storedWallets(sandbox, 'sandbox')
    const [liveBase] = await storedWallets(live, 'live')
    if (sandboxBase === undefined || liveBase === undefined) throw new Error('wallets')
    await deposit(server.app.db, sandboxBase, 'usdc', '3')
    await deposit(server.app.db, liveBase, 'usdc', '4')
    expect((await allBalances(sandbox)).total_usd_value).toBe('3.00')
    expect((await allBalances(live)).total_usd_value).toBe('4.00')
  })
})

describe('balances and the ledger', () => {
  it('reading never makes a ledger account: an account never made reads zero', async () => {
    const { live, sandbox } = await newApplication()
    expect(await totals(live)).toEqual(['0.000000', '0.000000'])
    expect(await totals(sandbox)).toEqual(['0.000000', '0.000000'])
    const accounts = await server.app.db.selectFrom('ledger_accounts').select('id').where('app_id', '=', live.appId).execute()
    expect(accounts).toEqual([])
  })

  it('403 without the balance:read scope, and the scope alone is enough', async () => {
    const { live } = await newApplication()
    const without = await server.createKey({ appId: live.appId, scopes: ['wallet:read'] })
    const only = await server.createKey({ appId: live.appId, scopes: ['balance:read'] })
    for (const currency of ['usdc', 'eurc']) {
      const res = await server.request('GET', `/api/v0/balance/${currency}`, { key: without })
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ message: 'Missing required scope', details: 'This API key lacks the required scope: balance:read' })
    }
    expect(await totals(only)).toEqual(['0.000000', '0.000000'])
    expect((await server.request('GET', '/api/v0/balance', { key: without })).status).toBe(403)
    expect((await allBalances(only)).total_usd_value).toBe('0.00')
  })
})
