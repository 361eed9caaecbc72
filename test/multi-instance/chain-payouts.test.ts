import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Address, parseAbiItem } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../backend.js'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { balanceOf, deployToken, mint } from '../helpers/test-token.js'
import { cleanUp, CLI, exitWithin, launch, tempDir, waitUntil } from '../processes.js'
import { testXpub } from '../helpers/receiving-key.js'
import { api, cliJson, type Credentials, type Instance, serviceVars, sleep, startServer } from './delivery-helpers.js'
import { kill9 } from './money-helpers.js'

/**
 * Live payouts sent by two servers on one PostgreSQL, the one holding the sender's lease killed
 * with kill -9 at a random moment of each round (signing, recording, broadcasting, settling):
 * every drain's payout is on chain exactly once (counted in the token's Transfer logs from the
 * hot wallet), every recipient holds exactly what its drains paid out, no nonce is used twice,
 * and `devplatform ledger verify` passes.
 */

const HOT_KEY_VAR = 'DEVPLATFORM_TEST_HOT_WALLET_KEY'
const ADDRESSES = 6
const ROUNDS = 4

let fresh: FreshDatabase
let anvil: Anvil
let token: Address
let chainsFile: string
let hotKey: string
let hot: Address
const servers = new Map<string, Instance>()
/** every server started, the killed ones too: their output is searched for the key */
const started: Instance[] = []

afterAll(async () => {
  for (const server of servers.values()) server.child.kill('SIGKILL')
  await anvil?.close()
  cleanUp()
  await dropFreshDatabases()
})

beforeAll(async () => {
  fresh = await freshDatabase('postgres')
  anvil = await startAnvil()
  token = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
  const account = anvil.accounts[7]
  if (account === undefined) throw new Error('no account')
  hot = account.address
  // anvil's well-known test mnemonic: this key guards nothing but the local node's test money.
  hotKey = `0x${Buffer.from(account.getHdKey().privateKey ?? new Uint8Array()).toString('hex')}`
  await mint(anvil, token, hot, 10_000_000_000n)
  chainsFile = join(tempDir('chains-'), 'chains.json')
  writeFileSync(
    chainsFile,
    JSON.stringify({
      receivingXpub: testXpub(),
      hotWalletKey: { env: HOT_KEY_VAR },
      chains: { base: { chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: token }, confirmations: 2, pollIntervalMs: 100, maxBlockRange: 50, startBlock: 0, maxHeadAgeMs: 0 } },
    }),
  )
}, 60_000)

async function start(name: string): Promise<Instance> {
  const server = await startServer(name, serviceVars(fresh.url, { CHAINS_FILE: chainsFile, DRAIN_SCHEDULER: 'on', DRAIN_DELAY_FAST_MS: '20', [HOT_KEY_VAR]: hotKey }))
  servers.set(name, server)
  started.push(server)
  return server
}

async function senderPid(): Promise<number | undefined> {
  const rows = await fresh.query<{ holder: string; expires_at: string }>(`select holder, expires_at from chain_leases where name = 'sender:base'`)
  const row = rows[0]
  if (row === undefined || row.expires_at < new Date().toISOString()) return undefined
  return Number(row.holder.split(':')[1])
}

async function post<T>(baseUrl: string, credentials: Credentials, path: string, body: unknown): Promise<T> {
  const answer = await api<T>(baseUrl, credentials, 'POST', path, body)
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  return answer.body
}

describe('live payouts across instances', () => {
  it(`${ADDRESSES * ROUNDS} payouts made around ${ROUNDS} kill -9s of the sending server: each on chain exactly once, every recipient paid exactly, ledger verify clean`, async () => {
    await start('a')
    await start('b')
    const app = await cliJson<{ id: string }>(fresh.url, 'apps', 'create', '--name', 'payouts')
    const key = await cliJson<{ client_key: string; client_secret: string }>(fresh.url, 'keys', 'create', '--app', app.id, '--environment', 'production', '--rate-limit', '100000000')
    const credentials: Credentials = { appId: app.id, headers: { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret } }
    const baseUrl = [...servers.values()][0]?.baseUrl ?? ''
    const targets: { receiving: Address; recipient: Address }[] = []
    for (let i = 0; i < ADDRESSES; i++) {
      const receiving = await post<{ address: Address }>(baseUrl, credentials, '/api/v0/receiving-addresses', { chain: 'base', currency: 'usdc' })
      const customer = await post<{ id: string }>(baseUrl, credentials, '/api/v0/customers', { first_name: 'Ada', last_name: `Payout ${i}`, phone_number: '+15550100' })
      const recipient = `0x${(0xbeef00 + i).toString(16).padStart(40, '0')}` as Address
      await post(baseUrl, credentials, `/api/v0/customers/${customer.id}/liquidation_addresses`, {
        chain: 'base',
        currency: 'usdc',
        address: receiving.address,
        destination_payment_rail: 'base',
        destination_currency: 'usdc',
        destination_address: recipient,
      })
      targets.push({ receiving: receiving.address, recipient })
    }
    const owed = new Map<Address, bigint>()
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, target] of targets.entries()) {
        const amount = BigInt(1_000_000 + round * 1_000 + index)
        await mint(anvil, token, target.receiving, amount)
        owed.set(target.recipient, (owed.get(target.recipient) ?? 0n) + amount)
      }
      await anvil.mine(1)
      // The sender is killed at a random moment of its round.
      await sleep(200 + Math.floor(Math.random() * 600))
      await anvil.mine(1)
      // A killed holder's lease runs out within 6 s; then one of the running servers holds it.
      const victim = await waitUntil('a running server holding the sender lease', async () => {
        const pid = await senderPid()
        return [...servers.values()].find((server) => server.pid === pid)
      }, 20_000, 50)
      await kill9(victim)
      servers.delete(victim.name)
      await start(victim.name)
    }
    // The operator records the hot wallet's float (minted in beforeAll), while the payouts settle.
    const float = launch(CLI, ['ledger', 'float', '--chain', 'base', '--currency', 'usdc', '--amount', '10000'], { DATABASE_URL: fresh.url })
    await waitUntil(
      'every payout confirmed',
      async () => {
        await anvil.mine(1)
        const rows = await fresh.query<{ status: string; n: string }>(`select status, count(*) as n from chain_payouts group by status`)
        const confirmed = Number(rows.find((row) => row.status === 'confirmed')?.n ?? 0)
        return confirmed === ADDRESSES * ROUNDS ? true : undefined
      },
      90_000,
      250,
    )
    expect((await exitWithin(float, 20_000)).code).toBe(0)
    const transfers = await anvil.publicClient.getLogs({ address: token, event: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'), args: { from: hot }, fromBlock: 0n })
    expect(transfers).toHaveLength(ADDRESSES * ROUNDS)
    for (const target of targets) expect(await balanceOf(anvil, token, target.recipient)).toBe(owed.get(target.recipient))
    const nonces = await fresh.query<{ nonce: string }>(`select nonce from chain_payouts order by nonce`)
    expect(nonces.map((row) => Number(row.nonce))).toEqual(Array.from({ length: ADDRESSES * ROUNDS }, (_, i) => i))
    const drains = await fresh.query<{ state: string; n: string }>(`select state, count(*) as n from drains group by state`)
    expect(drains.map((row) => [row.state, Number(row.n)])).toEqual([['payment_processed', ADDRESSES * ROUNDS]])
    const verify = launch(CLI, ['ledger', 'verify', '--environment', 'live'], { DATABASE_URL: fresh.url })
    // The books and every balanceOf agree: each receiving address holds its deposits, the hot wallet its float less the payouts.
    const reconcile = launch(CLI, ['ledger', 'reconcile', '--chain', 'base'], { DATABASE_URL: fresh.url, CHAINS_FILE: chainsFile })
    const [verified, reconciled] = await Promise.all([exitWithin(verify, 20_000), exitWithin(reconcile, 20_000)])
    expect(verify.stdout()).toBe('live: ok\n')
    expect(verified.code).toBe(0)
    expect(reconcile.stdout()).toMatch(new RegExp(`^base live: no difference: ${ADDRESSES} receiving address\\(es\\) and 1 hot wallet\\(s\\) hold 10000\\.\\d{6} usdc, as the books say\n$`))
    expect(reconciled.code).toBe(0)
    // The key is radioactive: in no server's output, and in no row of any table.
    const secret = hotKey.slice(2).toLowerCase()
    for (const server of started) expect(`${server.stdout()}${server.stderr()}`.toLowerCase()).not.toContain(secret)
    const tables = await fresh.query<{ table_name: string }>(`select table_name from information_schema.tables where table_schema = current_schema()`)
    expect(tables.length).toBeGreaterThan(20)
    for (const { table_name: table } of tables) {
      const rows = await fresh.query<{ row: string }>(`select t::text as row from "${table}" t`)
      expect(rows.filter((row) => row.row.toLowerCase().includes(secret)).length, table).toBe(0)
    }
  }, 240_000)
})
