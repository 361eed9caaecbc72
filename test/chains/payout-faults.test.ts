import { type Address, encodeAbiParameters, keccak256, parseAbiItem, toHex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainsConfig } from '../../src/chains/config.js'
import { verifyLedger } from '../../src/ledger/ledger.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { livePayoutAddress, waitOnChain } from '../helpers/chain-api.js'
import { testXpub } from '../helpers/receiving-key.js'
import { balanceOf, deployToken, mint } from '../helpers/test-token.js'

/**
 * A payout's transaction on a chain that does not mine it at once (anvil with automine off): one
 * left in the pool is replaced (same nonce, higher fee) and the mined replacement is the hash
 * recorded; one that reverts on chain (the hot wallet's balance taken away between the estimate
 * and the block) ends the drain in error with its entry voided; one the node's pool drops is
 * broadcast again and lands once.
 */

interface Drain {
  state: string
  destination_tx_hash?: string
  return_details?: { reason: string }
}

let server: TestServer
let anvil: Anvil
let usdc: Address
let key: TestKey
let hot: Address

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)')
/** TestStablecoin's balances: OpenZeppelin ERC20's first storage slot, a mapping. */
const balanceSlot = (owner: Address) => keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [owner, 0n]))

/** A live liquidation address paying out to `recipient`; `amount` deposited to it and confirmed, with automine off from then on. */
async function depositFor(recipient: Address, amount: bigint): Promise<() => Promise<Drain | undefined>> {
  const address = await livePayoutAddress(server, key, recipient)
  await anvil.rpc('evm_setAutomine', [true])
  await mint(anvil, usdc, address.address, amount)
  await anvil.rpc('evm_setAutomine', [false])
  await anvil.mine(1)
  return async () => (await server.request<{ data: Drain[] }>('GET', `/api/v0/customers/${address.customerId}/liquidation_addresses/${address.id}/drains`, { key })).body.data[0]
}

async function payoutTo(recipient: Address) {
  return server.app.db.selectFrom('chain_payouts').selectAll().where('to_address', '=', recipient.toLowerCase()).executeTakeFirstOrThrow()
}

async function attemptsOf(payoutId: string) {
  return server.app.db.selectFrom('chain_payout_attempts').selectAll().where('payout_id', '=', payoutId).orderBy('created_at').execute()
}

async function transfersTo(recipient: Address): Promise<number> {
  return (await anvil.publicClient.getLogs({ address: usdc, event: TRANSFER, args: { from: hot, to: recipient }, fromBlock: 0n })).length
}

beforeAll(async () => {
  anvil = await startAnvil()
  usdc = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
  const hotWallet = anvil.accounts[4]
  if (hotWallet === undefined) throw new Error('no account')
  hot = hotWallet.address
  await mint(anvil, usdc, hot, 1_000_000_000n)
  const chains: ChainsConfig = {
    file: 'test',
    receivingXpub: testXpub(),
    hotWallet,
    chains: [{ chain: 'base', chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: usdc.toLowerCase() }, confirmations: 2, pollIntervalMs: 50, maxBlockRange: 100, startBlock: 0, rpcTimeoutMs: 2_000, payoutReplaceAfterMs: 400 }],
  }
  server = await startTestServer({ config: { chains, drains: { scheduler: true, fastDelayMs: 20, achDelayMs: 20, pollIntervalMs: 20, concurrency: 2 } } })
  key = await server.createKey({ environment: 'production' })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await anvil?.close()
})

describe('payouts on a chain that does not mine them at once', () => {
  it('a transaction left in the pool is replaced (same nonce, higher fee); the mined replacement is the hash recorded and shown, once on chain, processed after its confirmations', async () => {
    const recipient: Address = '0x0000000000000000000000000000000000001001'
    const drain = await depositFor(recipient, 4_000_000n)
    await waitOnChain('the payout submitted', async () => ((await drain())?.state === 'payment_submitted' ? true : undefined))
    const payout = await payoutTo(recipient)
    const attempts = await waitOnChain('a replacement recorded', async () => {
      const rows = await attemptsOf(payout.id)
      return rows.length >= 2 ? rows : undefined
    })
    expect(new Set(attempts.map((attempt) => attempt.nonce))).toEqual(new Set([payout.nonce]))
    expect(BigInt(attempts[1]?.max_fee_per_gas ?? 0)).toBeGreaterThan(BigInt(attempts[0]?.max_fee_per_gas ?? 0))
    await anvil.mine(1)
    const processed = await waitOnChain('the drain processed', async () => {
      await anvil.mine(1)
      const read = await drain()
      return read?.state === 'payment_processed' ? read : undefined
    })
    const mined = (await attemptsOf(payout.id)).filter((attempt) => attempt.tx_hash !== attempts[0]?.tx_hash)
    const receipts = await Promise.all((await attemptsOf(payout.id)).map((attempt) => anvil.publicClient.getTransactionReceipt({ hash: attempt.tx_hash as `0x${string}` }).catch(() => undefined)))
    const minedHashes = receipts.flatMap((receipt) => (receipt === undefined ? [] : [receipt.transactionHash.toLowerCase()]))
    expect(minedHashes).toHaveLength(1)
    expect(mined.map((attempt) => attempt.tx_hash)).toContain(minedHashes[0])
    expect(processed.destination_tx_hash).toBe(minedHashes[0])
    expect((await payoutTo(recipient)).tx_hash).toBe(minedHashes[0])
    expect(await transfersTo(recipient)).toBe(1)
    expect(await balanceOf(anvil, usdc, recipient)).toBe(4_000_000n)
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })

  it('a transaction that reverts on chain (the float taken away after the estimate): the drain in error, its entry voided, the deposit back in clearing, ledger verify clean', async () => {
    const recipient: Address = '0x0000000000000000000000000000000000001002'
    const drain = await depositFor(recipient, 5_000_000n)
    await waitOnChain('the payout submitted', async () => ((await drain())?.state === 'payment_submitted' ? true : undefined))
    const float = await balanceOf(anvil, usdc, hot)
    await anvil.rpc('anvil_setStorageAt', [usdc, balanceSlot(hot), toHex(0n, { size: 32 })])
    await anvil.mine(1)
    const failed = await waitOnChain('the drain in error', async () => {
      await anvil.mine(1)
      const read = await drain()
      return read?.state === 'error' ? read : undefined
    })
    const payout = await payoutTo(recipient)
    expect(payout.status).toBe('failed')
    expect(failed.return_details?.reason).toBe(`the payout failed on chain: its transaction ${payout.tx_hash} reverted; it needs an operator`)
    expect(failed.destination_tx_hash).toBe(payout.tx_hash)
    expect((await anvil.publicClient.getTransactionReceipt({ hash: payout.tx_hash as `0x${string}` })).status).toBe('reverted')
    const entry = await server.app.db
      .selectFrom('drains')
      .innerJoin('ledger_entries', 'ledger_entries.id', 'drains.pending_entry_id')
      .select('ledger_entries.status')
      .where('drains.id', '=', payout.owner_id)
      .executeTakeFirstOrThrow()
    expect(entry.status).toBe('voided')
    const clearing = await server.app.db
      .selectFrom('drains')
      .innerJoin('ledger_accounts', 'ledger_accounts.reference', 'drains.liquidation_address_id')
      .select('ledger_accounts.available')
      .where('drains.id', '=', payout.owner_id)
      .where('ledger_accounts.kind', '=', 'clearing')
      .executeTakeFirstOrThrow()
    expect(clearing.available).toBe('5000000')
    expect(await transfersTo(recipient)).toBe(0)
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
    await anvil.rpc('anvil_setStorageAt', [usdc, balanceSlot(hot), toHex(float, { size: 32 })])
  })

  it('a transaction the node drops from its pool is broadcast again: mined once, the drain processed with the mined hash', async () => {
    const recipient: Address = '0x0000000000000000000000000000000000001003'
    const drain = await depositFor(recipient, 6_000_000n)
    await waitOnChain('the payout submitted', async () => ((await drain())?.state === 'payment_submitted' ? true : undefined))
    const payout = await payoutTo(recipient)
    await anvil.rpc('anvil_dropTransaction', [payout.tx_hash])
    const back = await waitOnChain('the payout in the pool again', async () => {
      const pool = (await anvil.rpc('txpool_content', [])) as { pending: Record<string, Record<string, { hash: string }>> }
      return Object.values(pool.pending).flatMap((byNonce) => Object.values(byNonce)).find((transaction) => transaction.hash !== undefined)
    })
    expect((await attemptsOf(payout.id)).map((attempt) => attempt.tx_hash)).toContain(back.hash.toLowerCase())
    const processed = await waitOnChain('the drain processed', async () => {
      await anvil.mine(1)
      const read = await drain()
      return read?.state === 'payment_processed' ? read : undefined
    })
    expect(processed.destination_tx_hash).toBe((await payoutTo(recipient)).tx_hash)
    expect((await anvil.publicClient.getTransactionReceipt({ hash: processed.destination_tx_hash as `0x${string}` })).status).toBe('success')
    expect(await transfersTo(recipient)).toBe(1)
    expect(await balanceOf(anvil, usdc, recipient)).toBe(6_000_000n)
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })
})
