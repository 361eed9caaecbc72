import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainsConfig } from '../../src/chains/config.js'
import { verifyLedger } from '../../src/ledger/ledger.js'
import { saveRates } from '../../src/ledger/rates.js'
import type { Wallet } from '../../src/resources/wallets/schemas.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { waitOnChain } from '../helpers/chain-api.js'
import { testXpub } from '../helpers/receiving-key.js'
import { balanceOf, deployToken, mint } from '../helpers/test-token.js'

/**
 * Live money leaving by the other roads than a drain's payout, sent for real on anvil by the hot
 * wallet: a transfer out of a live wallet to an outside address, and a canceled drain's refund to
 * its liquidation address's return_address. The recipient's balance grows by exactly what was
 * sent; a payout the token refuses ends in the documented failure state with its entry voided.
 */

interface Drain {
  id: string
  state: string
  amount: string
  refund_tx_hash?: string
  return_details?: { reason: string }
}

interface Transfer {
  id: string
  state: string
  destination_tx_hash?: string
  waiting_for?: string
  return_reason?: string
}

let server: TestServer
let anvil: Anvil
let usdc: Address
let eurc: Address
let key: TestKey
let hot: Address

async function liveAccount(kind: 'developer_fee' | 'wallet', owner: TestKey): Promise<bigint> {
  const rows = await server.app.db.selectFrom('ledger_accounts').select('available').where('environment', '=', 'live').where('kind', '=', kind).where('app_id', '=', owner.appId).execute()
  return rows.reduce((sum, row) => sum + BigInt(row.available), 0n)
}

/** The base wallet of a new application, funded on chain with `units` of USDC and credited after its confirmations. */
async function fundedWallet(units: bigint): Promise<{ owner: TestKey; wallet: Wallet }> {
  const owner = await server.createKey({ environment: 'production' })
  const wallet = (await server.request<{ data: Wallet[] }>('GET', '/api/v0/wallets', { key: owner })).body.data.find((each) => each.chain === 'base')
  if (wallet?.address == null) throw new Error('no live base wallet')
  await mint(anvil, usdc, wallet.address as Address, units)
  await anvil.mine(1)
  await waitOnChain('the wallet credited', async () => ((await liveAccount('wallet', owner)) === units ? true : undefined))
  return { owner, wallet }
}

async function sendOut(owner: TestKey, wallet: Wallet, body: Record<string, unknown>) {
  return server.request<Transfer & { message?: string }>('POST', '/api/v0/transfers/external-stablecoin-transfer', {
    key: owner,
    body: { sourceWalletId: wallet.id, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'beneficiary_1', ...body },
  })
}

const readTransfer = async (owner: TestKey, id: string) => (await server.request<Transfer>('GET', `/api/v0/transfers/${id}`, { key: owner })).body

beforeAll(async () => {
  anvil = await startAnvil()
  usdc = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
  eurc = await deployToken(anvil, { name: 'EURC', symbol: 'EURC' })
  const hotWallet = anvil.accounts[6]
  if (hotWallet === undefined) throw new Error('no account')
  hot = hotWallet.address
  await mint(anvil, usdc, hot, 1_000_000_000n)
  const chains: ChainsConfig = {
    file: 'test',
    receivingXpub: testXpub(),
    hotWallet,
    chains: [{ chain: 'base', chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: usdc.toLowerCase(), eurc: eurc.toLowerCase() }, confirmations: 2, pollIntervalMs: 50, maxBlockRange: 100, startBlock: 0, rpcTimeoutMs: 2_000 }],
  }
  server = await startTestServer({ config: { chains, drains: { scheduler: true, fastDelayMs: 20, achDelayMs: 20, pollIntervalMs: 20, concurrency: 2 } } })
  key = await server.createKey({ environment: 'production' })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await anvil?.close()
})

describe('live transfers out to an outside address, sent on a real chain', () => {
  it('sent by the hot wallet: payment_submitted with its transaction, payment_processed after the confirmations, the recipient paid exactly the amount, the fee kept', async () => {
    const { owner, wallet } = await fundedWallet(30_000_000n)
    const recipient = '0x00000000000000000000000000000000000d0d00'
    const created = await sendOut(owner, wallet, { amount: '12.5', developer_fee: '0.5', destinationAddress: recipient })
    expect(created.status, created.text).toBe(201)
    expect(await liveAccount('wallet', owner)).toBe(17_000_000n)
    const submitted = await waitOnChain('the transfer submitted', async () => {
      const transfer = await readTransfer(owner, created.body.id)
      return transfer.state === 'payment_submitted' ? transfer : undefined
    })
    expect(submitted.destination_tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(submitted.waiting_for).toBeUndefined()
    await anvil.mine(2)
    const processed = await waitOnChain('the transfer processed', async () => {
      const transfer = await readTransfer(owner, created.body.id)
      return transfer.state === 'payment_processed' ? transfer : undefined
    })
    expect(processed.destination_tx_hash).toBe(submitted.destination_tx_hash)
    const receipt = await anvil.publicClient.getTransactionReceipt({ hash: processed.destination_tx_hash as `0x${string}` })
    expect(receipt.from.toLowerCase()).toBe(hot.toLowerCase())
    expect(await balanceOf(anvil, usdc, recipient)).toBe(12_500_000n)
    expect(await liveAccount('developer_fee', owner)).toBe(500_000n)
    expect(await liveAccount('wallet', owner)).toBe(17_000_000n)
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })

  it('a payout the token refuses (to the zero address) is never sent: the transfer ends in error, its reservation voided, the wallet whole again', async () => {
    const { owner, wallet } = await fundedWallet(5_000_000n)
    const created = await sendOut(owner, wallet, { amount: '4', destinationAddress: '0x0000000000000000000000000000000000000000' })
    expect(created.status, created.text).toBe(201)
    const failed = await waitOnChain('the transfer in error', async () => {
      const transfer = await readTransfer(owner, created.body.id)
      return transfer.state === 'error' ? transfer : undefined
    })
    expect(failed.return_reason).toMatch(/^the payout failed on chain: the token refuses this transfer: .*; the funds are back in the wallet$/)
    expect(failed.destination_tx_hash).toBeUndefined()
    expect(await liveAccount('wallet', owner)).toBe(5_000_000n)
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })

  it('a live transfer out is refused at create, changing nothing, without a destinationAddress, with an invalid one, and on a chain whose payouts are off; the sandbox takes it without one', async () => {
    const wallets = (await server.request<{ data: Wallet[] }>('GET', '/api/v0/wallets', { key })).body.data
    const base = wallets.find((wallet) => wallet.chain === 'base') as Wallet
    const ethereum = wallets.find((wallet) => wallet.chain === 'ethereum') as Wallet
    const missing = await sendOut(key, base, { amount: '1' })
    expect(missing.status).toBe(400)
    expect(missing.body.message).toBe("destinationAddress is required with a production key: live money is paid on chain to that address (this platform keeps no beneficiaries' addresses)")
    const invalid = await sendOut(key, base, { amount: '1', destinationAddress: '0x1234' })
    expect(invalid.status).toBe(400)
    expect(invalid.body.message).toMatch(/^destinationAddress must be a valid base address/)
    const off = await sendOut(key, ethereum, { amount: '1', destinationAddress: '0x00000000000000000000000000000000000d0d00' })
    expect(off.status).toBe(400)
    expect(off.body.message).toBe('live payouts on ethereum are off: this platform has no configuration for ethereum (CHAINS_FILE, docs/chains.md): this transfer could not be sent')
    expect((await server.request<{ data: unknown[] }>('GET', '/api/v0/transfers', { key })).body.data).toEqual([])
    const sandboxKey = await server.createKey({ environment: 'development' })
    const sandboxWallet = (await server.request<{ data: Wallet[] }>('GET', '/api/v0/wallets', { key: sandboxKey })).body.data.find((wallet) => wallet.chain === 'base') as Wallet
    const sandbox = await sendOut(sandboxKey, sandboxWallet, { amount: '1' })
    // Refused for want of funds, not of an address: the sandbox wallet is empty.
    expect(sandbox.status, sandbox.text).toBe(409)
  })
})

describe("live refunds to a liquidation address's return_address, sent on a real chain", () => {
  /**
   * A live address taking USDC and paying out EURC on base to an outside address, with a fee
   * that leaves 1 unit of USDC to convert at 0.92: nothing is left to send, so each deposit's
   * drain is canceled and refunded whole to `returnAddress`.
   */
  async function cancelingAddress(returnAddress: string): Promise<{ customerId: string; id: string; address: Address }> {
    const receiving = (await server.request<{ address: Address }>('POST', '/api/v0/receiving-addresses', { key, body: { chain: 'base', currency: 'usdc' } })).body
    const customer = (await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' } })).body
    const created = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.id}/liquidation_addresses`, {
      key,
      body: {
        chain: 'base',
        currency: 'usdc',
        address: receiving.address,
        destination_payment_rail: 'base',
        destination_currency: 'eurc',
        destination_address: '0x00000000000000000000000000000000000e0e00',
        custom_developer_fee_percent: '99.99999',
        return_address: returnAddress,
      },
    })
    expect(created.status, created.text).toBe(201)
    return { customerId: customer.id, id: created.body.id, address: receiving.address }
  }

  const drainOf = async (address: { customerId: string; id: string }, state: string) =>
    (await server.request<{ data: Drain[] }>('GET', `/api/v0/customers/${address.customerId}/liquidation_addresses/${address.id}/drains`, { key })).body.data.find((drain) => drain.state === state)

  const clearingOf = async (address: { id: string }) =>
    BigInt((await server.app.db.selectFrom('ledger_accounts').select('available').where('environment', '=', 'live').where('kind', '=', 'clearing').where('reference', '=', address.id).executeTakeFirstOrThrow()).available)

  it('a canceled drain is refunded on chain: refund_in_flight with its transaction, refunded after the confirmations, the return address paid exactly the deposit, the entry posted; a refund the token refuses ends refund_failed, its entry voided, the deposit back in clearing', async () => {
    await saveRates(server.app.db, [{ environment: 'live', from: 'usd', to: 'eur', midmarket: '0.92', buy: '0.92', sell: '0.93', asOf: new Date().toISOString() }])
    const payer = '0x00000000000000000000000000000000000fee00'
    const refunded = await cancelingAddress(payer)
    const refused = await cancelingAddress('0x0000000000000000000000000000000000000000')
    await mint(anvil, usdc, refunded.address, 1_000_000n)
    await mint(anvil, usdc, refused.address, 2_000_000n)
    await anvil.mine(1)
    const inFlight = await waitOnChain('the refund submitted', async () => {
      const drain = await drainOf(refunded, 'refund_in_flight')
      return drain?.refund_tx_hash === undefined ? undefined : drain
    })
    expect(inFlight.refund_tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(inFlight.return_details?.reason).toBe('the amount after fees is below the smallest unit of eurc')
    await anvil.mine(2)
    const done = await waitOnChain('the drain refunded', () => drainOf(refunded, 'refunded'))
    expect(done).toMatchObject({ amount: '1.000000', refund_tx_hash: inFlight.refund_tx_hash })
    const receipt = await anvil.publicClient.getTransactionReceipt({ hash: done.refund_tx_hash as `0x${string}` })
    expect(receipt.from.toLowerCase()).toBe(hot.toLowerCase())
    expect(await balanceOf(anvil, usdc, payer)).toBe(1_000_000n)
    expect(await clearingOf(refunded)).toBe(0n)

    const failed = await waitOnChain('the refund failed', () => drainOf(refused, 'refund_failed'))
    expect(failed.return_details?.reason).toMatch(/^the refund failed on chain: the token refuses this transfer: .*; it needs an operator$/)
    expect(failed.refund_tx_hash).toBeUndefined()
    expect(await clearingOf(refused)).toBe(2_000_000n)
    const payouts = await server.app.db.selectFrom('chain_payouts').select(['owner_type', 'status', 'amount']).where('owner_type', '=', 'drain_refund').orderBy('amount').execute()
    expect(payouts).toEqual([
      { owner_type: 'drain_refund', status: 'confirmed', amount: '1000000' },
      { owner_type: 'drain_refund', status: 'failed', amount: '2000000' },
    ])
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })
})
