import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Address } from 'viem'
import type { ChainConfig } from '../../src/chains/config.js'
import { Receiving } from '../../src/chains/receiving.js'
import { ChainsRepository, type ChainDepositRow } from '../../src/chains/repository.js'
import { ChainWatcher } from '../../src/chains/watcher.js'
import type { SignalSink } from '../../src/db/unit-of-work.js'
import { DomainHooks } from '../../src/events/hooks.js'
import { type Transact, transactOn } from '../../src/events/transact.js'
import { verifyLedger } from '../../src/ledger/ledger.js'
import { ExchangeRates } from '../../src/ledger/rates.js'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { deployToken, mint, transfer, transferRequest } from '../helpers/test-token.js'
import { startTestServer, type TestServer } from '../helper.js'
import { freePort } from '../helpers/private-postgres.js'
import { testXpub } from '../helpers/receiving-key.js'

/**
 * The watcher against a real anvil and a real ERC-20: deposits recorded once, counted, credited
 * after their confirmations through the domain event, held when nothing takes them, and reorgs
 * before and after the confirmations. The owner here is a test subscriber, so this file is about
 * the chains module alone (the resources' crediting has its own tests).
 */

const noSignals: SignalSink = { signalStatements: () => undefined, committed: () => undefined }
const money = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 0, achDelayMs: 0 }, now: Date.now }

let server: TestServer
let anvil: Anvil
let token: Address
let config: ChainConfig
let transact: Transact
let watcher: ChainWatcher
let appId: string
/** What the test subscriber refuses: deposits of these amounts (a domain error, as an owner's rule would). */
const credited: string[] = []

async function waitFor<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; watcher: ${JSON.stringify(watcher.status())}; log: ${server.logs().split('\n').filter((line) => line.includes('chain')).slice(-5).join('\n')}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

function depositOf(txHash: string, status?: string): Promise<ChainDepositRow | undefined> {
  return new ChainsRepository(server.app.db)
    .depositsFrom('base', 0, ['pending', 'confirmed', 'held', 'removed', 'reorged', 'reversed'])
    .then((rows) => rows.find((row) => row.tx_hash === txHash.toLowerCase() && (status === undefined || row.status === status)))
}

async function allocate(ownerType: 'wallet' | 'unassigned'): Promise<Address> {
  const receiving = new Receiving({ file: 'test', receivingXpub: testXpub(), chains: [config] })
  return (await transact((tx) => receiving.allocate(tx.db, 'base', { appId, ownerType, ownerId: ownerType === 'unassigned' ? null : 'wallet-1', currency: 'usdc' }, Date.now()))) as Address
}

beforeAll(async () => {
  server = await startTestServer()
  appId = (await server.createKey({ environment: 'production' })).appId
  anvil = await startAnvil()
  token = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
  config = { chain: 'base', chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: token.toLowerCase() }, confirmations: 3, pollIntervalMs: 50, maxBlockRange: 100, startBlock: 0, rpcTimeoutMs: 2_000 }
  const hooks = new DomainHooks(
    [
      {
        'chain.deposit_confirmed': async (_tx, event) => {
          if (event.ownerType !== 'wallet') return
          credited.push(event.depositId)
          event.credited = { type: 'wallet', id: event.ownerId }
        },
      },
    ],
    { publicUrl: () => server.baseUrl, money },
  )
  transact = transactOn(server.app.db, noSignals, hooks)
  watcher = new ChainWatcher(config, { db: server.app.db, transact, log: server.app.log })
  await watcher.start()
}, 60_000)

afterAll(async () => {
  await watcher?.stop()
  await anvil?.close()
  await server?.close()
})

describe('the chain watcher on a real anvil', () => {
  it('records a transfer to a receiving address as pending, counts its confirmations, and credits it once after the configured number', async () => {
    const to = await allocate('wallet')
    const receipt = await mint(anvil, token, to, 12_345_678n)
    const pending = await waitFor('the pending deposit', () => depositOf(receipt.transactionHash, 'pending'))
    expect(pending).toMatchObject({ amount: '12345678', currency: 'usdc', to_address: to.toLowerCase(), owner_type: 'wallet', owner_id: 'wallet-1', confirmations: 1 })
    await anvil.mine(1)
    await waitFor('2 confirmations', async () => ((await depositOf(receipt.transactionHash))?.confirmations === 2 ? true : undefined))
    expect(credited).not.toContain(pending.id)
    await anvil.mine(1)
    const confirmed = await waitFor('the confirmed deposit', () => depositOf(receipt.transactionHash, 'confirmed'))
    expect(confirmed).toMatchObject({ credited_type: 'wallet', credited_id: 'wallet-1', confirmations: 3 })
    await anvil.mine(5)
    await waitFor('the cursor past the head', async () => ((await new ChainsRepository(server.app.db).cursor('base'))?.next_block ?? 0) > Number(receipt.blockNumber) + 5 ? true : undefined)
    expect(credited.filter((id) => id === pending.id)).toHaveLength(1)
    const events = await server.app.db.selectFrom('events').select(['type']).where('app_id', '=', appId).execute()
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['deposit.pending', 'deposit.confirmed']))
  })

  it('holds a confirmed deposit that nothing credits (an address not given to anyone yet), posted to a clearing account of its own', async () => {
    const to = await allocate('unassigned')
    const receipt = await mint(anvil, token, to, 5_000_000n)
    await anvil.mine(3)
    const held = await waitFor('the held deposit', () => depositOf(receipt.transactionHash, 'held'))
    expect(held.reason).toMatch(/not given to a liquidation address/)
    const account = await server.app.db.selectFrom('ledger_accounts').selectAll().where('reference', '=', `deposit:${held.id}`).executeTakeFirstOrThrow()
    expect(account).toMatchObject({ kind: 'clearing', currency: 'usdc', credits_posted: '5000000', available: '5000000' })
    expect(await verifyLedger(server.app.db, 'live')).toBeUndefined()
  })

  it('removes a pending deposit whose block a reorg takes away, and counts it again when the transfer is mined in the new chain', async () => {
    const to = await allocate('wallet')
    const payer = anvil.accounts[1]
    if (payer === undefined) throw new Error('no account')
    await mint(anvil, token, payer.address, 1_000_000n)
    const receipt = await transfer(anvil, token, payer, to, 250_000n)
    await waitFor('the pending deposit', () => depositOf(receipt.transactionHash, 'pending'))
    await anvil.reorg(1)
    const removed = await waitFor('the removed deposit', () => depositOf(receipt.transactionHash, 'removed'))
    expect(removed.reason).toMatch(/reorg/)
    await anvil.reorg(1, [{ transaction: transferRequest(token, payer.address, to, 250_000n), block: 0 }])
    const block = await anvil.publicClient.getBlockNumber()
    await anvil.mine(3)
    const confirmed = await waitFor('the deposit confirmed in the new chain', async () => {
      const rows = await new ChainsRepository(server.app.db).depositsFrom('base', 0, ['confirmed'])
      return rows.find((row) => row.to_address === to.toLowerCase())
    })
    expect(confirmed.block_number).toBe(Number(block))
    expect(confirmed.amount).toBe('250000')
  })

  it('reverses a credited deposit that a reorg deeper than the confirmations takes away, with an alert, leaving the ledger as it was', async () => {
    const to = await allocate('wallet')
    const receipt = await mint(anvil, token, to, 777n)
    await anvil.mine(3)
    const confirmed = await waitFor('the confirmed deposit', () => depositOf(receipt.transactionHash, 'confirmed'))
    await anvil.reorg(6)
    const reversed = await waitFor('the reversed deposit', () => depositOf(receipt.transactionHash, 'reversed'))
    expect(reversed.id).toBe(confirmed.id)
    expect(reversed.reason).toMatch(/deeper than 3 confirmations, after it was credited/)
    await waitFor('the alert', async () => (server.logs().includes('ALERT a credited deposit left the chain') ? true : undefined))
    expect(watcher.status().reversed).toBeGreaterThanOrEqual(1)
  })

  it('keeps the API answering while the node is stopped, records the fault, and catches up once the node is back', async () => {
    const to = await allocate('wallet')
    const before = await mint(anvil, token, to, 1_000n)
    await anvil.mine(3)
    await waitFor('the deposit before the stop', () => depositOf(before.transactionHash, 'confirmed'))
    await anvil.stop()
    const fault = await waitFor('the fault recorded', async () => (await new ChainsRepository(server.app.db).cursor('base'))?.last_error ?? undefined)
    expect(fault).toMatch(/base: no RPC URL answered/)
    const started = Date.now()
    const health = await server.request('GET', '/api/v0/health/public')
    expect(health.status).toBe(200)
    expect(Date.now() - started).toBeLessThan(1_000)
    await anvil.restart()
    const after = await mint(anvil, token, to, 2_000n)
    await anvil.mine(3)
    const confirmed = await waitFor('the deposit after the restart', () => depositOf(after.transactionHash, 'confirmed'), 45_000)
    expect(confirmed.amount).toBe('2000')
  }, 60_000)

  it('moves to the next RPC URL when one refuses connections or answers errors, and reads the chain from the one that answers', async () => {
    const erroring = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'header not found' } }))
    })
    await new Promise<void>((resolve) => erroring.listen(0, '127.0.0.1', resolve))
    const port = (erroring.address() as AddressInfo).port
    const refusing = await freePort()
    const other: ChainConfig = { ...config, chain: 'ethereum', rpcUrls: [`http://127.0.0.1:${refusing}`, `http://127.0.0.1:${port}`, anvil.url] }
    const second = new ChainWatcher(other, { db: server.app.db, transact, log: server.app.log })
    try {
      await second.start()
      const receiving = new Receiving({ file: 'test', receivingXpub: testXpub(), chains: [other] })
      const to = (await transact((tx) => receiving.allocate(tx.db, 'ethereum', { appId, ownerType: 'wallet', ownerId: 'wallet-2', currency: 'usdc' }, Date.now()))) as Address
      const receipt = await mint(anvil, token, to, 31n)
      await anvil.mine(3)
      const confirmed = await waitFor('the deposit read through the third URL', async () => {
        const rows = await new ChainsRepository(server.app.db).depositsFrom('ethereum', 0, ['confirmed'])
        return rows.find((row) => row.tx_hash === receipt.transactionHash.toLowerCase())
      })
      expect(confirmed.owner_id).toBe('wallet-2')
    } finally {
      await second.stop()
      erroring.close()
    }
  })

  it('moves on from a node whose head does not move (it lags) to one that answers with the chain', async () => {
    // A node that answers every call as the chain does, but for a head frozen where it was.
    const frozenHead = await anvil.publicClient.getBlockNumber()
    const lagging = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk: Buffer) => (body += chunk.toString()))
      request.on('end', () => {
        const call = JSON.parse(body) as { id: number; method: string }
        if (call.method === 'eth_blockNumber') {
          response.writeHead(200, { 'content-type': 'application/json' })
          response.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: `0x${frozenHead.toString(16)}` }))
          return
        }
        fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
          .then(async (answer) => {
            response.writeHead(answer.status, { 'content-type': 'application/json' })
            response.end(await answer.text())
          })
          .catch(() => response.destroy())
      })
    })
    await new Promise<void>((resolve) => lagging.listen(0, '127.0.0.1', resolve))
    const other: ChainConfig = { ...config, chain: 'optimism', rpcUrls: [`http://127.0.0.1:${(lagging.address() as AddressInfo).port}`, anvil.url], maxHeadAgeMs: 300, startBlock: Number(frozenHead) }
    const third = new ChainWatcher(other, { db: server.app.db, transact, log: server.app.log })
    try {
      await third.start()
      const receiving = new Receiving({ file: 'test', receivingXpub: testXpub(), chains: [other] })
      const to = (await transact((tx) => receiving.allocate(tx.db, 'optimism', { appId, ownerType: 'wallet', ownerId: 'wallet-3', currency: 'usdc' }, Date.now()))) as Address
      const receipt = await mint(anvil, token, to, 32n)
      await anvil.mine(3)
      const confirmed = await waitFor('the deposit read from the node that keeps up', async () => {
        const rows = await new ChainsRepository(server.app.db).depositsFrom('optimism', 0, ['confirmed'])
        return rows.find((row) => row.tx_hash === receipt.transactionHash.toLowerCase())
      })
      expect(confirmed.owner_id).toBe('wallet-3')
      expect(third.status().lastError?.message).toMatch(/head stuck at block/)
    } finally {
      await third.stop()
      lagging.close()
    }
  })
})
