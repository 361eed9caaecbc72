import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainConfig } from '../../src/chains/config.js'
import { Receiving } from '../../src/chains/receiving.js'
import { openDatabase } from '../../src/modules/database.js'
import { parseDatabaseUrl } from '../../src/config.js'
import type { Db } from '../../src/db/database.js'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../backend.js'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { deployToken, mint } from '../helpers/test-token.js'
import { cleanUp, CLI, exitWithin, launch, tempDir, waitUntil } from '../processes.js'
import { testXpub } from '../helpers/receiving-key.js'
import { type Instance, serviceVars, sleep, startServer } from './delivery-helpers.js'
import { kill9 } from './money-helpers.js'

/**
 * The chain watchers of several servers on one PostgreSQL: one reads a chain at a time (the
 * lease), another takes over within seconds of its holder's kill -9, and over rounds of deposits
 * with the watching server killed at a random moment each time, every deposit is recorded and
 * credited exactly once (one row per log, one ledger entry per deposit), and `devplatform ledger
 * verify` passes.
 */

let fresh: FreshDatabase
let anvil: Anvil
let token: Address
let db: Db
let chainsFile: string
let config: ChainConfig
const servers = new Map<string, Instance>()

afterAll(async () => {
  await db?.destroy()
  await anvil?.close()
  cleanUp()
  await dropFreshDatabases()
})

beforeAll(async () => {
  fresh = await freshDatabase('postgres')
  anvil = await startAnvil()
  token = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
  config = { chain: 'base', chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: token.toLowerCase() }, confirmations: 2, pollIntervalMs: 100, maxBlockRange: 50, startBlock: 0, rpcTimeoutMs: 2_000 }
  chainsFile = join(tempDir('chains-'), 'chains.json')
  writeFileSync(chainsFile, JSON.stringify({ receivingXpub: testXpub(), chains: { base: { chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: token }, confirmations: 2, pollIntervalMs: 100, maxBlockRange: 50, startBlock: 0 } } }))
  db = await openDatabase(parseDatabaseUrl(fresh.url, 'DATABASE_URL', 2))
}, 60_000)

async function start(name: string): Promise<Instance> {
  const server = await startServer(name, serviceVars(fresh.url, { CHAINS_FILE: chainsFile, DRAIN_SCHEDULER: 'on' }))
  servers.set(name, server)
  return server
}

async function holderPid(): Promise<number | undefined> {
  const row = await fresh.query<{ holder: string; expires_at: string }>(`select holder, expires_at from chain_leases where name = 'watcher:base'`)
  const holder = row[0]
  if (holder === undefined || holder.expires_at < new Date().toISOString()) return undefined
  return Number(holder.holder.split(':')[1])
}

async function unassignedAddresses(appId: string, count: number): Promise<Address[]> {
  const receiving = new Receiving({ file: 'test', receivingXpub: testXpub(), chains: [config] })
  const addresses: Address[] = []
  for (let i = 0; i < count; i++) {
    addresses.push((await db.transaction().execute((tx) => receiving.allocate(tx, 'base', { appId, ownerType: 'unassigned', ownerId: null, currency: 'usdc' }, Date.now()))) as Address)
  }
  return addresses
}

describe('chain watchers across instances', () => {
  it('one server watches the chain; after its kill -9 the other takes over within seconds; 48 deposits made around 4 kills are each credited once', async () => {
    const first = await start('a')
    const second = await start('b')
    const app = await fresh.query<{ id: string }>(`select id from apps limit 1`)
    let appId = app[0]?.id
    if (appId === undefined) {
      const created = launch(CLI, ['apps', 'create', '--name', 'chains', '--json'], { DATABASE_URL: fresh.url })
      await exitWithin(created, 20_000)
      appId = (JSON.parse(created.stdout()) as { id: string }).id
    }
    const addresses = await unassignedAddresses(appId, 24)
    await waitUntil('a lease holder', () => holderPid(), 10_000)
    expect([first.pid, second.pid]).toContain(await holderPid())

    const takeovers: number[] = []
    const sent: string[] = []
    for (let round = 0; round < 4; round++) {
      for (const [index, address] of addresses.entries()) {
        if (index % 2 === round % 2) sent.push((await mint(anvil, token, address, BigInt(1_000 + round * 100 + index))).transactionHash.toLowerCase())
      }
      await anvil.mine(1)
      // The watcher is killed at a random moment of its reading and crediting.
      await sleep(Math.floor(Math.random() * 250))
      const pid = await holderPid()
      const victim = [...servers.values()].find((server) => server.pid === pid)
      if (victim === undefined) throw new Error(`no server holds the lease (holder pid ${String(pid)})`)
      const killedAt = Date.now()
      await kill9(victim)
      servers.delete(victim.name)
      const survivor = [...servers.values()][0] as Instance
      await waitUntil('the survivor to take the lease', async () => ((await holderPid()) === survivor.pid ? true : undefined), 15_000, 50)
      takeovers.push(Date.now() - killedAt)
      await start(victim.name)
    }
    await anvil.mine(3)
    await waitUntil(
      'every deposit held',
      async () => {
        const rows = await fresh.query<{ n: string }>(`select count(*) as n from chain_deposits where status = 'held'`)
        return Number(rows[0]?.n) === sent.length ? true : undefined
      },
      30_000,
      100,
    )
    const deposits = await fresh.query<{ tx_hash: string; status: string; id: string }>(`select tx_hash, status, id from chain_deposits`)
    expect(deposits.map((row) => row.tx_hash).sort()).toEqual([...sent].sort())
    const entries = await fresh.query<{ reason_id: string }>(`select reason_id from ledger_entries where reason_type = 'deposit'`)
    expect(entries.map((row) => row.reason_id).sort()).toEqual(deposits.map((row) => row.id).sort())
    const verify = launch(CLI, ['ledger', 'verify', '--environment', 'live'], { DATABASE_URL: fresh.url })
    expect((await exitWithin(verify, 20_000)).code).toBe(0)
    expect(verify.stdout()).toBe('live: ok\n')
    // The lease runs out 6 s after its last renewal; the survivor checks every 1.5 s.
    for (const ms of takeovers) expect(ms).toBeLessThan(9_000)
    process.stdout.write(`chain watcher takeovers after kill -9: ${takeovers.join(', ')} ms\n`)
  }, 180_000)
})
