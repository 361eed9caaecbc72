import { randomUUID } from 'node:crypto'
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainsConfig } from '../../src/chains/config.js'
import { verifyLedger } from '../../src/ledger/ledger.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { created, waitOnChain } from '../helpers/chain-api.js'
import { testXpub } from '../helpers/receiving-key.js'
import { ReceivingKey } from '../../src/chains/derivation.js'
import type { Wallet } from '../../src/resources/wallets/schemas.js'
import { balanceOf, deployToken, mint, transfer } from '../helpers/test-token.js'

/**
 * Live money from a real chain to the API, end to end: a server whose CHAINS_FILE points at a
 * real anvil with real USDC and EURC contracts, a production key, and token transfers to the
 * addresses its answers give. A deposit to a liquidation address becomes a drain through the same
 * intake as the sandbox's (and waits there for a payout sender); one to a payment intent is its
 * funds; odd payments are held, recorded, never lost; the chain and the ledger agree.
 */

interface Deposit {
  id: string
  status: string
  amount: string
  tx_hash: string
  confirmations: number
  credited_to: { type: string; id: string } | null
  reason: string | null
}

let server: TestServer
let anvil: Anvil
let usdc: Address
let eurc: Address
let key: TestKey

async function depositOf(txHash: string, status: string): Promise<Deposit | undefined> {
  const answer = await server.request<{ data: Deposit[] }>('GET', `/api/v0/deposits?status=${status}&take=100`, { key })
  return answer.body.data.find((deposit) => deposit.tx_hash === txHash.toLowerCase())
}

const post = <T>(path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> => created<T>(server, key, path, body, headers)

async function stableIntent(amount: string): Promise<{ id: string; to: Address }> {
  const intent = await post<{ id: string; source_deposit_instructions: { to_address: string } }>(
    '/api/v0/payment-intents/stablecoin',
    { sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base', amount, customer_first_name: 'Ada', customer_last_name: 'Lovelace' },
    { 'idempotency-key': randomUUID() },
  )
  return { id: intent.id, to: intent.source_deposit_instructions.to_address as Address }
}

beforeAll(async () => {
  anvil = await startAnvil()
  usdc = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
  eurc = await deployToken(anvil, { name: 'EURC', symbol: 'EURC' })
  const chains: ChainsConfig = {
    file: 'test',
    receivingXpub: testXpub(),
    chains: [{ chain: 'base', chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: usdc.toLowerCase(), eurc: eurc.toLowerCase() }, confirmations: 2, pollIntervalMs: 50, maxBlockRange: 100, startBlock: 0, rpcTimeoutMs: 2_000 }],
  }
  server = await startTestServer({ config: { chains, drains: { scheduler: true, fastDelayMs: 20, achDelayMs: 20, pollIntervalMs: 20, concurrency: 2 } } })
  key = await server.createKey({ environment: 'production' })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await anvil?.close()
})

describe('live money received on a real chain', () => {
  it('a deposit to a live liquidation address: pending, then after 2 confirmations a drain with the chain\'s transaction hash, waiting for a payout sender; chain and ledger agree', async () => {
    const receiving = await post<{ address: Address }>('/api/v0/receiving-addresses', { chain: 'base', currency: 'usdc' })
    const customer = await post<{ id: string }>('/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' })
    const address = await post<{ id: string }>(`/api/v0/customers/${customer.id}/liquidation_addresses`, {
      chain: 'base',
      currency: 'usdc',
      address: receiving.address,
      destination_payment_rail: 'base',
      destination_currency: 'usdc',
      destination_address: '0x5aeda56215b167893e80b4fe645ba6d5bab767de',
    })
    const receipt = await mint(anvil, usdc, receiving.address, 25_000_000n)
    const pending = await waitOnChain('the pending deposit', () => depositOf(receipt.transactionHash, 'pending'))
    expect(pending).toMatchObject({ amount: '25.000000', confirmations: 1, credited_to: null })
    await anvil.mine(1)
    const confirmed = await waitOnChain('the confirmed deposit', () => depositOf(receipt.transactionHash, 'confirmed'))
    expect(confirmed.credited_to?.type).toBe('drain')
    const drains = await server.request<{ data: { id: string; state: string; amount: string; deposit_tx_hash: string }[] }>('GET', `/api/v0/customers/${customer.id}/liquidation_addresses/${address.id}/drains`, { key })
    expect(drains.body.data).toEqual([
      expect.objectContaining({ id: confirmed.credited_to?.id, state: 'funds_received', waiting_for: 'payout_sender', livemode: true, amount: '25.000000', deposit_tx_hash: receipt.transactionHash.toLowerCase() }),
    ])
    // Nothing fakes a live payout: the drain is still where the deposit left it.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const row = await server.app.db.selectFrom('drains').select(['state', 'next_step_at']).where('id', '=', confirmed.credited_to?.id ?? '').executeTakeFirstOrThrow()
    expect(row).toEqual({ state: 'funds_received', next_step_at: null })
    expect(await balanceOf(anvil, usdc, receiving.address)).toBe(25_000_000n)
    const clearing = await server.app.db.selectFrom('ledger_accounts').select(['available']).where('environment', '=', 'live').where('kind', '=', 'clearing').where('reference', '=', address.id).executeTakeFirstOrThrow()
    expect(clearing.available).toBe('25000000')
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })

  it('fiat rails are refused in live at create, naming the missing provider connector, and nothing is written; the sandbox still takes them', async () => {
    const refusal = (field: string, rail: string) =>
      `${field} ${rail} is a fiat rail: live payouts on fiat rails need the payment provider's connector, which this platform does not have yet; with a production key, pay out to an address on a chain or into one of the application's wallets (docs/chains.md#what-waits)`
    const receiving = await post<{ address: Address }>('/api/v0/receiving-addresses', { chain: 'base', currency: 'usdc' })
    const customer = await post<{ id: string }>('/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' })
    const path = `/api/v0/customers/${customer.id}/liquidation_addresses`
    const byDefault = await server.request<{ message: string }>('POST', path, { key, body: { chain: 'base', currency: 'usdc', address: receiving.address, external_account_id: 'ext_acct_1' } })
    expect(byDefault.status).toBe(400)
    expect(byDefault.body.message).toBe(refusal('destination_payment_rail', 'ach'))
    const wire = await server.request<{ message: string }>('POST', path, { key, body: { chain: 'base', currency: 'usdc', address: receiving.address, destination_payment_rail: 'wire', external_account_id: 'ext_acct_1' } })
    expect(wire.body.message).toBe(refusal('destination_payment_rail', 'wire'))
    expect((await server.request<unknown[]>('GET', path, { key })).body).toEqual([])
    const given = await server.app.db.selectFrom('chain_addresses').select('owner_type').where('address', '=', receiving.address.toLowerCase()).executeTakeFirstOrThrow()
    expect(given.owner_type).toBe('unassigned')
    const wallet = (await server.request<{ data: Wallet[] }>('GET', '/api/v0/wallets', { key })).body.data.find((each) => each.chain === 'base') as Wallet
    const bank = { sourceWalletId: wallet.id, sourceCurrency: 'usdc', destinationCurrency: 'usd', destinationPaymentRail: 'ach', external_account_id: 'ext_acct_1', amount: '1' }
    const out = await server.request<{ message: string }>('POST', '/api/v0/transfers/external-bank-transfer', { key, body: bank })
    expect(out.status).toBe(400)
    expect(out.body.message).toBe(refusal('destinationPaymentRail', 'ach'))
    expect((await server.request<{ data: unknown[] }>('GET', '/api/v0/transfers', { key })).body.data).toEqual([])

    const sandbox = await server.createKey({ environment: 'development' })
    const sandboxCustomer = (await server.request<{ id: string }>('POST', '/api/v0/customers', { key: sandbox, body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' } })).body
    const sandboxAddress = await server.request('POST', `/api/v0/customers/${sandboxCustomer.id}/liquidation_addresses`, {
      key: sandbox,
      body: { chain: 'base', currency: 'usdc', address: '0x4d0280da2f2fDA5103914bCc5aad114743152A9c', external_account_id: 'ext_acct_1' },
    })
    expect(sandboxAddress.status, sandboxAddress.text).toBe(201)
    const sandboxWallet = (await server.request<{ data: Wallet[] }>('GET', '/api/v0/wallets', { key: sandbox })).body.data.find((each) => each.chain === 'base') as Wallet
    const sandboxOut = await server.request<{ message: string }>('POST', '/api/v0/transfers/external-bank-transfer', { key: sandbox, body: { ...bank, sourceWalletId: sandboxWallet.id } })
    // Past the rail: refused only for want of funds in the empty sandbox wallet.
    expect(sandboxOut.status).toBe(409)
  })

  it('a payment to a live payment intent is its funds; a second payment and an underpayment are held, recorded in the ledger, never lost', async () => {
    const payer = anvil.accounts[2]
    if (payer === undefined) throw new Error('no account')
    await mint(anvil, usdc, payer.address, 100_000_000n)
    const intent = await stableIntent('10.00')
    const paid = await transfer(anvil, usdc, payer, intent.to, 10_000_000n)
    const again = await transfer(anvil, usdc, payer, intent.to, 10_000_000n)
    const short = await stableIntent('10.00')
    const under = await transfer(anvil, usdc, payer, short.to, 4_000_000n)
    await anvil.mine(2)
    const confirmed = await waitOnChain('the intent paid', () => depositOf(paid.transactionHash, 'confirmed'))
    expect(confirmed.credited_to).toEqual({ type: 'payment_intent', id: intent.id })
    const second = await waitOnChain('the second payment held', () => depositOf(again.transactionHash, 'held'))
    expect(second.reason).toMatch(/Funds can only arrive while awaiting funds/)
    const underpaid = await waitOnChain('the underpayment held', () => depositOf(under.transactionHash, 'held'))
    expect(underpaid.reason).toBe('amount must be 10.000000, the amount awaited')
    const intentNow = await server.request<{ state: string }>('GET', `/api/v0/payment-intents/${intent.id}`, { key })
    expect(intentNow.body.state).not.toBe('awaiting_funds')
    expect((await server.request<{ state: string }>('GET', `/api/v0/payment-intents/${short.id}`, { key })).body.state).toBe('awaiting_funds')
    const held = await server.app.db.selectFrom('ledger_accounts').select(['reference', 'available']).where('environment', '=', 'live').where('reference', 'in', [`deposit:${second.id}`, `deposit:${underpaid.id}`]).execute()
    expect(held.map((account) => account.available).sort()).toEqual(['10000000', '4000000'])
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })

  it('a live payment intent settling to an outside address waits, once paid, for a payout sender and says so; one settling into the wallet does not', async () => {
    const elsewhere = await post<{ id: string; source_deposit_instructions: { to_address: string } }>(
      '/api/v0/payment-intents/stablecoin',
      { sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base', destinationAddress: '0x5aeda56215b167893e80b4fe645ba6d5bab767de', amount: '2.00', customer_first_name: 'Ada', customer_last_name: 'Lovelace' },
      { 'idempotency-key': randomUUID() },
    )
    const intoWallet = await stableIntent('2.00')
    const paidElsewhere = await mint(anvil, usdc, elsewhere.source_deposit_instructions.to_address as Address, 2_000_000n)
    const paidIntoWallet = await mint(anvil, usdc, intoWallet.to, 2_000_000n)
    await anvil.mine(2)
    await waitOnChain('both paid', async () => ((await depositOf(paidElsewhere.transactionHash, 'confirmed')) && (await depositOf(paidIntoWallet.transactionHash, 'confirmed'))) || undefined)
    const waiting = await server.request<{ state: string; waiting_for?: string }>('GET', `/api/v0/payment-intents/${elsewhere.id}`, { key })
    expect(waiting.body).toMatchObject({ state: 'funds_received', waiting_for: 'payout_sender' })
    const settled = await server.request<{ state: string; waiting_for?: string }>('GET', `/api/v0/payment-intents/${intoWallet.id}`, { key })
    expect(settled.body.waiting_for).toBeUndefined()
  })

  it('EURC sent to an address that takes USDC is held, and a live payment intent on a chain that is off is refused with why', async () => {
    const intent = await stableIntent('3.00')
    const wrong = await mint(anvil, eurc, intent.to, 3_000_000n)
    await anvil.mine(2)
    const held = await waitOnChain('the wrong token held', () => depositOf(wrong.transactionHash, 'held'))
    expect(held.reason).toBe('a eurc deposit to an address awaiting usdc')
    const off = await server.request<{ message: string }>('POST', '/api/v0/payment-intents/stablecoin', {
      key,
      headers: { 'idempotency-key': randomUUID() },
      body: { sourceCurrency: 'usdc', sourceNetwork: 'polygon', destinationNetwork: 'base', amount: '3.00', customer_first_name: 'Ada', customer_last_name: 'Lovelace' },
    })
    expect(off.status).toBe(400)
    expect(off.body.message).toBe("live deposits on polygon are off: this platform has no configuration for polygon (CHAINS_FILE, docs/chains.md): live money on polygon can't be asked for")
  })

  it("live wallets: base (on) gets a receiving address derived from the operator's key, once, whatever the readers; ethereum (off) shows none and says why", async () => {
    const owner = await server.createKey({ environment: 'production' })
    const answers = await Promise.all(Array.from({ length: 12 }, () => server.request<{ data: Wallet[] }>('GET', '/api/v0/wallets', { key: owner })))
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200))
    const [base, ethereum, solana] = answers[0]?.body.data ?? []
    for (const answer of answers) expect(answer.body.data).toEqual(answers[0]?.body.data)
    const given = await server.app.db.selectFrom('chain_addresses').selectAll().where('owner_type', '=', 'wallet').where('owner_id', '=', base?.id ?? '').execute()
    expect(given).toHaveLength(1)
    expect(base?.address).toBe(given[0]?.address)
    expect(base?.address).toBe(new ReceivingKey(testXpub()).addressAt(Number(given[0]?.derivation_index)))
    expect(base?.balances.map((balance) => balance.contract_address)).toEqual([usdc.toLowerCase(), eurc.toLowerCase()])
    expect(base?.address_unavailable_reason).toBeUndefined()
    expect(ethereum).toMatchObject({ address: null, address_unavailable_reason: 'live deposits on ethereum are off: this platform has no configuration for ethereum (CHAINS_FILE, docs/chains.md)' })
    expect(solana).toMatchObject({ address: null, address_unavailable_reason: 'live deposits on solana are off: this platform receives live money on EVM chains only (docs/chains.md)' })
  })

  it('a deposit of each token to a live wallet credits it after its confirmations: the API, the chain and the ledger agree', async () => {
    const owner = await server.createKey({ environment: 'production' })
    const base = (await server.request<{ data: Wallet[] }>('GET', '/api/v0/wallets', { key: owner })).body.data[0]
    const to = (base?.address ?? '') as Address
    const dollars = await mint(anvil, usdc, to, 12_345_678n)
    const euros = await mint(anvil, eurc, to, 1n)
    await anvil.mine(1)
    const read = async (txHash: string) => {
      const answer = await server.request<{ data: Deposit[] }>('GET', '/api/v0/deposits?status=confirmed&take=100', { key: owner })
      return answer.body.data.find((deposit) => deposit.tx_hash === txHash.toLowerCase())
    }
    expect((await waitOnChain('the USDC deposit', () => read(dollars.transactionHash))).credited_to).toEqual({ type: 'wallet', id: base?.id })
    expect((await waitOnChain('the EURC deposit', () => read(euros.transactionHash))).credited_to).toEqual({ type: 'wallet', id: base?.id })
    const after = (await server.request<{ data: Wallet[] }>('GET', '/api/v0/wallets', { key: owner })).body.data[0]
    expect(after?.balances.map((balance) => [balance.currency, balance.balance])).toEqual([
      ['usdc', '12.345678'],
      ['eurc', '0.000001'],
    ])
    expect(await balanceOf(anvil, usdc, to)).toBe(12_345_678n)
    expect(await balanceOf(anvil, eurc, to)).toBe(1n)
    const balance = await server.request<{ total_balance: string }>('GET', '/api/v0/balance/usdc', { key: owner })
    expect(balance.body.total_balance).toBe('12.345678')
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })
})
