import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseChainsConfig } from '../../src/chains/config.js'
import { type ChainStatus, readChainsStatus } from '../../src/chains/status.js'
import { startTestServer, type TestServer } from '../helper.js'
import { parseExposition, sampleOf } from '../metrics/exposition.js'
import { CLI, cleanUp, launch, tempDir } from '../processes.js'
import { testXpub } from '../helpers/receiving-key.js'

/**
 * `devplatform chains status` and the chains' /metrics series read what the watchers stored (any
 * instance's): rows are written here as a watcher writes them, read by the built CLI and at scrape.
 */

let server: TestServer
let metricsUrl: string
let dir: string

beforeAll(async () => {
  server = await startTestServer({ config: { metricsPort: 0 } })
  const address = server.app.metricsAddress?.()
  metricsUrl = `http://127.0.0.1:${address?.port ?? 0}/metrics`
  dir = tempDir('chains-status-')
})

afterAll(async () => {
  await server?.close()
  cleanUp()
})

/** A CHAINS_FILE naming `chains` with their poll intervals. */
function chainsFile(chains: Record<string, number>): string {
  const file = join(dir, `${randomUUID()}.json`)
  const entries = Object.entries(chains).map(([chain, pollIntervalMs]) => [
    chain,
    { chainId: 1, rpcUrls: ['http://127.0.0.1:1'], tokens: { usdc: '0x0000000000000000000000000000000000000001' }, confirmations: 3, pollIntervalMs },
  ])
  writeFileSync(file, JSON.stringify({ receivingXpub: testXpub(), chains: Object.fromEntries(entries) }))
  return file
}

async function chainsStatus(vars: Record<string, string> = {}): Promise<{ code: number | null; chains: ChainStatus[]; text: string }> {
  const json = launch(CLI, ['chains', 'status', '--json'], { DATABASE_URL: server.database.url, ...vars })
  const exit = await json.exited
  const text = launch(CLI, ['chains', 'status'], { DATABASE_URL: server.database.url, ...vars })
  expect((await text.exited).code, text.stderr()).toBe(exit.code)
  return { code: exit.code, chains: JSON.parse(json.stdout()) as ChainStatus[], text: text.stdout() }
}

function secondsAgo(seconds: number): string {
  return new Date(Date.now() - seconds * 1000).toISOString()
}

async function setCursor(chain: string, headSeenAt: string): Promise<void> {
  await server.app.db.deleteFrom('chain_cursors').where('chain', '=', chain).execute()
  await server.app.db
    .insertInto('chain_cursors')
    .values({ chain, next_block: 101, head_block: 110, head_seen_at: headSeenAt, last_error: 'eth_blockNumber: connection refused', last_error_at: '2026-01-02T03:04:05.000Z', updated_at: headSeenAt })
    .execute()
}

async function addDeposit(chain: string, status: string): Promise<void> {
  const now = new Date().toISOString()
  await server.app.db
    .insertInto('chain_deposits')
    .values({
      id: randomUUID(), chain, tx_hash: `0x${randomUUID().replaceAll('-', '')}`, log_index: 0, block_number: 100, block_hash: '0xb', token: '0xt', currency: 'usdc',
      from_address: '0xf', to_address: '0xa', amount: '1000000', environment: 'live', app_id: 'app', owner_type: 'wallet', owner_id: 'w', status,
      confirmations: 1, reason: null, credited_type: null, credited_id: null, created_at: now, updated_at: now,
    })
    .execute()
}

async function addAddress(chain: string, index: number): Promise<void> {
  await server.app.db
    .insertInto('chain_addresses')
    .values({ address: `0x${index.toString(16).padStart(40, '0')}`, derivation_index: index, chain, environment: 'live', app_id: 'app', owner_type: 'wallet', owner_id: 'w', currency: null, created_at: new Date().toISOString() })
    .execute()
}

describe('devplatform chains status', () => {
  it('says there is no chain, exit 0, when CHAINS_FILE names none and nothing was read', async () => {
    const { code, chains, text } = await chainsStatus()
    expect(code).toBe(0)
    expect(chains).toEqual([])
    expect(text).toContain('no chain')
  })

  it("shows a chain's head, cursor, lag, last error, lease, deposits by status and addresses from the database, exit 0 when nothing needs an operator", async () => {
    await setCursor('base', secondsAgo(5))
    await server.app.db.insertInto('chain_leases').values({ name: 'watcher:base', holder: 'host-a:123:abcd', expires_at: '2030-01-01T00:00:00.000Z' }).execute()
    for (const status of ['pending', 'pending', 'confirmed', 'held']) await addDeposit('base', status)
    for (const index of [0, 1, 2]) await addAddress('base', index)
    const { code, chains, text } = await chainsStatus({ CHAINS_FILE: chainsFile({ base: 2_000 }) })
    expect(code).toBe(0)
    expect(chains).toHaveLength(1)
    expect(chains[0]).toMatchObject({
      chain: 'base', configured: true, head: 110, cursor: 101, lag: 10,
      lastError: 'eth_blockNumber: connection refused', lastErrorAt: '2026-01-02T03:04:05.000Z',
      leaseHolder: 'host-a:123:abcd', leaseExpiresAt: '2030-01-01T00:00:00.000Z',
      deposits: { pending: 2, confirmed: 1, held: 1, removed: 0, reorged: 0, reversed: 0 },
      watchedAddresses: 3, alerts: [],
    })
    expect(text).toContain('base: ok')
    expect(text).toContain('head 110, cursor 101, lag 10 blocks')
  })

  it('alerts for a head unseen longer than max(10 × pollIntervalMs, 60 s), and for a configured chain never read', async () => {
    const config = (polls: Record<string, number>) => parseChainsConfig(readFileSync(chainsFile(polls), 'utf8'), 'CHAINS_FILE')
    const now = Date.now()
    const alertsAt = async (seenSecondsAgo: number, polls: Record<string, number>) => {
      await setCursor('base', new Date(now - seenSecondsAgo * 1000).toISOString())
      return (await readChainsStatus(server.app.db, config(polls), now)).find((chain) => chain.chain === 'base')?.alerts
    }
    expect(await alertsAt(60, { base: 2_000 })).toEqual([])
    expect(await alertsAt(61, { base: 2_000 })).toEqual(['head not seen for 61 s (more than 60 s)'])
    // Ten polls of 10 s: 100 s.
    expect(await alertsAt(100, { base: 10_000 })).toEqual([])
    expect(await alertsAt(101, { base: 10_000 })).toHaveLength(1)
    // A chain no longer in CHAINS_FILE is not watched: an old head is no alert.
    expect((await readChainsStatus(server.app.db, undefined, now))[0]).toMatchObject({ chain: 'base', configured: false, alerts: [] })
    const never = (await readChainsStatus(server.app.db, config({ polygon: 2_000 }), now)).find((chain) => chain.chain === 'polygon')
    expect(never).toMatchObject({ configured: true, head: null, cursor: null, lag: null, leaseHolder: null })
    expect(never?.alerts.join()).toContain('head never seen')
    await setCursor('base', secondsAgo(5))
  })

  it('exits 1 while a chain has a reversed deposit, and /metrics shows the chain with its reversed-deposits gauge', async () => {
    await addDeposit('base', 'reversed')
    const { code, chains, text } = await chainsStatus()
    expect(code).toBe(1)
    expect(text).toContain('base (not in CHAINS_FILE: not watched): ALERT')
    expect(chains[0]?.alerts.join()).toContain('1 reversed deposit(s)')
    const samples = parseExposition(await (await fetch(metricsUrl)).text())
    const base = { chain: 'base' }
    expect(sampleOf(samples, 'devplatform_chain_head_block', base)?.value).toBe(110)
    expect(sampleOf(samples, 'devplatform_chain_cursor_block', base)?.value).toBe(101)
    expect(sampleOf(samples, 'devplatform_chain_lag_blocks', base)?.value).toBe(10)
    expect(sampleOf(samples, 'devplatform_chain_head_age_seconds', base)?.value).toBeGreaterThanOrEqual(4)
    expect(sampleOf(samples, 'devplatform_chain_last_error_timestamp_seconds', base)?.value).toBe(Date.parse('2026-01-02T03:04:05.000Z') / 1000)
    expect(sampleOf(samples, 'devplatform_chain_reversed_deposits', base)?.value).toBe(1)
    expect(sampleOf(samples, 'devplatform_chain_deposits', { chain: 'base', status: 'pending' })?.value).toBe(2)
    expect(sampleOf(samples, 'devplatform_chain_deposits', { chain: 'base', status: 'removed' })?.value).toBe(0)
    expect(sampleOf(samples, 'devplatform_chain_watched_addresses', base)?.value).toBe(3)
    expect(sampleOf(samples, 'devplatform_chain_alert', base)?.value).toBe(1)
  })
})
