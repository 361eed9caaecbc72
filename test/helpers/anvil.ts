import { type ChildProcess, spawn } from 'node:child_process'
import { pbkdf2Sync } from 'node:crypto'
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import {
  type Chain,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  formatTransactionRequest,
  type Hex,
  type HttpTransport,
  hexToBytes,
  http,
  type PublicClient,
  type TestClient,
  type TransactionRequest,
  type WalletClient,
} from 'viem'
import { type HDAccount, HDKey, hdKeyToAccount } from 'viem/accounts'
import { freePort } from './private-postgres.js'

export interface AnvilOptions {
  /** What `eth_chainId` answers (default 31337, anvil's own). */
  chainId?: number
  /** Seconds between blocks (fractions allowed); absent, each transaction is mined at once in its own block (automine). */
  blockTime?: number
  /** How many funded accounts (default 10, 10,000 ETH each). */
  accounts?: number
}

/** A transaction for the new branch of a reorg, and which of its new blocks it goes into. */
export interface ReorgTransaction {
  /** A request anvil signs for one of its accounts (`from` required), or a signed raw transaction. */
  transaction: TransactionRequest | Hex
  /** 0 is the first new block (right after the common ancestor), up to depth - 1. */
  block: number
}

/** anvil's default mnemonic: its accounts are the well-known test accounts, funded at genesis. */
const MNEMONIC = 'test test test test test test test test test test test junk'

/** The anvil binary that `npm ci` installs with @foundry-rs/anvil (its platform package), run directly so signals reach it. */
function anvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch
  return createRequire(import.meta.url).resolve(`@foundry-rs/anvil-${process.platform}-${arch}/bin/anvil`)
}

/** The first `count` accounts of the mnemonic (m/44'/60'/0'/0/i), from one seed computed once. */
function testAccounts(count: number): HDAccount[] {
  // BIP-39's seed: PBKDF2-HMAC-SHA512 over the mnemonic, salt "mnemonic", 2,048 rounds.
  const root = HDKey.fromMasterSeed(pbkdf2Sync(MNEMONIC.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512'))
  return Array.from({ length: count }, (_, addressIndex) => hdKeyToAccount(root, { addressIndex }))
}

const running = new Set<ChildProcess>()
const stateDirs = new Set<string>()
// A test file that ends without close() (a failed hook, process.exit) still leaves no node behind.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true })
})

/**
 * A real anvil on 127.0.0.1, a process of the test's own. Start it with `startAnvil()` and end
 * it with `close()` in afterAll.
 *
 * - It runs under `setpriv --pdeathsig KILL`: the kernel kills it when the test process dies,
 *   even by SIGKILL, so no node outlives its test file.
 * - `stop()` (SIGTERM) lets anvil write its state (`--state`, blocks and receipts included);
 *   `kill()` saves the same state through `anvil_dumpState` first, as a real node's database
 *   survives its crash, then sends SIGKILL. `restart()` starts it again on the same port from
 *   that state: same blocks, same hashes, same logs.
 * - `reorg()` uses anvil's own `anvil_reorg`: the last `depth` blocks are replaced by `depth`
 *   new ones at the same heights with new hashes; the transactions of the removed blocks are
 *   dropped (not put back in the pool), and the ones given are mined in the new blocks.
 */
export class Anvil {
  readonly url: string
  readonly chain: Chain
  readonly publicClient: PublicClient<HttpTransport, Chain>
  readonly walletClient: WalletClient<HttpTransport, Chain>
  readonly testClient: TestClient<'anvil', HttpTransport, Chain>
  /** The funded accounts, local (they sign here: transactions, EIP-712 permits). */
  readonly accounts: readonly HDAccount[]
  private child: ChildProcess | undefined
  private stderr = ''

  private constructor(
    readonly port: number,
    readonly chainId: number,
    private readonly blockTime: number | undefined,
    private readonly accountCount: number,
    private readonly stateDir: string,
  ) {
    this.url = `http://127.0.0.1:${port}`
    this.chain = defineChain({
      id: chainId,
      name: 'anvil',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [this.url] } },
    })
    // No retries: a test sees what the node answers, and a node that is down fails at once. No cache:
    // viem would otherwise answer getBlockNumber from its last call, from before a mine or a revert.
    const transport = http(this.url, { retryCount: 0 })
    const settings = { chain: this.chain, transport, pollingInterval: 50, cacheTime: 0 }
    this.publicClient = createPublicClient(settings)
    this.walletClient = createWalletClient(settings)
    this.testClient = createTestClient({ ...settings, mode: 'anvil' })
    this.accounts = testAccounts(accountCount)
  }

  static async start(options: AnvilOptions = {}): Promise<Anvil> {
    const stateDir = mkdtempSync(join(tmpdir(), 'devplatform-anvil-'))
    stateDirs.add(stateDir)
    // Another process can take the free port before anvil binds it: a new port then.
    for (let attempt = 1; ; attempt++) {
      const anvil = new Anvil(await freePort(), options.chainId ?? 31337, options.blockTime, options.accounts ?? 10, stateDir)
      try {
        await anvil.launch()
        return anvil
      } catch (error) {
        if (attempt === 3 || !(error instanceof Error) || !error.message.includes('Address already in use')) {
          await anvil.close()
          throw error
        }
      }
    }
  }

  /** The running anvil's process id (a new one after restart()). */
  get pid(): number {
    const pid = this.child?.pid
    if (pid === undefined) throw new Error('anvil is not running')
    return pid
  }

  private get stateFile(): string {
    return join(this.stateDir, 'state.json')
  }

  private async launch(): Promise<void> {
    const args = ['--host', '127.0.0.1', '--port', String(this.port), '--chain-id', String(this.chainId), '--accounts', String(this.accountCount)]
    args.push('--mnemonic', MNEMONIC, '--state', this.stateFile, '--silent')
    if (this.blockTime !== undefined) args.push('--block-time', String(this.blockTime))
    const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', anvilBinary(), ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
    running.add(child)
    child.on('exit', () => running.delete(child))
    this.stderr = ''
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-4000)))
    const stderrRead = new Promise((resolve) => child.stderr?.once('close', resolve))
    this.child = child
    const deadline = Date.now() + 15_000
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        this.child = undefined
        await stderrRead
        throw new Error(`anvil exited at start (${child.exitCode ?? child.signalCode}): ${this.stderr}`)
      }
      const answer = await this.rpc('eth_chainId', []).catch(() => undefined)
      if (answer !== undefined) {
        if (answer !== `0x${this.chainId.toString(16)}`) throw new Error(`anvil answers chain id ${String(answer)}, not ${this.chainId}`)
        return
      }
      if (Date.now() > deadline) {
        child.kill('SIGKILL')
        throw new Error(`anvil did not answer eth_chainId within 15 s: ${this.stderr}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  /** One JSON-RPC call to the node; fails on an error answer. */
  async rpc(method: string, params: unknown[]): Promise<unknown> {
    const response = await fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(10_000),
    })
    const body = (await response.json()) as { result?: unknown; error?: { message: string } }
    if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`)
    return body.result
  }

  private async exit(signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
    const child = this.child
    if (child === undefined) return
    this.child = undefined
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.kill(signal)
    let timer: NodeJS.Timeout | undefined
    const late = await Promise.race([exited.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)))])
    clearTimeout(timer)
    if (late) {
      child.kill('SIGKILL')
      await exited
      throw new Error(`anvil did not exit within ${timeoutMs} ms of ${signal}: ${this.stderr}`)
    }
  }

  /** SIGTERM, and waits until anvil has written its state and exited. */
  async stop(): Promise<void> {
    await this.exit('SIGTERM', 20_000)
  }

  /** Saves the state (anvil_dumpState), then SIGKILL: connections cut with no goodbye. */
  async kill(): Promise<void> {
    const dump = await this.testClient.dumpState().catch((error: unknown) => error)
    if (typeof dump === 'string') {
      writeFileSync(`${this.stateFile}.new`, gunzipSync(hexToBytes(dump as Hex)))
      renameSync(`${this.stateFile}.new`, this.stateFile)
    }
    await this.exit('SIGKILL', 10_000)
    if (typeof dump !== 'string') throw new Error(`anvil killed without its state saved: ${dump instanceof Error ? dump.message : String(dump)}`)
  }

  /** Starts anvil again on the same port from the state stop() or kill() left. */
  async restart(): Promise<void> {
    if (this.child !== undefined) throw new Error('anvil is running: stop() or kill() it first')
    await this.launch()
  }

  /** Mines `blocks` blocks now (with whatever the pool holds). */
  async mine(blocks = 1): Promise<void> {
    await this.testClient.mine({ blocks })
  }

  /** evm_snapshot: an id revert() goes back to. */
  async snapshot(): Promise<Hex> {
    return this.testClient.snapshot()
  }

  /** evm_revert: the chain back to the snapshot (later blocks gone; the next blocks get new hashes). */
  async revert(id: Hex): Promise<void> {
    await this.testClient.revert({ id })
  }

  /** anvil_reorg: the last `depth` blocks replaced by as many new ones, with `transactions` in them. */
  async reorg(depth: number, transactions: ReorgTransaction[] = []): Promise<void> {
    const pairs = transactions.map(({ transaction, block }) => [typeof transaction === 'string' ? transaction : formatTransactionRequest(transaction), block])
    await this.rpc('anvil_reorg', [depth, pairs])
  }

  /** For afterAll: SIGKILL (nothing to save) and the state removed. Safe to call twice. */
  async close(): Promise<void> {
    await this.exit('SIGKILL', 10_000)
    rmSync(this.stateDir, { recursive: true, force: true })
    stateDirs.delete(this.stateDir)
  }
}

/** Starts a real anvil (see Anvil) and resolves once it answers eth_chainId. */
export function startAnvil(options: AnvilOptions = {}): Promise<Anvil> {
  return Anvil.start(options)
}
