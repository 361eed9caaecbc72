// Costs about 25–30 s: one anvil, one server, a few dozen blocks, a 1.5 s wait for rounds that must sweep nothing; `ledger reconcile` runs the built CLI three times.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import type { Address, Hash } from 'viem'
import { HDKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainsConfig } from '../../src/chains/config.js'
import { loadDepositKeys } from '../../src/chains/keys.js'
import { verifyLedger } from '../../src/ledger/ledger.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { created, livePayoutAddress, waitOnChain } from '../helpers/chain-api.js'
import { testXprv, testXpub } from '../helpers/receiving-key.js'
import { balanceOf, deployToken, mint, TEST_TOKEN_ABI } from '../helpers/test-token.js'
import { cleanUp, CLI, exitWithin, launch, tempDir } from '../processes.js'

/**
 * Sweeping on a real chain (docs/chains.md#moving-deposits-on): a server whose chains
 * configuration has the receiving xprv moves each confirmed deposit from its receiving address to
 * a hot wallet that holds no token at first, by permit + transferFrom, exactly once; a payout is
 * paid from what was swept; a sweep whose transactions never reached the node is broadcast again
 * as the same bytes and lands once; reconcile and verify stay clean; no key is in a log or a row.
 */

let server: TestServer
let anvil: Anvil
let usdc: Address
let key: TestKey
let hot: Address
let chainsFile: string

const post = <T>(path: string, body: unknown): Promise<T> => created<T>(server, key, path, body)

async function reconcile(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const running = launch(CLI, ['ledger', 'reconcile', '--chain', 'base'], { DATABASE_URL: server.database.url, CHAINS_FILE: chainsFile })
  const exit = await exitWithin(running, 20_000)
  return { code: exit.code, stdout: running.stdout(), stderr: running.stderr() }
}

/** The Transfer logs of the token from `from` to `to`, their values. */
async function transfers(from: Address, to: Address): Promise<bigint[]> {
  const logs = await anvil.publicClient.getContractEvents({ address: usdc, abi: TEST_TOKEN_ABI, eventName: 'Transfer', args: { from, to }, fromBlock: 0n })
  return logs.map((log) => (log.args as { value: bigint }).value)
}

const sweepsOf = (address: string) => server.app.db.selectFrom('chain_sweeps').selectAll().where('address', '=', address.toLowerCase()).execute()

/** Waits for the sweep of `address` to be confirmed, mining a block at a time. */
const sweptConfirmed = (address: string) =>
  waitOnChain(`the sweep of ${address} confirmed`, async () => {
    await anvil.mine(1)
    const [sweep] = await sweepsOf(address)
    return sweep?.status === 'confirmed' ? sweep : undefined
  })

beforeAll(async () => {
  anvil = await startAnvil()
  usdc = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
  const hotWallet = anvil.accounts[7]
  if (hotWallet === undefined) throw new Error('no account')
  hot = hotWallet.address
  const base = { chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: usdc.toLowerCase() }, confirmations: 2, pollIntervalMs: 50, maxBlockRange: 100, startBlock: 0, rpcTimeoutMs: 2_000 }
  chainsFile = join(tempDir('sweeping-'), 'chains.json')
  writeFileSync(chainsFile, JSON.stringify({ receivingXpub: testXpub(), chains: { base } }))
  const chains: ChainsConfig = {
    file: 'test',
    receivingXpub: testXpub(),
    hotWallet,
    depositKeys: loadDepositKeys({ env: 'RECEIVING_XPRV' }, { RECEIVING_XPRV: testXprv() }, testXpub()),
    chains: [{ chain: 'base', ...base }],
  }
  server = await startTestServer({ config: { chains, drains: { scheduler: true, fastDelayMs: 20, achDelayMs: 20, pollIntervalMs: 20, concurrency: 2 } } })
  key = await server.createKey({ environment: 'production' })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await anvil?.close()
  cleanUp()
})

describe('sweeping confirmed deposits to the hot wallet', () => {
  it('a confirmed deposit is swept once: its address holds 0, the hot wallet exactly the deposit more; reconcile finds no difference', async () => {
    const receiving = await post<{ address: Address }>('/api/v0/receiving-addresses', { chain: 'base', currency: 'usdc' })
    expect(await balanceOf(anvil, usdc, hot)).toBe(0n)
    await mint(anvil, usdc, receiving.address, 10_000_000n)
    const sweep = await sweptConfirmed(receiving.address)
    expect(sweep).toMatchObject({ amount: '10000000', sender: hot.toLowerCase(), permit_nonce: '0', reason: null })
    expect(await balanceOf(anvil, usdc, receiving.address)).toBe(0n)
    expect(await balanceOf(anvil, usdc, hot)).toBe(10_000_000n)
    expect(await transfers(receiving.address, hot)).toEqual([10_000_000n])
    const receipts = await Promise.all([sweep.permit_tx_hash, sweep.transfer_tx_hash].map((hash) => anvil.publicClient.getTransactionReceipt({ hash: hash as Hash })))
    expect(receipts.map((receipt) => [receipt.status, receipt.from.toLowerCase()])).toEqual([
      ['success', hot.toLowerCase()],
      ['success', hot.toLowerCase()],
    ])
    // Swept deposits are marked; nothing is swept again however many rounds pass.
    await anvil.mine(3)
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(await sweepsOf(receiving.address)).toHaveLength(1)
    expect(await transfers(receiving.address, hot)).toHaveLength(1)
    const deposits = await server.app.db.selectFrom('chain_deposits').select('sweep_id').where('to_address', '=', receiving.address.toLowerCase()).execute()
    expect(deposits).toEqual([{ sweep_id: sweep.id }])
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
    expect(await reconcile()).toEqual({ code: 0, stdout: 'base live: no difference: 1 receiving address(es) and 1 hot wallet(s) hold 10.000000 usdc, as the books say\n', stderr: '' })
  }, 60_000)

  it('a deposit drained to an outside address with no float recorded: swept, then its payout paid from what was swept; reconcile finds no difference', async () => {
    const recipient = '0x00000000000000000000000000000000000a11ce'
    const address = await livePayoutAddress(server, key, recipient, { custom_developer_fee_percent: '1' })
    // The hot wallet holds 10 from the first test: less than this payout, which can only come from the sweep.
    await mint(anvil, usdc, address.address, 25_000_000n)
    await waitOnChain('the drain processed', async () => {
      await anvil.mine(1)
      const drains = await server.request<{ data: { state: string }[] }>('GET', `/api/v0/customers/${address.customerId}/liquidation_addresses/${address.id}/drains`, { key })
      return drains.body.data[0]?.state === 'payment_processed' ? true : undefined
    })
    await sweptConfirmed(address.address)
    expect(await balanceOf(anvil, usdc, address.address)).toBe(0n)
    expect(await balanceOf(anvil, usdc, recipient)).toBe(24_750_000n)
    expect(await balanceOf(anvil, usdc, hot)).toBe(10_250_000n)
    expect(await transfers(address.address, hot)).toEqual([25_000_000n])
    expect(await transfers(hot, recipient)).toEqual([24_750_000n])
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
    expect(await reconcile()).toEqual({ code: 0, stdout: 'base live: no difference: 2 receiving address(es) and 1 hot wallet(s) hold 10.250000 usdc, as the books say\n', stderr: '' })
  }, 60_000)

  it('a sweep recorded but never broadcast (its transactions gone from the node, as after a kill between record and broadcast) is sent again as the same bytes: swept once', async () => {
    const receiving = await post<{ address: Address }>('/api/v0/receiving-addresses', { chain: 'base', currency: 'usdc' })
    await mint(anvil, usdc, receiving.address, 5_000_000n)
    await anvil.testClient.setAutomine(false)
    try {
      await waitOnChain('the deposit seen', async () => (await server.app.db.selectFrom('chain_deposits').select('id').where('to_address', '=', receiving.address.toLowerCase()).executeTakeFirst()) ?? undefined)
      await anvil.mine(1)
      const [sweep] = await waitOnChain('the sweep broadcast', async () => {
        const rows = await sweepsOf(receiving.address)
        return rows[0]?.status === 'submitted' ? rows : undefined
      })
      if (sweep === undefined) throw new Error('no sweep')
      for (const hash of [sweep.permit_tx_hash, sweep.transfer_tx_hash]) await anvil.testClient.dropTransaction({ hash: hash as Hash })
      await waitOnChain('the same transactions back in the pool', async () => {
        const back = await Promise.all([sweep.permit_tx_hash, sweep.transfer_tx_hash].map((hash) => anvil.publicClient.getTransaction({ hash: hash as Hash }).catch(() => undefined)))
        return back.every((transaction) => transaction !== undefined) ? true : undefined
      })
      await anvil.mine(1)
    } finally {
      await anvil.testClient.setAutomine(true)
    }
    const confirmed = await sweptConfirmed(receiving.address)
    expect(await sweepsOf(receiving.address)).toHaveLength(1)
    expect(await transfers(receiving.address, hot)).toEqual([5_000_000n])
    expect(await balanceOf(anvil, usdc, receiving.address)).toBe(0n)
    expect(await balanceOf(anvil, usdc, hot)).toBe(15_250_000n)
    const mined = await anvil.publicClient.getTransactionReceipt({ hash: confirmed.transfer_tx_hash as Hash })
    expect(mined.status).toBe('success')
    expect(await reconcile()).toMatchObject({ code: 0 })
  }, 60_000)

  it('the receiving xprv and the keys derived from it are in no log line and no row of any table', async () => {
    const root = HDKey.fromExtendedKey(testXprv())
    const addresses = await server.app.db.selectFrom('chain_addresses').select('derivation_index').execute()
    expect(addresses.length).toBeGreaterThanOrEqual(3)
    const secrets = [testXprv().slice(4, 60).toLowerCase()]
    for (const { derivation_index: index } of addresses) {
      const privateKey = root.deriveChild(0).deriveChild(index).privateKey
      if (privateKey === null) throw new Error('no private key')
      secrets.push(Buffer.from(privateKey).toString('hex'))
    }
    const logs = server.logs().toLowerCase()
    expect(logs).toContain('sweeper: confirmed deposits sent to the hot wallet')
    for (const secret of secrets) expect(logs).not.toContain(secret)
    const tables = await server.app.db.introspection.getTables()
    expect(tables.length).toBeGreaterThan(20)
    for (const table of tables) {
      const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table.name)}`.execute(server.app.db)
      const text = JSON.stringify(rows.rows).toLowerCase()
      for (const secret of secrets) expect(text.includes(secret), table.name).toBe(false)
    }
  })
})
