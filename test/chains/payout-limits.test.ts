import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainsConfig } from '../../src/chains/config.js'
import { readChainsStatus } from '../../src/chains/status.js'
import { verifyLedger } from '../../src/ledger/ledger.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { livePayoutAddress, waitOnChain } from '../helpers/chain-api.js'
import { testXpub } from '../helpers/receiving-key.js'
import { balanceOf, deployToken, mint } from '../helpers/test-token.js'
import { CLI, exitWithin, launch } from '../processes.js'

/**
 * The spending limit: a chain that may send 30 USDC a day without an operator. A payout that
 * would go above it waits (awaiting_approval, an alert in chains status) until `devplatform
 * payouts approve` names who approves and why; then it is sent, once, and the approval stays on it.
 */

let server: TestServer
let anvil: Anvil
let usdc: Address
let key: TestKey
let chains: ChainsConfig

async function payoutTo(recipient: string, units: bigint): Promise<void> {
  const { address } = await livePayoutAddress(server, key, recipient)
  await mint(anvil, usdc, address, units)
  await anvil.mine(1)
}

async function payoutOf(recipient: string) {
  return server.app.db.selectFrom('chain_payouts').selectAll().where('to_address', '=', recipient).executeTakeFirst()
}

function cli(...args: string[]) {
  return launch(CLI, args, { DATABASE_URL: server.database.url })
}

beforeAll(async () => {
  anvil = await startAnvil()
  usdc = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
  const hotWallet = anvil.accounts[6]
  if (hotWallet === undefined) throw new Error('no account')
  await mint(anvil, usdc, hotWallet.address, 1_000_000_000n)
  chains = {
    file: 'test',
    receivingXpub: testXpub(),
    hotWallet,
    chains: [
      { chain: 'base', chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: usdc.toLowerCase() }, confirmations: 1, pollIntervalMs: 50, maxBlockRange: 100, startBlock: 0, rpcTimeoutMs: 2_000, spendingLimits: { usdc: 30_000_000n }, spendingWindowSeconds: 86_400 },
    ],
  }
  server = await startTestServer({ config: { chains, drains: { scheduler: true, fastDelayMs: 20, achDelayMs: 20, pollIntervalMs: 20, concurrency: 2 } } })
  key = await server.createKey({ environment: 'production' })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await anvil?.close()
})

describe('the spending limit', () => {
  it('30 USDC a day: 25 is sent, the next 10 waits for approval with an alert; payouts approve sends it once and keeps who and why', async () => {
    const first = '0x0000000000000000000000000000000000001111'
    const second = '0x0000000000000000000000000000000000002222'
    await payoutTo(first, 25_000_000n)
    await waitOnChain('the first payout confirmed', async () => ((await payoutOf(first))?.status === 'confirmed' ? true : undefined))
    await payoutTo(second, 10_000_000n)
    const held = await waitOnChain('the second payout held', async () => {
      const payout = await payoutOf(second)
      return payout?.status === 'awaiting_approval' ? payout : undefined
    })
    expect(held.reason).toBe('above the spending limit: 25000000 units of usdc sent in the window, this payout 10000000, the limit 30000000')
    const [status] = await readChainsStatus(server.app.db, chains)
    expect(status?.alerts).toEqual(["1 payout(s) above the spending limit wait for an operator's approval (devplatform payouts approve)"])

    const refused = cli('payouts', 'approve', '--payout', held.id, '--by', 'ops@acme.example')
    expect((await exitWithin(refused, 20_000)).code).toBe(2)
    expect(refused.stderr()).toContain('--reason TEXT is required')
    const approved = cli('payouts', 'approve', '--payout', held.id, '--by', 'ops@acme.example', '--reason', 'customer refund, ticket 4411')
    expect((await exitWithin(approved, 20_000)).code, approved.stderr()).toBe(0)
    expect(approved.stdout()).toBe(`payout ${held.id} approved by ops@acme.example: queued to be sent\n`)
    const sent = await waitOnChain('the approved payout confirmed', async () => {
      await anvil.mine(1)
      const payout = await payoutOf(second)
      return payout?.status === 'confirmed' ? payout : undefined
    })
    expect(sent).toMatchObject({ approved_by: 'ops@acme.example', approval_reason: 'customer refund, ticket 4411' })
    expect(await balanceOf(anvil, usdc, second)).toBe(10_000_000n)
    const again = cli('payouts', 'approve', '--payout', held.id, '--by', 'ops@acme.example', '--reason', 'twice')
    expect((await exitWithin(again, 20_000)).code).toBe(2)
    expect(again.stderr()).toContain(`payout ${held.id} is confirmed, not awaiting_approval`)
    const list = cli('payouts', 'list', '--status', 'confirmed', '--json')
    expect((await exitWithin(list, 20_000)).code).toBe(0)
    expect((JSON.parse(list.stdout()) as { id: string; approved_by: string | null }[]).map((row) => row.approved_by).sort()).toEqual(['ops@acme.example', null].sort())
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })
})
