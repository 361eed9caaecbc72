import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { encodeFunctionData, erc20Abi, keccak256 } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import type { Db } from '../db/database.js'
import { isoOf } from '../db/time.js'
import type { ChainPayoutUpdated } from '../events/domain-events.js'
import type { Transact } from '../events/transact.js'
import type { LedgerEnvironment } from '../ledger/ledger.js'
import { type ChainConfig, type ChainsConfig, type ChainToken, PAYOUT_DEFAULTS } from './config.js'
import { type ChainPayoutAttemptRow, type ChainPayoutRow, PayoutsRepository } from './payouts.js'
import type { DepositKeys } from './keys.js'
import { ChainsRepository } from './repository.js'
import { ChainRpc, RpcUnavailable } from './rpc.js'
import { SWEEP_BATCH, Sweeper } from './sweeper.js'
import { checkChain, ChainMismatch, type WatcherLog } from './watcher.js'

/**
 * One payout sender per chain across every instance (the lease `sender:<chain>`), signing with the
 * hot wallet. Each round, before it sends anything new, it settles what it sent before: a payout
 * is recorded as signed (its nonce and its signed transaction, in one transaction) before it is
 * broadcast, so a process killed between signing, broadcasting and recording finds on restart
 * what it wrote, looks each of its transactions up on chain, and broadcasts the same bytes again
 * rather than signing another payout: a payout is sent at most once. One not mined within the
 * chain's payoutReplaceAfterMs is replaced (same nonce, fees up by a quarter, never above
 * maxFeePerGas), and whichever of its transactions is mined is the one recorded. With the
 * receiving xprv configured it also sweeps confirmed deposits to the hot wallet (sweeper.ts), with
 * the same nonces and the same record-before-broadcast rule.
 */

/** How long a sender's lease lasts without renewal. */
export const SENDER_LEASE_MS = 6_000
/** How often a sender looks for work while it has none, or tries the lease. */
const SENDER_ROUND_MS = 1_000
/** The longest a faulting sender waits before it tries again. */
const MAX_BACKOFF_MS = 30_000
/** Payouts looked at per round. */
const BATCH = 64
/** How often the hot wallet's unchanged gas balance is written again (its time says the sender is alive). */
const GAS_RECORD_MS = 10_000
/** The gas limit never exceeds this, whatever the node estimates (an ERC-20 transfer takes 35,000–65,000). */
export const GAS_LIMIT_CAP = 150_000n

export interface SenderOptions {
  db: Db
  transact: Transact
  log: WatcherLog
  now?: () => number
  holder?: string
  /** how often a round runs while there is no work (default SENDER_ROUND_MS) */
  roundMs?: number
}

export class PayoutSender {
  readonly rpc: ChainRpc
  private readonly now: () => number
  private readonly holder: string
  private readonly roundMs: number
  private checked = false
  private holding = false
  private stopped = true
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private backoffMs = 0
  private gasBalance: bigint | undefined
  private gasRecordedAt = 0
  private readonly sweeper: Sweeper | undefined

  /** `depositKeys`: the receiving addresses' keys; with them the sender also sweeps confirmed deposits to the hot wallet (sweeper.ts). */
  constructor(
    readonly config: ChainConfig,
    private readonly account: LocalAccount,
    private readonly options: SenderOptions,
    depositKeys?: DepositKeys,
  ) {
    this.rpc = new ChainRpc(config)
    this.now = options.now ?? Date.now
    this.sweeper = depositKeys === undefined ? undefined : new Sweeper(config, this.rpc, account, depositKeys, { db: options.db, transact: options.transact, log: options.log, now: this.now })
    this.holder = options.holder ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
    this.roundMs = options.roundMs ?? SENDER_ROUND_MS
  }

  private get leaseName(): string {
    return `sender:${this.config.chain}`
  }

  private get replaceAfterMs(): number {
    return this.config.payoutReplaceAfterMs ?? PAYOUT_DEFAULTS.replaceAfterMs
  }

  private get maxFeePerGas(): bigint {
    return this.config.maxFeePerGasWei ?? PAYOUT_DEFAULTS.maxFeePerGasWei
  }

  start(): void {
    this.stopped = false
    this.schedule(0)
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running
    if (this.holding) await this.options.transact((tx) => new ChainsRepository(tx.db).releaseLease(this.leaseName, this.holder)).catch(() => undefined)
    this.holding = false
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.running = this.round().then((more) => {
        this.running = undefined
        this.schedule(more ? 0 : this.backoffMs > 0 ? this.backoffMs : this.roundMs)
      })
    }, delayMs)
    this.timer.unref()
  }

  /** One round; true when there is more to do at once. Never throws: a fault backs off. */
  async round(): Promise<boolean> {
    try {
      const now = this.now()
      this.holding = await this.options.transact((tx) => new ChainsRepository(tx.db).takeLease(this.leaseName, this.holder, isoOf(now), isoOf(now + SENDER_LEASE_MS)))
      if (!this.holding) return false
      if (!this.checked) {
        await checkChain(this.config, this.rpc)
        this.checked = true
      }
      const gasBalance = await this.rpc.gasBalance(this.account.address)
      if (gasBalance !== this.gasBalance || now - this.gasRecordedAt >= GAS_RECORD_MS) {
        await this.options.transact((tx) => new PayoutsRepository(tx.db).recordGas(this.config.chain, this.account.address.toLowerCase(), gasBalance, isoOf(now)))
        this.gasRecordedAt = now
      }
      this.gasBalance = gasBalance
      const settled = await this.settleSent()
      // Sweeps before payouts: a payout can be paid from what was just swept (mined at once on a fast chain, next round otherwise).
      await this.sweeper?.settle()
      const swept = (await this.sweeper?.sweepConfirmed()) ?? 0
      const sent = await this.sendQueued()
      this.backoffMs = 0
      return settled + sent >= BATCH || swept >= SWEEP_BATCH
    } catch (error) {
      this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs === 0 ? this.roundMs : this.backoffMs * 2)
      const message = error instanceof Error ? error.message : String(error)
      if (error instanceof ChainMismatch) this.options.log.error({ chain: this.config.chain }, `payout sender: ${message}; not sending on this chain`)
      else this.options.log.warn({ chain: this.config.chain, retryInMs: this.backoffMs, err: error instanceof RpcUnavailable ? undefined : error }, `payout sender: ${message}`)
      return false
    }
  }

  /** Settles the payouts already signed: each found mined, confirmed, reverted, or sent again. Returns how many it looked at. */
  private async settleSent(): Promise<number> {
    const repository = new PayoutsRepository(this.options.db)
    const inFlight = await repository.inStatus(this.config.chain, ['signed', 'submitted'], BATCH)
    if (inFlight.length === 0) return 0
    const head = await this.rpc.head()
    const minedNonce = await this.rpc.nonceOf(this.account.address, 'latest')
    for (const payout of inFlight) await this.settle(payout, await repository.attempts(payout.id), head, minedNonce)
    return inFlight.length
  }

  private async settle(payout: ChainPayoutRow, attempts: readonly ChainPayoutAttemptRow[], head: number, minedNonce: number): Promise<void> {
    const latest = attempts.at(-1)
    if (latest === undefined) throw new Error(`payout ${payout.id} is ${payout.status} with no signed transaction`)
    for (const attempt of attempts) {
      const receipt = await this.rpc.receipt(attempt.tx_hash)
      if (receipt === undefined) continue
      if (payout.status === 'signed') await this.publish(payout, 'signed', 'submitted', attempt.tx_hash, undefined)
      const confirmations = head - receipt.blockNumber + 1
      if (confirmations < this.config.confirmations) return
      const from = payout.status === 'signed' ? 'submitted' : (payout.status as 'submitted')
      if (receipt.status === 'success') await this.publish(payout, from, 'confirmed', attempt.tx_hash, undefined)
      else await this.publish(payout, from, 'failed', attempt.tx_hash, `its transaction ${attempt.tx_hash} reverted`)
      return
    }
    if (payout.nonce !== null && minedNonce > payout.nonce) {
      // Its nonce is mined, by none of its transactions: the hot wallet's key sent something else.
      const from = payout.status as 'signed' | 'submitted'
      await this.publish(payout, from, 'failed', latest.tx_hash, `nonce ${payout.nonce} of the hot wallet was used by a transaction this platform did not record; none of the payout's was mined`)
      return
    }
    const age = this.now() - Date.parse(latest.created_at)
    if (payout.status === 'submitted' && age >= this.replaceAfterMs && BigInt(latest.max_fee_per_gas) < this.maxFeePerGas) {
      await this.replace(payout, latest)
      return
    }
    // Signed and maybe never broadcast (a crash), or dropped by the node's pool: the same bytes again.
    await this.rpc.sendRaw(latest.raw as `0x${string}`)
    if (payout.status === 'signed') await this.publish(payout, 'signed', 'submitted', latest.tx_hash, undefined)
  }

  /** Signs the same payout again with the same nonce and higher fees, records it, then broadcasts it. */
  private async replace(payout: ChainPayoutRow, latest: ChainPayoutAttemptRow): Promise<void> {
    const current = await this.rpc.fees()
    const bumped = (BigInt(latest.max_fee_per_gas) * 5n) / 4n + 1n
    const maxFeePerGas = minOf(maxOf(bumped, current.maxFeePerGas), this.maxFeePerGas)
    const attempt = await this.sign(payout, latest.nonce, maxFeePerGas, minOf(maxOf(current.maxPriorityFeePerGas, maxFeePerGas / 10n), maxFeePerGas))
    await this.options.transact(async (tx) => {
      const repository = new PayoutsRepository(tx.db)
      await repository.insertAttempt(attempt)
      await repository.move(payout.id, 'submitted', { tx_hash: attempt.tx_hash, updated_at: attempt.created_at })
    })
    this.options.log.info({ chain: this.config.chain, payout: payout.id, nonce: latest.nonce, replaced: latest.tx_hash, by: attempt.tx_hash }, 'payout sender: a payout not mined in time is replaced')
    await this.rpc.sendRaw(attempt.raw as `0x${string}`)
  }

  /** Sends the queued payouts the hot wallet can pay, oldest first. Returns how many it looked at. */
  private async sendQueued(): Promise<number> {
    const repository = new PayoutsRepository(this.options.db)
    const queued = await repository.inStatus(this.config.chain, ['queued'], BATCH)
    // The float of each token, read once a round and spent down as payouts are sent.
    const floats = new Map<string, bigint>()
    for (const payout of queued) {
      if (await this.heldForApproval(payout)) continue
      const balance = floats.get(payout.token) ?? (await this.rpc.tokenBalance(payout.token, this.account.address))
      floats.set(payout.token, balance)
      if (balance < BigInt(payout.amount)) {
        const reason = `the hot wallet holds ${balance} units of ${payout.currency} on ${payout.chain}; this payout needs ${payout.amount}`
        if (payout.reason !== reason) {
          this.options.log.error({ chain: this.config.chain, payout: payout.id }, `payout sender: ${reason}`)
          await this.options.transact((tx) => new PayoutsRepository(tx.db).note(payout.id, reason, isoOf(this.now())))
        }
        continue
      }
      if (await this.send(payout)) floats.set(payout.token, balance - BigInt(payout.amount))
    }
    return queued.length
  }

  /**
   * Whether the payout goes above the chain's spending limit of its token (what was sent within the
   * window, plus it): it then waits for an operator's `devplatform payouts approve`. An approved
   * payout is not counted against the limit again.
   */
  private async heldForApproval(payout: ChainPayoutRow): Promise<boolean> {
    const limit = this.config.spendingLimits?.[payout.currency as ChainToken]
    if (limit === undefined || payout.approved_at !== null) return false
    const now = this.now()
    const since = isoOf(now - 1000 * (this.config.spendingWindowSeconds ?? PAYOUT_DEFAULTS.spendingWindowSeconds))
    const sent = await new PayoutsRepository(this.options.db).sentSince(payout.chain, payout.currency, since)
    if (sent + BigInt(payout.amount) <= limit) return false
    const reason = `above the spending limit: ${sent} units of ${payout.currency} sent in the window, this payout ${payout.amount}, the limit ${limit}`
    await this.options.transact((tx) => new PayoutsRepository(tx.db).move(payout.id, 'queued', { status: 'awaiting_approval', reason, updated_at: isoOf(now) }))
    this.options.log.warn({ chain: this.config.chain, payout: payout.id }, `payout sender: a payout waits for an operator's approval: ${reason}`)
    return true
  }

  /** Signs, records, then broadcasts the payout; true when it was sent. */
  private async send(payout: ChainPayoutRow): Promise<boolean> {
    const fees = await this.rpc.fees()
    const pendingNonce = await this.rpc.nonceOf(this.account.address, 'pending')
    const maxFeePerGas = minOf(fees.maxFeePerGas, this.maxFeePerGas)
    const priority = minOf(fees.maxPriorityFeePerGas, maxFeePerGas)
    const estimate = await this.rpc.estimateGas({ account: this.account.address, to: payout.token, data: transferData(payout) })
    if (typeof estimate !== 'bigint') {
      // The token refuses the transfer (a blocked recipient, the zero address): nothing is sent.
      await this.publish(payout, 'queued', 'failed', null, `the token refuses this transfer: ${estimate.reverted}`)
      return false
    }
    const gas = minOf((estimate * 6n) / 5n, GAS_LIMIT_CAP)
    const attempt = await this.options.transact(async (tx) => {
      const repository = new PayoutsRepository(tx.db)
      const nonce = await repository.takeNonce(this.config.chain, this.account.address.toLowerCase(), pendingNonce)
      const signed = await this.sign(payout, nonce, maxFeePerGas, priority, gas)
      if (!(await repository.move(payout.id, 'queued', { status: 'signed', sender: this.account.address.toLowerCase(), nonce, tx_hash: signed.tx_hash, reason: null, sent_at: signed.created_at, updated_at: signed.created_at }))) {
        throw new MovedElsewhere()
      }
      await repository.insertAttempt(signed)
      return signed
    }).catch((error: unknown) => {
      if (error instanceof MovedElsewhere) return undefined
      throw error
    })
    if (attempt === undefined) return false
    await this.rpc.sendRaw(attempt.raw as `0x${string}`)
    await this.publish(payout, 'signed', 'submitted', attempt.tx_hash, undefined)
    return true
  }

  private async sign(payout: ChainPayoutRow, nonce: number, maxFeePerGas: bigint, maxPriorityFeePerGas: bigint, gas: bigint = GAS_LIMIT_CAP): Promise<ChainPayoutAttemptRow> {
    const raw = await this.account.signTransaction({
      type: 'eip1559',
      chainId: this.config.chainId,
      nonce,
      to: payout.token as `0x${string}`,
      data: transferData(payout),
      value: 0n,
      gas,
      maxFeePerGas,
      maxPriorityFeePerGas,
    })
    return { tx_hash: keccak256(raw).toLowerCase(), payout_id: payout.id, nonce, raw, max_fee_per_gas: maxFeePerGas.toString(), created_at: isoOf(this.now()) }
  }

  /**
   * Moves the payout from `from` to `to` and publishes `chain.payout_updated` in one transaction:
   * the drain or transfer that asked for it moves with it, or neither does.
   */
  private async publish(payout: ChainPayoutRow, from: 'queued' | 'signed' | 'submitted', to: 'submitted' | 'confirmed' | 'failed', txHash: string | null, reason: string | undefined): Promise<void> {
    const at = isoOf(this.now())
    await this.options.transact(async (tx) => {
      if (!(await new PayoutsRepository(tx.db).move(payout.id, from, { status: to, tx_hash: txHash, reason: reason ?? null, updated_at: at }))) return
      const event: ChainPayoutUpdated = {
        type: 'chain.payout_updated',
        payoutId: payout.id,
        chain: payout.chain,
        environment: payout.environment as LedgerEnvironment,
        appId: payout.app_id,
        ownerType: payout.owner_type as ChainPayoutUpdated['ownerType'],
        ownerId: payout.owner_id,
        status: to,
        txHash: txHash ?? undefined,
        reason,
        at,
      }
      await tx.publish(event)
    })
    payout.status = to
    if (to === 'failed') this.options.log.error({ chain: payout.chain, payout: payout.id, txHash }, `payout sender: a payout failed: ${reason ?? ''}`)
  }
}

/** Another process took the queued payout first. */
class MovedElsewhere extends Error {}

function transferData(payout: ChainPayoutRow): `0x${string}` {
  return encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [payout.to_address as `0x${string}`, BigInt(payout.amount)] })
}

const minOf = (a: bigint, b: bigint) => (a < b ? a : b)
const maxOf = (a: bigint, b: bigint) => (a > b ? a : b)

/** A sender per configured chain when the hot wallet is configured (sweeping too with the receiving xprv); none otherwise (live payouts wait). */
export function chainSenders(config: ChainsConfig | undefined, options: SenderOptions): PayoutSender[] {
  const hotWallet = config?.hotWallet
  if (config === undefined || hotWallet === undefined) return []
  return config.chains.map((chain) => new PayoutSender(chain, hotWallet, options, config.depositKeys))
}
