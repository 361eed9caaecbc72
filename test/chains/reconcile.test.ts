import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyLedger } from '../../src/ledger/ledger.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { livePayoutAddress } from '../helpers/chain-api.js'
import { testXpub } from '../helpers/receiving-key.js'
import { balanceOf, deployToken, mint, TEST_TOKEN_ABI } from '../helpers/test-token.js'
import { cleanUp, CLI, exitWithin, launch, tempDir, waitUntil } from '../processes.js'

/**
 * `devplatform ledger reconcile` against a real chain: a live drain paid out by the hot wallet,
 * the float recorded with `ledger float`, then the books and every balanceOf agree (exit 0); a
 * transfer out of a receiving address the platform did not make is named with its exact
 * difference (exit 1).
 */

let server: TestServer
let anvil: Anvil
let usdc: Address
let key: TestKey
let hot: Address
let chainsFile: string

async function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const running = launch(CLI, args, { DATABASE_URL: server.database.url, CHAINS_FILE: chainsFile })
  const exit = await exitWithin(running, 20_000)
  return { code: exit.code, stdout: running.stdout(), stderr: running.stderr() }
}

beforeAll(async () => {
  anvil = await startAnvil()
  usdc = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
  const hotWallet = anvil.accounts[5]
  if (hotWallet === undefined) throw new Error('no account')
  hot = hotWallet.address
  await mint(anvil, usdc, hot, 1_000_000_000n)
  const base = { chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: usdc.toLowerCase() }, confirmations: 2, pollIntervalMs: 50, maxBlockRange: 100, startBlock: 0, rpcTimeoutMs: 2_000 }
  chainsFile = join(tempDir('reconcile-'), 'chains.json')
  writeFileSync(chainsFile, JSON.stringify({ receivingXpub: testXpub(), chains: { base } }))
  const chains = { file: 'test', receivingXpub: testXpub(), hotWallet, chains: [{ chain: 'base' as const, ...base }] }
  server = await startTestServer({ config: { chains, drains: { scheduler: true, fastDelayMs: 20, achDelayMs: 20, pollIntervalMs: 20, concurrency: 2 } } })
  key = await server.createKey({ environment: 'production' })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await anvil?.close()
  cleanUp()
})

describe('devplatform ledger reconcile', () => {
  it('clean after a deposit drained out by the hot wallet and its float recorded: exit 0 and one line; a transfer out of a receiving address behind the platform: exit 1 naming it and the exact difference', async () => {
    expect(await cli('ledger', 'float', '--chain', 'base', '--currency', 'usdc', '--amount', '1000')).toMatchObject({ code: 0, stdout: "base: the hot wallet's float of usdc is 1000.000000\n" })
    const recipient = '0x00000000000000000000000000000000000a11ce'
    const address = await livePayoutAddress(server, key, recipient, { custom_developer_fee_percent: '1' })
    await mint(anvil, usdc, address.address, 25_000_000n)
    await waitUntil(
      'the drain processed',
      async () => {
        await anvil.mine(1)
        const drains = await server.request<{ data: { state: string }[] }>('GET', `/api/v0/customers/${address.customerId}/liquidation_addresses/${address.id}/drains`, { key })
        return drains.body.data[0]?.state === 'payment_processed' ? true : undefined
      },
      20_000,
      50,
    )
    expect(await balanceOf(anvil, usdc, recipient)).toBe(24_750_000n)
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
    expect(await cli('ledger', 'reconcile', '--chain', 'base')).toEqual({
      code: 0,
      stdout: 'base live: no difference: 1 receiving address(es) and 1 hot wallet(s) hold 1000.250000 usdc, as the books say\n',
      stderr: '',
    })

    // Someone holding the receiving address's key moves 3 USDC out of it.
    await anvil.testClient.impersonateAccount({ address: address.address })
    await anvil.testClient.setBalance({ address: address.address, value: 10n ** 18n })
    await anvil.walletClient.writeContract({ account: address.address, address: usdc, abi: TEST_TOKEN_ABI, functionName: 'transfer', args: [recipient, 3_000_000n] })
    await anvil.mine(1)
    expect(await cli('ledger', 'reconcile', '--chain', 'base', '--environment', 'live')).toEqual({
      code: 1,
      stdout: `${address.address.toLowerCase()} usdc (receiving address): ledger 25.000000, chain 22.000000, difference -3.000000\nbase live: 1 difference(s)\n`,
      stderr: '',
    })
  }, 60_000)
})
