/**
 * bench:chains (issue 41, "Speed and scale"): the chain watcher against a real anvil and a real
 * ERC-20 (the tests' TestStablecoin), on a fresh database per run (SQLite file, or a PostgreSQL
 * database made and dropped on DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test).
 * The watcher runs alone in a child process (bench/chains-watcher.ts), so its CPU time and memory
 * are its own; this process makes the blocks. Receiving addresses are inserted straight into
 * chain_addresses with made-up derivation indexes (derivation is timed apart). Many Transfer logs
 * per transaction come from bench/BatchMinter.sol (solc-js), calling the token's open mint in a loop.
 *
 *   throughput  `--blocks` blocks of `--per-block` transfers to `--addresses` receiving addresses,
 *               mined back to back (automine off, evm_mine); deposits credited per second from the
 *               first block's mining to the last deposit confirmed; confirmations 1 and 2.
 *   delay       one transfer at a time to a receiving address, mined at a random moment; the time from
 *               the confirming block's evm_mine call to the deposit's updated_at (its crediting);
 *               `--samples` each with pollIntervalMs 500 and 2000, confirmations 1.
 *   scale       anvil at a 2 s block time, each block 1,000 transfers (990 to strangers, 10 to
 *               receiving addresses; none of ours with 0 watched), for `--seconds`, with 0, 10,000 and
 *               100,000 watched addresses: the lag (head − last block read) over time, the watcher's CPU
 *               time and eth_getLogs time per block, its heap and RSS. Also: deriving 10,000 addresses.
 *
 *   npm run bench:chains [-- --only throughput,delay,scale --backends sqlite,postgres --blocks 20 --per-block 100
 *                         --addresses 100 --samples 20 --seconds 60 --watched 0,10000,100000 --cpu-prof DIR]
 */
import { type ChildProcess, fork } from 'node:child_process'
import { pbkdf2Sync, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import solc from 'solc'
import { type Abi, type Address, type Hash, type Hex, parseAbi } from 'viem'
import { HDKey } from 'viem/accounts'
import type { ChainConfig } from '../src/chains/config.js'
import { ReceivingKey } from '../src/chains/derivation.js'
import { parseDatabaseUrl } from '../src/config.js'
import type { Db } from '../src/db/database.js'
import { openDatabase } from '../src/modules/database.js'
import { AppsRepository } from '../src/apps/repository.js'
import { freshDatabase } from '../test/backend.js'
import { type Anvil, startAnvil } from '../test/helpers/anvil.js'
import { deployToken } from '../test/helpers/test-token.js'
import type { WatcherSample } from './chains-watcher.js'

const GROUPS = ['throughput', 'delay', 'scale'] as const
type Backend = 'sqlite' | 'postgres'

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: GROUPS.join(',') },
    backends: { type: 'string', default: 'sqlite,postgres' },
    blocks: { type: 'string', default: '20' },
    'per-block': { type: 'string', default: '100' },
    addresses: { type: 'string', default: '100' },
    samples: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '60' },
    watched: { type: 'string', default: '0,10000,100000' },
    'scale-backends': { type: 'string', default: 'sqlite' },
    'cpu-prof': { type: 'string' },
  },
})
const only = new Set(values.only.split(','))
const backends = values.backends.split(',') as Backend[]
const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const MINTER_ABI = parseAbi(['function mintEach(address token, address[] recipients, uint256 amount)'])

interface CompilerOutput {
  errors?: { severity: string; formattedMessage: string }[]
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
}

function compileMinter(): Hex {
  const source = readFileSync(new URL('BatchMinter.sol', import.meta.url), 'utf8')
  const input = { language: 'Solidity', sources: { 'BatchMinter.sol': { content: source } }, settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['evm.bytecode.object'] } } } }
  const compile: (input: string) => string = solc.compile
  const output = JSON.parse(compile(JSON.stringify(input))) as CompilerOutput
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error')
  if (errors.length > 0) throw new Error(errors.map((error) => error.formattedMessage).join('\n'))
  const object = output.contracts?.['BatchMinter.sol']?.BatchMinter?.evm.bytecode.object
  if (object === undefined) throw new Error('solc produced no BatchMinter')
  return `0x${object}`
}
const minterBytecode = compileMinter()

function randomAddress(): Address {
  return `0x${randomBytes(20).toString('hex')}`
}

interface Chain {
  anvil: Anvil
  token: Address
  minter: Address
}

async function startChain(blockTime: number | undefined): Promise<Chain> {
  const anvil = await startAnvil({ blockTime, accounts: 5 })
  const token = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
  const account = anvil.accounts[0]
  if (account === undefined) throw new Error('anvil has no accounts')
  const hash = await anvil.walletClient.deployContract({ account, abi: [], bytecode: minterBytecode })
  const receipt = await anvil.publicClient.waitForTransactionReceipt({ hash, timeout: 30_000 })
  if (receipt.contractAddress === null || receipt.contractAddress === undefined) throw new Error('the minter was not deployed')
  return { anvil, token, minter: receipt.contractAddress }
}

/** Sends one transaction minting 1 unit to each recipient, from account `from`; resolves once the node has it in its pool. */
function sendMints(chain: Chain, from: number, recipients: readonly Address[]): Promise<Hash> {
  const account = chain.anvil.accounts[from]
  if (account === undefined) throw new Error(`no account ${from}`)
  return chain.anvil.walletClient.writeContract({ account, address: chain.minter, abi: MINTER_ABI, functionName: 'mintEach', args: [chain.token, [...recipients], 1_000_000n], gas: 7_000_000n })
}

interface Seeded {
  db: Db
  url: string
  drop(): Promise<void>
  addresses: Address[]
}

/** A fresh database with one application and `count` receiving addresses (owner: a wallet) on chain `base`. */
async function seed(backend: Backend, count: number): Promise<Seeded> {
  const fresh = await freshDatabase(backend)
  const db = await openDatabase(parseDatabaseUrl(fresh.url))
  const app = await new AppsRepository(db).createApp('bench-chains')
  const addresses = Array.from({ length: count }, () => randomAddress())
  const createdAt = new Date().toISOString()
  for (let start = 0; start < count; start += 1_000) {
    const rows = addresses.slice(start, start + 1_000).map((address, i) => ({
      address,
      derivation_index: start + i,
      chain: 'base',
      environment: 'live',
      app_id: app.id,
      owner_type: 'wallet',
      owner_id: 'wallet-1',
      currency: 'usdc',
      created_at: createdAt,
    }))
    await db.insertInto('chain_addresses').values(rows).execute()
  }
  return {
    db,
    url: fresh.url,
    addresses,
    async drop() {
      await db.destroy()
      await fresh.drop()
    },
  }
}

interface WatcherProcess {
  child: ChildProcess
  samples: WatcherSample[]
  stop(): Promise<WatcherSample>
}

function startWatcher(url: string, config: ChainConfig, sampleMs: number, profileName?: string): Promise<WatcherProcess> {
  const execArgv = ['--import', 'tsx', '--expose-gc']
  if (values['cpu-prof'] !== undefined && profileName !== undefined) execArgv.push('--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`, `--cpu-prof-name=${profileName}.cpuprofile`)
  const child = fork(fileURLToPath(new URL('chains-watcher.ts', import.meta.url)), [url, JSON.stringify(config), String(sampleMs)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv })
  const samples: WatcherSample[] = []
  let stopped: ((sample: WatcherSample) => void) | undefined
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`the watcher process exited (${code})`)))
    child.on('message', (message: { started?: WatcherSample; sample?: WatcherSample; stopped?: WatcherSample }) => {
      if (message.sample !== undefined) samples.push(message.sample)
      if (message.stopped !== undefined) stopped?.(message.stopped)
      if (message.started !== undefined)
        resolve({
          child,
          samples,
          stop: () =>
            new Promise<WatcherSample>((done) => {
              child.removeAllListeners('exit')
              stopped = done
              child.send('stop')
            }),
        })
    })
  })
}

function chainConfig(chain: Chain, startBlock: number, confirmations: number, pollIntervalMs: number): ChainConfig {
  return { chain: 'base', chainId: chain.anvil.chainId, rpcUrls: [chain.anvil.url], tokens: { usdc: chain.token.toLowerCase() }, confirmations, pollIntervalMs, maxBlockRange: 100, startBlock, rpcTimeoutMs: 5_000 }
}

async function confirmedCount(db: Db): Promise<number> {
  const row = await db.selectFrom('chain_deposits').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'confirmed').executeTakeFirstOrThrow()
  return Number(row.n)
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(everyMs)
  }
}

const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0)

async function throughput(backend: Backend, confirmations: number): Promise<string> {
  const blocks = Number(values.blocks)
  const perBlock = Number(values['per-block'])
  const seeded = await seed(backend, Number(values.addresses))
  const chain = await startChain(undefined)
  try {
    await chain.anvil.testClient.setAutomine(false)
    const start = Number(await chain.anvil.publicClient.getBlockNumber()) + 1
    const watcher = await startWatcher(seeded.url, chainConfig(chain, start, confirmations, 100), 1_000, `throughput-${backend}-${confirmations}`)
    const total = blocks * perBlock
    let next = 0
    const firstMinedAt = Date.now()
    for (let b = 0; b < blocks; b++) {
      const recipients = Array.from({ length: perBlock }, () => seeded.addresses[next++ % seeded.addresses.length] as Address)
      await sendMints(chain, 0, recipients)
      await chain.anvil.mine(1)
    }
    await chain.anvil.mine(confirmations)
    const minedMs = Date.now() - firstMinedAt
    await waitUntil('every deposit confirmed', async () => (await confirmedCount(seeded.db)) >= total, 300_000)
    const last = await seeded.db.selectFrom('chain_deposits').select((eb) => eb.fn.max('updated_at').as('at')).executeTakeFirstOrThrow()
    const elapsedMs = Date.parse(String(last.at)) - firstMinedAt
    await watcher.stop()
    const line = `${backend.padEnd(9)} confirmations ${confirmations}: ${total} deposits in ${(elapsedMs / 1000).toFixed(1)} s = ${((total * 1000) / elapsedMs).toFixed(0)} credited/s (blocks mined in ${(minedMs / 1000).toFixed(1)} s)`
    log(line)
    return line
  } finally {
    await chain.anvil.close()
    await seeded.drop()
  }
}

async function delay(backend: Backend, pollIntervalMs: number): Promise<string> {
  const samples = Number(values.samples)
  const seeded = await seed(backend, 10)
  const chain = await startChain(undefined)
  try {
    await chain.anvil.testClient.setAutomine(false)
    const start = Number(await chain.anvil.publicClient.getBlockNumber()) + 1
    const watcher = await startWatcher(seeded.url, chainConfig(chain, start, 1, pollIntervalMs), 1_000)
    const delays: number[] = []
    for (let i = 0; i < samples; i++) {
      await sleep(Math.random() * pollIntervalMs)
      const hash = await sendMints(chain, 0, [seeded.addresses[i % seeded.addresses.length] as Address])
      const minedAt = Date.now()
      await chain.anvil.mine(1)
      let credited: string | undefined
      await waitUntil(
        'the deposit confirmed',
        async () => {
          const row = await seeded.db.selectFrom('chain_deposits').select(['updated_at']).where('tx_hash', '=', hash.toLowerCase()).where('status', '=', 'confirmed').executeTakeFirst()
          credited = row?.updated_at
          return row !== undefined
        },
        30_000,
      )
      delays.push(Date.parse(String(credited)) - minedAt)
    }
    await watcher.stop()
    delays.sort((a, b) => a - b)
    const goal = pollIntervalMs + 1_000
    const max = delays.at(-1) ?? NaN
    const line = `${backend.padEnd(9)} poll ${String(pollIntervalMs).padStart(4)} ms: p50 ${quantile(delays, 0.5)} ms, p95 ${quantile(delays, 0.95)} ms, max ${max} ms over ${samples} (goal < ${goal} ms: ${max < goal ? 'met' : 'not met'})`
    log(line)
    return line
  } finally {
    await chain.anvil.close()
    await seeded.drop()
  }
}

function derivationCost(): string {
  const seed = pbkdf2Sync('legal winner thank year wave sausage worth useful legal winner thank yellow', 'mnemonic', 2048, 64, 'sha512')
  const key = new ReceivingKey(HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'").publicExtendedKey)
  const count = 10_000
  const started = performance.now()
  for (let i = 0; i < count; i++) key.addressAt(i)
  const ms = performance.now() - started
  return `deriving ${count} addresses: ${(ms / 1000).toFixed(1)} s, ${((ms * 1000) / count).toFixed(0)} µs per address`
}

async function scale(backend: Backend, watched: number): Promise<string> {
  const seconds = Number(values.seconds)
  const seeded = await seed(backend, watched)
  const chain = await startChain(2)
  try {
    const strangers = Array.from({ length: 990 }, () => randomAddress())
    // Strangers hold a balance before the run, so every block's mints cost the same gas.
    const warm = await Promise.all([0, 1, 2, 3].map((i) => sendMints(chain, i + 1, strangers.slice(i * 248, (i + 1) * 248))))
    for (const hash of warm) await chain.anvil.publicClient.waitForTransactionReceipt({ hash, timeout: 30_000 })
    const start = Number(await chain.anvil.publicClient.getBlockNumber()) + 1
    const watcher = await startWatcher(seeded.url, chainConfig(chain, start, 2, 1_000), 1_000, `scale-${backend}-${watched}`)
    const lags: { at: number; lag: number }[] = []
    let head = start - 1
    const startedAt = Date.now()
    let sent = 0
    let ours = 0
    while (Date.now() - startedAt < seconds * 1_000) {
      const now = Number(await chain.anvil.publicClient.getBlockNumber())
      if (now > head) {
        head = now
        const mine = watched === 0 ? [] : Array.from({ length: 10 }, () => seeded.addresses[Math.floor(Math.random() * watched)] as Address)
        const recipients = [...strangers.slice(0, 1_000 - mine.length), ...mine].sort(() => Math.random() - 0.5)
        await Promise.all([0, 1, 2, 3].map((i) => sendMints(chain, i + 1, recipients.slice(i * 250, (i + 1) * 250))))
        sent += recipients.length
        ours += mine.length
      }
      const sample = watcher.samples.at(-1)
      if (sample?.cursor !== undefined) lags.push({ at: Date.now() - startedAt, lag: head - (sample.cursor - 1) })
      await sleep(200)
    }
    const endHead = Number(await chain.anvil.publicClient.getBlockNumber())
    await sleep(6_000)
    const end = await watcher.stop()
    // The steady part: from 10 s in (addresses loaded, first blocks read) to the end of the run.
    const steady = watcher.samples.filter((sample) => sample.at - startedAt >= 10_000 && sample.at - startedAt <= seconds * 1_000)
    const first = steady[0]
    const last = steady.at(-1)
    if (first === undefined || last === undefined || first.cursor === undefined || last.cursor === undefined) throw new Error('too few samples')
    const blocksRead = last.cursor - first.cursor
    const half = (seconds * 1_000) / 2
    const maxLag = (from: number, to: number) => Math.max(...lags.filter((l) => l.at >= from && l.at < to).map((l) => l.lag))
    const credited = await confirmedCount(seeded.db)
    const maxHeap = Math.max(...watcher.samples.map((s) => s.heapUsed))
    const maxRss = Math.max(...watcher.samples.map((s) => s.rss))
    const line =
      `${backend.padEnd(9)} ${String(watched).padStart(6)} watched: ${endHead - start + 1} blocks, ${blocksRead > 0 ? ((last.logs - first.logs) / blocksRead).toFixed(0) : '-'} logs/block read; ` +
      `lag max ${maxLag(0, half)} blocks (first half) / ${maxLag(half, Infinity)} (second half), caught up at end: ${end.cursor !== undefined && end.cursor > endHead ? 'yes' : `no (cursor ${end.cursor}, head ${endHead})`}; ` +
      `CPU ${blocksRead > 0 ? ((last.cpuMs - first.cpuMs) / blocksRead).toFixed(0) : '-'} ms/block, eth_getLogs ${blocksRead > 0 ? ((last.getLogsMs - first.getLogsMs) / blocksRead).toFixed(0) : '-'} ms/block; ` +
      `heap ${mb(end.heapUsed)} MB after GC (max ${mb(maxHeap)}), RSS ${mb(end.rss)} MB (max ${mb(maxRss)}); ${credited}/${ours} of ours credited (${sent} transfers sent)`
    log(line)
    return line
  } finally {
    await chain.anvil.close()
    await seeded.drop()
  }
}

const results: string[] = []
if (only.has('throughput')) {
  results.push('deposits credited per second (throughput):')
  for (const backend of backends) for (const confirmations of [1, 2]) results.push(`  ${await throughput(backend, confirmations)}`)
}
if (only.has('delay')) {
  results.push('confirming block mined -> deposit credited (delay):')
  for (const backend of backends) for (const poll of [500, 2_000]) results.push(`  ${await delay(backend, poll)}`)
}
if (only.has('scale')) {
  results.push('scale (2 s blocks of 1,000 transfers, 10 ours):')
  results.push(`  ${derivationCost()}`)
  for (const backend of values['scale-backends'].split(',') as Backend[]) for (const watched of values.watched.split(',').map(Number)) results.push(`  ${await scale(backend, watched)}`)
}
process.stdout.write(`\nbench:chains\n${results.join('\n')}\n`)
process.exit(0)
