import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { Db } from '../db/database.js'
import { isoOf } from '../db/time.js'
import type { Transact } from '../events/transact.js'
import { CURRENCY_DECIMALS } from '../ledger/amount.js'
import type { ChainConfig, ChainsConfig, ChainToken } from './config.js'
import { confirmDeposit, recordSeen, reverseMissing, takeAwayFrom } from './deposits.js'
import { type ChainBlockRow, ChainsRepository } from './repository.js'
import { type BlockHeader, ChainRpc, RpcUnavailable, type TransferLog } from './rpc.js'

/**
 * One watcher per configured chain, in every server and worker; one of them at a time reads the
 * chain (the lease `watcher:<chain>`, taken over once its holder stops renewing it). Each round:
 * the head; whether the newest block it stored is still the chain's (a reorg otherwise, found by
 * walking down its stored hashes); the token contracts' Transfer logs of the next bounded range of
 * blocks, matched against the receiving addresses in memory (a Set, so the cost of a log is the
 * same for ten addresses or a million), recorded with the range's block hashes and the cursor in
 * one transaction; then the pending deposits that have their confirmations are credited. A
 * process killed anywhere resumes from the cursor it committed, and a log read twice is one
 * deposit (unique per chain, transaction and log index).
 */

export interface WatcherLog {
  info(details: object, message: string): void
  warn(details: object, message: string): void
  error(details: object, message: string): void
}

/** How long a lease lasts without renewal: how soon another instance takes over a dead watcher. */
export const WATCHER_LEASE_MS = 6_000
/** How often a watcher that does not hold the lease, or waits for the next poll, renews or tries it. */
const LEASE_CHECK_MS = 1_500
/** The longest a faulting chain waits before it is tried again. */
const MAX_BACKOFF_MS = 30_000
/** Addresses loaded from the database per query. */
const ADDRESS_BATCH = 10_000
/** Deposits credited per round (the rest next round, at once). */
const CONFIRM_BATCH = 256

/** The recent blocks kept to see a reorg: twice the confirmations, at least 64. */
export function keptBlocks(config: ChainConfig): number {
  return Math.max(64, 2 * config.confirmations)
}

/** What `chains status` and /metrics show of a chain. */
export interface WatcherStatus {
  chain: string
  /** whether this process holds the chain's lease */
  watching: boolean
  head: number | undefined
  /** the first block not read yet */
  cursor: number | undefined
  addresses: number
  lastError: { message: string; at: string } | undefined
  reorgs: number
  reversed: number
}

export interface WatcherOptions {
  db: Db
  transact: Transact
  log: WatcherLog
  now?: () => number
  /** this process's name in the lease (default host:pid:random, so `chains status` says which process watches) */
  holder?: string
}

/** Refuses a node of another chain, and a token whose decimals are not the ledger's. */
export async function checkChain(config: ChainConfig, rpc: ChainRpc): Promise<void> {
  const chainId = await rpc.chainId()
  if (chainId !== config.chainId) throw new ChainMismatch(`${config.chain}: the RPC node answers chain id ${chainId}, the configuration says ${config.chainId}`)
  for (const [currency, token] of Object.entries(config.tokens)) {
    const decimals = await rpc.decimals(token)
    const ledger = CURRENCY_DECIMALS[currency as ChainToken]
    if (decimals !== ledger) throw new ChainMismatch(`${config.chain}: the ${currency} contract ${token} has ${decimals} decimals; the ledger holds ${currency} with ${ledger}`)
  }
}

/** A configuration that does not match the chain it points at: the server refuses to start. */
export class ChainMismatch extends Error {}

export class ChainWatcher {
  readonly rpc: ChainRpc
  private readonly now: () => number
  private readonly holder: string
  private readonly addresses = new Set<string>()
  private lastIndex = -1
  private checked = false
  private holding = false
  private stopped = true
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private nextPollAt = 0
  private backoffMs = 0
  private head: number | undefined
  private headMovedAt = 0
  private cursor: number | undefined
  private reorgs = 0
  private reversed = 0

  constructor(
    readonly config: ChainConfig,
    private readonly options: WatcherOptions,
  ) {
    this.rpc = new ChainRpc(config)
    this.now = options.now ?? Date.now
    this.holder = options.holder ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  }

  private get leaseName(): string {
    return `watcher:${this.config.chain}`
  }

  /** Checks the node and the tokens once they answer (refusing a mismatch), then watches. */
  async start(): Promise<void> {
    try {
      await checkChain(this.config, this.rpc)
      this.checked = true
    } catch (error) {
      if (error instanceof ChainMismatch) throw error
      this.options.log.warn({ chain: this.config.chain, err: error }, 'chain watcher: the RPC node does not answer yet; the chain id and decimals are checked before the first read')
    }
    this.stopped = false
    this.schedule(0)
  }

  /** Stops, lets the round under way finish, and gives the lease up so another instance takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running
    if (this.holding) await this.options.transact((tx) => new ChainsRepository(tx.db).releaseLease(this.leaseName, this.holder)).catch(() => undefined)
    this.holding = false
  }

  status(): WatcherStatus {
    const fault = this.rpc.lastFault
    return {
      chain: this.config.chain,
      watching: this.holding,
      head: this.head,
      cursor: this.cursor,
      addresses: this.addresses.size,
      lastError: fault === undefined ? undefined : { message: fault.message, at: isoOf(fault.at) },
      reorgs: this.reorgs,
      reversed: this.reversed,
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.running = this.round().then((more) => {
        this.running = undefined
        this.schedule(more ? 0 : Math.min(LEASE_CHECK_MS, Math.max(0, this.nextPollAt - this.now())))
      })
    }, delayMs)
    this.timer.unref()
  }

  /** One round; true when there is more to read at once. Never throws: a fault backs off. */
  private async round(): Promise<boolean> {
    try {
      const now = this.now()
      this.holding = await this.options.transact((tx) => new ChainsRepository(tx.db).takeLease(this.leaseName, this.holder, isoOf(now), isoOf(now + WATCHER_LEASE_MS)))
      if (!this.holding || now < this.nextPollAt) return false
      if (!this.checked) {
        await checkChain(this.config, this.rpc)
        this.checked = true
      }
      const more = await this.read()
      this.backoffMs = 0
      this.nextPollAt = more ? 0 : this.now() + this.config.pollIntervalMs
      return more
    } catch (error) {
      this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs === 0 ? this.config.pollIntervalMs : this.backoffMs * 2)
      this.nextPollAt = this.now() + this.backoffMs
      const message = error instanceof Error ? error.message : String(error)
      if (error instanceof ChainMismatch) this.options.log.error({ chain: this.config.chain }, `chain watcher: ${message}; not reading this chain`)
      else this.options.log.warn({ chain: this.config.chain, retryInMs: this.backoffMs, err: error instanceof RpcUnavailable ? undefined : error }, `chain watcher: ${message}`)
      await this.options.transact((tx) => new ChainsRepository(tx.db).recordFault(this.config.chain, message.slice(0, 500), isoOf(this.now()))).catch(() => undefined)
      return false
    }
  }

  private async loadAddresses(): Promise<void> {
    const repository = new ChainsRepository(this.options.db)
    for (;;) {
      const rows = await repository.addressesAfter(this.config.chain, this.lastIndex, ADDRESS_BATCH)
      for (const row of rows) {
        this.addresses.add(row.address)
        this.lastIndex = Math.max(this.lastIndex, Number(row.derivation_index))
      }
      if (rows.length < ADDRESS_BATCH) return
    }
  }

  /**
   * A node whose head has not moved for the chain's maxHeadAgeMs lags behind or is stuck: the
   * watcher moves on to the next URL (with one URL it stays, and says so in the fault).
   */
  private followHeadAge(head: number): void {
    const now = this.now()
    if (this.head !== head) {
      this.head = head
      this.headMovedAt = now
      return
    }
    const maxAge = this.config.maxHeadAgeMs
    if (maxAge !== undefined && now - this.headMovedAt > maxAge) {
      this.rpc.moveOn(`head stuck at block ${head} for ${Math.round((now - this.headMovedAt) / 1000)} s`)
      this.headMovedAt = now
    }
  }

  /** Reads the next range; true when the chain's head is still ahead. */
  private async read(): Promise<boolean> {
    const { config } = this
    const repository = new ChainsRepository(this.options.db)
    const head = await this.rpc.head()
    this.followHeadAge(head)
    const stored = await repository.cursor(config.chain)
    const from = stored?.next_block ?? config.startBlock ?? head
    this.cursor = from
    if (await this.followReorg(head)) return true
    if (from > head) {
      await this.saveProgress(from, head, [])
      await this.confirmDue(head)
      return false
    }
    const to = Math.min(head, from + config.maxBlockRange - 1)
    const headers = await this.headersOf(from, to, head)
    if (headers === undefined) return true
    const logs = await this.rpc.transfers(Object.values(config.tokens), from, to)
    // A log of a block whose hash is not the header's: the chain moved under the read; read again.
    const hashes = new Map(headers.map((header) => [header.number, header.hash]))
    if (logs.some((log) => hashes.has(log.blockNumber) && hashes.get(log.blockNumber) !== log.blockHash)) return true
    await this.loadAddresses()
    const ours = logs.filter((log) => this.addresses.has(log.to))
    await this.saveProgress(to + 1, head, ours, headers)
    this.cursor = to + 1
    await this.confirmDue(head)
    return to < head
  }

  /**
   * The headers of `from`, of `to`, and of the blocks between that could still be reorganised (the
   * last keptBlocks of the head), each linked to the one before it where both are read, and `from`
   * to the stored block before it; undefined when they are not (the chain moved under the read).
   */
  private async headersOf(from: number, to: number, head: number): Promise<BlockHeader[] | undefined> {
    const numbers = new Set<number>([from, to])
    for (let n = Math.max(from, head - keptBlocks(this.config) + 1); n <= to; n++) numbers.add(n)
    const before = (await new ChainsRepository(this.options.db).recentBlocks(this.config.chain, 1))[0]
    const headers: BlockHeader[] = []
    for (const n of [...numbers].sort((x, y) => x - y)) {
      const header = await this.rpc.block(n)
      if (header === undefined) return undefined
      const previous = headers.at(-1) ?? before
      if (previous !== undefined && previous.number === n - 1 && header.parentHash !== previous.hash) return undefined
      headers.push(header)
    }
    return headers
  }

  /** Sees whether the newest stored block is still the chain's; if not, takes the reorganised blocks away. True when it did. */
  private async followReorg(head: number): Promise<boolean> {
    const { config } = this
    const recent = await new ChainsRepository(this.options.db).recentBlocks(config.chain, keptBlocks(config))
    const top = recent[0]
    if (top === undefined) return false
    const canonical = await this.rpc.block(top.number)
    if (canonical?.hash === top.hash) return false
    let fork: number | undefined
    for (const block of recent) {
      const current = await this.rpc.block(block.number)
      if (current?.hash === block.hash) {
        fork = block.number + 1
        break
      }
    }
    const deepest = (recent.at(-1) as ChainBlockRow).number
    if (fork === undefined) {
      fork = deepest
      this.options.log.error({ chain: config.chain, deepestKnown: deepest, head }, `chain watcher: a reorg reaches below the ${recent.length} blocks kept; re-reading from block ${deepest}`)
    }
    const forkAt = fork
    const removed = await this.options.transact(async (tx) => {
      const taken = await takeAwayFrom(tx, config, forkAt, head, this.now())
      const cursor = await new ChainsRepository(tx.db).cursor(config.chain)
      if (cursor !== undefined && cursor.next_block > forkAt) await new ChainsRepository(tx.db).saveCursor({ ...cursor, next_block: forkAt, updated_at: isoOf(this.now()) })
      return taken
    })
    this.reorgs++
    this.options.log.warn({ chain: config.chain, fork: forkAt, depth: top.number - forkAt + 1, removed: removed.map((row) => row.id) }, `chain watcher: reorg from block ${forkAt}; re-reading`)
    return true
  }

  /** Records the range's deposits, its block hashes and the cursor in one transaction. */
  private async saveProgress(nextBlock: number, head: number, logs: readonly TransferLog[], headers: readonly BlockHeader[] = []): Promise<void> {
    const { config } = this
    const now = this.now()
    const reversed = await this.options.transact(async (tx) => {
      const repository = new ChainsRepository(tx.db)
      for (const log of logs) {
        const address = await repository.findAddress(log.to)
        if (address !== undefined) await recordSeen(tx, config, log, address, head, now)
      }
      await repository.saveBlocks(headers.map((header) => ({ chain: config.chain, number: header.number, hash: header.hash })))
      await repository.forgetBlocks(config.chain, 'below', Math.min(nextBlock - 1, head - keptBlocks(config) + 1))
      await repository.saveCursor({ chain: config.chain, next_block: nextBlock, head_block: head, head_seen_at: isoOf(now), last_error: null, last_error_at: null, updated_at: isoOf(now) })
      await repository.countConfirmations(config.chain, head)
      // Caught up with the head: a credited deposit a reorg took away that is not back is reversed.
      return nextBlock > head ? reverseMissing(tx, config, now) : []
    })
    for (const row of reversed) {
      this.reversed++
      this.options.log.error(
        { chain: config.chain, depositId: row.id, txHash: row.tx_hash, amount: row.amount, currency: row.currency, appId: row.app_id, owner: { type: row.owner_type, id: row.owner_id }, credited: { type: row.credited_type, id: row.credited_id } },
        'chain watcher: ALERT a credited deposit left the chain in a reorg deeper than its confirmations; the ledger still holds it: an operator must act (docs/chains.md#reorgs)',
      )
    }
  }

  /** Credits the pending deposits that have their confirmations at `head`, oldest first. */
  private async confirmDue(head: number): Promise<void> {
    const { config } = this
    const due = await new ChainsRepository(this.options.db).depositsUpTo(config.chain, head - config.confirmations + 1, ['pending'], CONFIRM_BATCH)
    for (const row of due) {
      const outcome = await confirmDeposit(this.options.transact, config, row.id, this.now)
      if (outcome === 'held') this.options.log.warn({ chain: config.chain, depositId: row.id, appId: row.app_id }, 'chain watcher: a confirmed deposit was held: its receiving address did not take it')
    }
  }
}

/** The watchers of every configured chain. */
export function chainWatchers(config: ChainsConfig | undefined, options: WatcherOptions): ChainWatcher[] {
  return (config?.chains ?? []).map((chain) => new ChainWatcher(chain, options))
}
