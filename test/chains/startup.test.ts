// vitest: sqlite project only — start-up checks of the built server against a node: the database backend plays no part
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HDKey } from 'viem/accounts'
import { pbkdf2Sync } from 'node:crypto'
import type { Address } from 'viem'
import { ChainsConfigError, parseChainsConfig } from '../../src/chains/config.js'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { testXpub } from '../helpers/receiving-key.js'
import { startServerProcess } from '../helpers/server-process.js'
import { deployToken } from '../helpers/test-token.js'
import { CLI, cleanUp, exitWithin, freshDb, launch, SERVER, tempDir } from '../processes.js'

/**
 * What the built server does at start with CHAINS_FILE: a node of another chain, or a token whose
 * decimals are not the ledger's, stops it with one line on stderr and exit 1; a bad file is a
 * configuration error naming the file and the field; a good one starts and is watched.
 */

let anvil: Anvil
let token: Address
let dir: string

beforeAll(async () => {
  anvil = await startAnvil()
  token = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
  dir = tempDir('chains-startup-')
}, 60_000)

afterAll(async () => {
  await anvil?.close()
  cleanUp()
})

/** A chains document for base on the test's anvil, with `changes` to base's entry. */
function chainsDocument(changes: Record<string, unknown> = {}): Record<string, unknown> {
  return { receivingXpub: testXpub(), chains: { base: { chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: token }, confirmations: 2, pollIntervalMs: 100, ...changes } } }
}

function writeChainsFile(content: string): string {
  const file = join(dir, `chains-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(file, content)
  return file
}

/** Starts the built server with CHAINS_FILE holding `content`; resolves with its exit and stderr once it stops. */
async function refusedStart(content: string): Promise<{ code: number | null; stderr: string }> {
  const running = launch(SERVER, [], { PORT: '0', DATABASE_URL: freshDb('chains-startup-').url, LOG_LEVEL: 'warn', CHAINS_FILE: writeChainsFile(content) })
  const exit = await exitWithin(running, 20_000)
  return { code: exit.code, stderr: running.stderr() }
}

describe('a server with CHAINS_FILE, at start', () => {
  it('refuses a node that answers another chain id: one line on stderr, exit 1', async () => {
    const { code, stderr } = await refusedStart(JSON.stringify(chainsDocument({ chainId: 8453 })))
    expect(code).toBe(1)
    expect(stderr).toBe(`devplatform: failed to start: base: the RPC node answers chain id ${anvil.chainId}, the configuration says 8453\n`)
  })

  it('refuses a token contract whose decimals are not the ledger’s 6: one line on stderr, exit 1', async () => {
    // Code that answers 18 to any call: decimals() of an 18-decimal token.
    const eighteen = '0x00000000000000000000000000000000000e1800'
    await anvil.rpc('anvil_setCode', [eighteen, '0x601260005260206000f3'])
    const { code, stderr } = await refusedStart(JSON.stringify(chainsDocument({ tokens: { usdc: token, eurc: eighteen } })))
    expect(code).toBe(1)
    expect(stderr).toBe(`devplatform: failed to start: base: the eurc contract ${eighteen} has 18 decimals; the ledger holds eurc with 6\n`)
  })

  it('refuses a bad CHAINS_FILE as invalid configuration naming the file and the field, one line, exit 1', async () => {
    const seed = pbkdf2Sync('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about', 'mnemonic', 2048, 64, 'sha512')
    const xprv = HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'").privateExtendedKey
    const cases: [string, string][] = [
      ['{"chains": {', 'CHAINS_FILE is not valid JSON'],
      [JSON.stringify({ ...chainsDocument(), receivingXpub: xprv }), 'CHAINS_FILE.receivingXpub is an extended private key: give the public one (xpub…); receiving needs no private key'],
    ]
    for (const [content, message] of cases) {
      const { code, stderr } = await refusedStart(content)
      expect(code).toBe(1)
      expect(stderr).toBe(`devplatform: invalid configuration: ${message}\n`)
      expect(stderr).not.toContain(xprv)
    }
  })

  it('starts with a good file, watches the chain, and `chains status` shows its head with exit 0', async () => {
    const db = freshDb('chains-startup-')
    const chainsFile = writeChainsFile(JSON.stringify(chainsDocument()))
    const server = await startServerProcess({ DATABASE_URL: db.url, LOG_LEVEL: 'info', CHAINS_FILE: chainsFile })
    try {
      const head = Number(await anvil.publicClient.getBlockNumber())
      let status: { code: number | null; out: string } = { code: null, out: '' }
      const deadline = Date.now() + 15_000
      do {
        const cli = launch(CLI, ['chains', 'status', '--json'], { DATABASE_URL: db.url, CHAINS_FILE: chainsFile })
        status = { code: (await cli.exited).code, out: cli.stdout() }
      } while (status.code !== 0 && Date.now() < deadline)
      expect(status.code).toBe(0)
      const [base] = JSON.parse(status.out) as { chain: string; head: number; lag: number; leaseHolder: string }[]
      expect(base).toMatchObject({ chain: 'base', lag: 0 })
      expect(base?.head).toBeGreaterThanOrEqual(head)
      expect(base?.leaseHolder).toMatch(new RegExp(`:${server.pid}:`))
    } finally {
      server.child.kill('SIGTERM')
      await exitWithin(server, 10_000)
    }
  })
})

describe('CHAINS_FILE fields at their boundaries', () => {
  const parse = (changes: Record<string, unknown>) => () => parseChainsConfig(JSON.stringify(chainsDocument(changes)), 'CHAINS_FILE')

  it('takes confirmations from 1, a poll interval from 50 ms, one RPC URL, and gives the defaults', () => {
    const config = parseChainsConfig(JSON.stringify(chainsDocument({ confirmations: 1, pollIntervalMs: undefined })), 'CHAINS_FILE')
    expect(config.chains[0]).toMatchObject({ confirmations: 1, pollIntervalMs: 2_000, maxBlockRange: 500, rpcTimeoutMs: 5_000, startBlock: undefined })
    expect(parse({ pollIntervalMs: 50 })().chains[0]?.pollIntervalMs).toBe(50)
  })

  it('refuses each bad field, naming it', () => {
    const refusals: [Record<string, unknown>, string][] = [
      [{ confirmations: 0 }, 'CHAINS_FILE.chains.base.confirmations must be an integer from 1 to 10000'],
      [{ confirmations: 1.5 }, 'CHAINS_FILE.chains.base.confirmations must be an integer from 1 to 10000'],
      [{ pollIntervalMs: 49 }, 'CHAINS_FILE.chains.base.pollIntervalMs must be an integer from 50 to 600000'],
      [{ rpcUrls: [] }, 'CHAINS_FILE.chains.base.rpcUrls must be a list of 1 to 16 http(s) URLs'],
      [{ rpcUrls: ['ws://127.0.0.1:8545'] }, 'CHAINS_FILE.chains.base.rpcUrls[0] must be an http(s) URL'],
      [{ chainId: '8453' }, 'CHAINS_FILE.chains.base.chainId must be an integer from 1 to 9007199254740991'],
      [{ tokens: { usdt: token } }, 'CHAINS_FILE.chains.base.tokens has unknown field "usdt" (known: usdc, eurc)'],
      [{ tokens: { usdc: '0x1234' } }, 'CHAINS_FILE.chains.base.tokens.usdc must be a 0x-prefixed 20-byte hex address'],
      [{ confirmation: 3 }, 'CHAINS_FILE.chains.base has unknown field "confirmation"'],
    ]
    for (const [changes, message] of refusals) {
      expect(parse(changes)).toThrow(ChainsConfigError)
      expect(parse(changes)).toThrow(message)
    }
    expect(() => parseChainsConfig(JSON.stringify({ ...chainsDocument(), receivingXpub: 'xpub-not-a-key' }), 'CHAINS_FILE')).toThrow('CHAINS_FILE.receivingXpub is not a valid extended public key')
    expect(() => parseChainsConfig(JSON.stringify({ receivingXpub: testXpub(), chains: { solana: {} } }), 'CHAINS_FILE')).toThrow('CHAINS_FILE.chains.solana is not an EVM chain the platform knows')
  })
})
