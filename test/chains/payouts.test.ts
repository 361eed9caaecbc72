import { randomUUID } from 'node:crypto'
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainsConfig } from '../../src/chains/config.js'
import { readChainsStatus } from '../../src/chains/status.js'
import { verifyLedger } from '../../src/ledger/ledger.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { livePayoutAddress, type LivePayoutAddress, waitOnChain } from '../helpers/chain-api.js'
import { testXpub } from '../helpers/receiving-key.js'
import { balanceOf, deployToken, mint } from '../helpers/test-token.js'

/**
 * Live payouts sent for real: a server whose chains file names a hot wallet (an anvil account
 * holding a float of the token), a deposit to a live liquidation address whose destination is an
 * address on the same chain, and the drain followed to payment_processed by the chain's sender.
 * The recipient's balance grows by exactly the payout, once; the fee stays in the ledger.
 */

interface Drain {
  id: string
  state: string
  amount: string
  destination_tx_hash?: string
  waiting_for?: string
  return_details?: { reason: string }
  receipt: { outgoing_amount?: string; developer_fee: string }
}

let server: TestServer
let anvil: Anvil
let usdc: Address
let key: TestKey
let hot: Address
let chains: ChainsConfig

/** A live liquidation address on base paying out to `recipient` on base, with a 1 % developer fee. */
function payoutAddress(recipient: string): Promise<LivePayoutAddress> {
  return livePayoutAddress(server, key, recipient, { custom_developer_fee_percent: '1' })
}

async function drainsOf(address: { customerId: string; id: string }): Promise<Drain[]> {
  const answer = await server.request<{ data: Drain[] }>('GET', `/api/v0/customers/${address.customerId}/liquidation_addresses/${address.id}/drains`, { key })
  return answer.body.data
}

async function transfersFromHotTo(recipient: string): Promise<number> {
  const logs = await anvil.publicClient.getContractEvents({
    address: usdc,
    abi: [{ type: 'event', name: 'Transfer', inputs: [{ name: 'from', type: 'address', indexed: true }, { name: 'to', type: 'address', indexed: true }, { name: 'value', type: 'uint256', indexed: false }] }],
    eventName: 'Transfer',
    args: { from: hot, to: recipient as Address },
    fromBlock: 0n,
  })
  return logs.length
}

beforeAll(async () => {
  anvil = await startAnvil()
  usdc = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
  const hotWallet = anvil.accounts[6]
  if (hotWallet === undefined) throw new Error('no account')
  hot = hotWallet.address
  await mint(anvil, usdc, hot, 1_000_000_000n)
  chains = {
    file: 'test',
    receivingXpub: testXpub(),
    hotWallet,
    chains: [{ chain: 'base', chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: usdc.toLowerCase() }, confirmations: 2, pollIntervalMs: 50, maxBlockRange: 100, startBlock: 0, rpcTimeoutMs: 2_000 }],
  }
  server = await startTestServer({ config: { chains, drains: { scheduler: true, fastDelayMs: 20, achDelayMs: 20, pollIntervalMs: 20, concurrency: 2 } } })
  key = await server.createKey({ environment: 'production' })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await anvil?.close()
})

describe('live payouts sent on a real chain', () => {
  it('a deposit drained to an outside address: sent once by the hot wallet, processed after its confirmations, the recipient paid exactly the payout, the fee kept', async () => {
    const recipient = '0x00000000000000000000000000000000000a11ce'
    const address = await payoutAddress(recipient)
    await mint(anvil, usdc, address.address, 25_000_000n)
    await anvil.mine(1)
    const submitted = await waitOnChain('the payout submitted', async () => (await drainsOf(address)).find((drain) => drain.state === 'payment_submitted'))
    expect(submitted.destination_tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(submitted.waiting_for).toBeUndefined()
    await anvil.mine(2)
    const processed = await waitOnChain('the payout processed', async () => (await drainsOf(address)).find((drain) => drain.state === 'payment_processed'))
    expect(processed).toMatchObject({ amount: '25.000000', destination_tx_hash: submitted.destination_tx_hash, receipt: { developer_fee: '0.250000', outgoing_amount: '24.750000' } })
    expect(await balanceOf(anvil, usdc, recipient)).toBe(24_750_000n)
    expect(await transfersFromHotTo(recipient)).toBe(1)
    const receipt = await anvil.publicClient.getTransactionReceipt({ hash: processed.destination_tx_hash as `0x${string}` })
    expect(receipt.from.toLowerCase()).toBe(hot.toLowerCase())
    const fees = await server.app.db.selectFrom('ledger_accounts').select('available').where('environment', '=', 'live').where('kind', '=', 'developer_fee').where('app_id', '=', key.appId).execute()
    expect(fees.reduce((sum, account) => sum + BigInt(account.available), 0n)).toBe(250_000n)
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })

  it('a live payment intent settling to an outside address: paid on chain, then its payout sent by the hot wallet and processed, the recipient paid exactly', async () => {
    const recipient = '0x0000000000000000000000000000000000c0ffee'
    const intent = await server.request<{ id: string; source_deposit_instructions: { to_address: string } }>('POST', '/api/v0/payment-intents/stablecoin', {
      key,
      headers: { 'idempotency-key': randomUUID() },
      body: { sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base', destinationAddress: recipient, amount: '7.50', customer_first_name: 'Ada', customer_last_name: 'Lovelace' },
    })
    expect(intent.status, intent.text).toBe(201)
    await mint(anvil, usdc, intent.body.source_deposit_instructions.to_address as Address, 7_500_000n)
    await anvil.mine(1)
    const read = () => server.request<{ state: string; destination_tx_hash?: string; waiting_for?: string }>('GET', `/api/v0/payment-intents/${intent.body.id}`, { key })
    const processed = await waitOnChain('the intent processed', async () => {
      await anvil.mine(1)
      const answer = await read()
      return answer.body.state === 'payment_processed' ? answer.body : undefined
    })
    expect(processed.destination_tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(processed.waiting_for).toBeUndefined()
    expect(await balanceOf(anvil, usdc, recipient)).toBe(7_500_000n)
    expect(await transfersFromHotTo(recipient)).toBe(1)
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })

  it('a payout the token refuses (to the zero address) is never sent: the drain ends in error with its entry voided, the deposit back in clearing', async () => {
    const address = await payoutAddress('0x0000000000000000000000000000000000000000')
    await mint(anvil, usdc, address.address, 3_000_000n)
    await anvil.mine(1)
    const failed = await waitOnChain('the drain in error', async () => (await drainsOf(address)).find((drain) => drain.state === 'error'))
    expect(failed.return_details?.reason).toMatch(/^the payout failed on chain: the token refuses this transfer: .*; it needs an operator$/)
    expect(failed.destination_tx_hash).toBeUndefined()
    const clearing = await server.app.db.selectFrom('ledger_accounts').select('available').where('environment', '=', 'live').where('kind', '=', 'clearing').where('reference', '=', address.id).executeTakeFirstOrThrow()
    expect(clearing.available).toBe('3000000')
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })

  it("a payout the hot wallet's float cannot cover waits, queued, with an alert in chains status; sent once the float is topped up; low gas is an alert too", async () => {
    const recipient = '0x00000000000000000000000000000000000b0b00'
    const address = await payoutAddress(recipient)
    const float = await balanceOf(anvil, usdc, hot)
    await mint(anvil, usdc, address.address, 2n * float)
    await anvil.mine(1)
    const waiting = await waitOnChain('the payout queued short of float', async () => {
      const rows = await server.app.db.selectFrom('chain_payouts').select(['status', 'reason']).where('to_address', '=', recipient).execute()
      return rows[0]?.reason === null || rows[0] === undefined ? undefined : rows[0]
    })
    expect(waiting.status).toBe('queued')
    expect((await drainsOf(address))[0]?.waiting_for).toBe('payout_sender')
    const [status] = await readChainsStatus(server.app.db, chains)
    expect(status?.alerts).toEqual([expect.stringMatching(/^1 payout\(s\) wait: the hot wallet's float of the token is short of them/)])
    expect(status?.payouts).toMatchObject({ queued: 1, confirmed: 2, failed: 1 })
    expect(status?.hotWallet?.address).toBe(hot.toLowerCase())
    await mint(anvil, usdc, hot, 2n * float)
    await anvil.mine(3)
    await waitOnChain('the payout processed', async () => {
      await anvil.mine(1)
      return (await drainsOf(address)).find((drain) => drain.state === 'payment_processed')
    })
    expect(await transfersFromHotTo(recipient)).toBe(1)
    await anvil.testClient.setBalance({ address: hot, value: 1_000_000n })
    const low = await waitOnChain('the low gas alert', async () => {
      const [chain] = await readChainsStatus(server.app.db, chains)
      return chain?.alerts.find((alert) => alert.includes('for gas'))
    })
    expect(low).toBe(`the hot wallet ${hot.toLowerCase()} holds 1000000 wei for gas, below minGasBalanceGwei (10000000): top it up before payouts stall`)
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })
})
