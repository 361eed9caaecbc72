import { Conflict, InvalidRequest, NotFound } from '../../errors.js'
import type { Db } from '../../db/database.js'
import { AmountError, type Currency, feeOf, parseAmount } from '../../ledger/amount.js'
import { type AccountKey, LedgerRepository, type LedgerEnvironment, type Posting } from '../../ledger/ledger.js'
import { convert, RateUnavailable, rateCurrencyOf } from '../../ledger/rates.js'
import { findWallet, WALLET_CURRENCIES, walletAccountKey } from '../wallets/public.js'
import { isoOf, newId } from '../../db/time.js'
import { moneyActivity } from '../../ledger/activity.js'
import { ACH_RAILS, awaitsPayoutSender, bankReferenceOf, CHAIN_RAILS, hotShardOf, sandboxFailureOf, transactionHash } from '../../ledger/simulated-rails.js'
import type { Transaction } from '../../events/transact.js'
import type { ChainPayoutUpdated } from '../../events/domain-events.js'
import type { MoneyContext, MoneyTimings } from '../../ledger/money-context.js'
import { type Chain, isValidChainAddress, describeAddressFormat } from '../../validation/chain-address.js'
import { findLiquidationAddress, type LiquidationAddressRow, setReturnAddress } from '../liquidation-addresses/public.js'
import { toDrain } from './objects.js'
import { type DrainRow, DrainsRepository } from './repository.js'
import type { Drain, DrainDestination, DrainState } from './schemas.js'

/**
 * A deposit's life at a liquidation address, after the provider's drain model:
 * funds_received → payment_submitted → payment_processed, or a failure path. Each step is one
 * transaction that changes the drain, writes its ledger entries and emits its event together,
 * so a step is done entirely or not at all, whoever runs it and whenever a process dies.
 *
 * The ledger, per drain (C: the deposit's currency, D: the destination's):
 * - intake: the chain's inflow (world) → the address's clearing account, posted;
 * - submitted: one pending entry reserves the deposit: clearing → developer fee (C) and the rest
 *   to the destination, through the exchange (world, C in, D out) when C ≠ D;
 * - processed: that entry is posted; returned: it is voided (the funds are back in clearing);
 * - refunded: clearing → the chain's outflow to the return address, posted. Live, the refund is
 *   a payout on chain: the entry is pending while it is in flight (refund_in_flight), posted once
 *   confirmed (refunded), voided if it fails (refund_failed: the funds are back in clearing).
 * Undeliverable, error, refund_failed and a return or cancel with no return address hold the
 * funds in clearing, for an operator (retryHeldDrain, refundHeldDrain, releaseHeldDrain).
 */

export type DrainTimings = MoneyTimings
export type DrainContext = MoneyContext

export function stepDelayMs(rail: string, timings: DrainTimings): number {
  return ACH_RAILS.has(rail) ? timings.achDelayMs : timings.fastDelayMs
}

/** How long a drain waiting for a fresh exchange rate waits before it looks again. */
export const RATE_RETRY_MS = 5_000

const drainFailureOf = (row: DrainRow) => sandboxFailureOf(row.environment, BigInt(row.amount), row.currency as Currency)

/** The states whose funds stay in the address's clearing account until an operator acts (when nothing more is scheduled). */
export const HELD_DRAIN_STATES: readonly DrainState[] = ['error', 'undeliverable', 'returned', 'canceled', 'refund_failed']

/** Whether the drain's funds wait in clearing for an operator: a held state with no step scheduled. */
export function isHeldDrain(row: Pick<DrainRow, 'state' | 'next_step_at'>): boolean {
  return HELD_DRAIN_STATES.includes(row.state as DrainState) && row.next_step_at === null
}

/** The row of a hot account a drain writes to (the context may spread them over other than HOT_ACCOUNT_SHARDS). */
function shardOf(drainId: string, context: DrainContext): number {
  return hotShardOf(drainId, context.hotAccountShards)
}

function worldAccount(context: DrainContext, environment: LedgerEnvironment, appId: string, currency: Currency, what: string, drainId: string): AccountKey {
  return { environment, appId, kind: 'world', currency, reference: `${what}#${shardOf(drainId, context)}` }
}

function clearingAccount(row: { environment: string; app_id: string; liquidation_address_id: string; currency: string }): AccountKey {
  return { environment: row.environment as LedgerEnvironment, appId: row.app_id, kind: 'clearing', currency: row.currency as Currency, reference: row.liquidation_address_id }
}

function destinationOf(address: LiquidationAddressRow): DrainDestination {
  const destination: DrainDestination = {
    payment_rail: address.destination_payment_rail as DrainDestination['payment_rail'],
    currency: address.destination_currency as DrainDestination['currency'],
  }
  if (address.destination_address !== null) destination.to_address = address.destination_address
  if (address.external_account_id !== null) destination.external_account_id = address.external_account_id
  if (address.bridge_wallet_id !== null) destination.bridge_wallet_id = address.bridge_wallet_id
  if (address.destination_blockchain_memo !== null) destination.blockchain_memo = address.destination_blockchain_memo
  if (address.destination_wire_message !== null) destination.wire_message = address.destination_wire_message
  if (address.destination_sepa_reference !== null) destination.sepa_reference = address.destination_sepa_reference
  if (address.destination_ach_reference !== null) destination.ach_reference = address.destination_ach_reference
  return destination
}

export interface Deposit {
  environment: LedgerEnvironment
  appId: string
  customerId: string
  liquidationAddressId: string
  /** a decimal string in the address's currency */
  amount: string
  depositTxHash?: string | undefined
  fromAddress?: string | undefined
}

/** The largest deposit taken, in whole units of any currency. */
export const MAX_DEPOSIT_UNITS = 1_000_000_000n

const TX_HASH = /^[0-9A-Za-z]{16,128}$/

/**
 * The one intake of deposits: the sandbox's simulate_deposit and the CLI call it, as a provider
 * adapter would. Records the drain and its inflow and emits `liquidation_address.drain.created`,
 * in the caller's transaction. Refused with nothing written when the deposit is not valid.
 */
export async function receiveDeposit(tx: Transaction, context: DrainContext, deposit: Deposit): Promise<Drain> {
  const address = await findLiquidationAddress(tx.db, deposit.appId, deposit.customerId, deposit.liquidationAddressId)
  if (address === undefined) throw new NotFound('Liquidation address not found')
  const currency = address.currency as Currency
  let amount: bigint
  try {
    amount = parseAmount(deposit.amount, currency)
  } catch (error) {
    if (error instanceof AmountError) throw new InvalidRequest(`amount: ${error.message}`)
    throw error
  }
  if (amount <= 0n) throw new InvalidRequest('amount must be greater than 0')
  if (amount > parseAmount(MAX_DEPOSIT_UNITS.toString(), currency)) throw new InvalidRequest(`amount must be at most ${MAX_DEPOSIT_UNITS}`)
  const chain = address.chain as Chain
  if (deposit.fromAddress !== undefined && !isValidChainAddress(chain, deposit.fromAddress)) {
    throw new InvalidRequest(`from_address must be a valid ${chain} address (${describeAddressFormat(chain)})`)
  }
  if (deposit.depositTxHash !== undefined && !TX_HASH.test(deposit.depositTxHash)) throw new InvalidRequest('deposit_tx_hash must be 16 to 128 letters and digits')
  const { fee, rest } = feeOf(amount, address.custom_developer_fee_percent ?? '0')
  const now = isoOf(context.now())
  const row: DrainRow = {
    id: newId(),
    environment: deposit.environment,
    app_id: deposit.appId,
    customer_id: address.customer_id,
    liquidation_address_id: address.id,
    state: 'funds_received',
    amount: amount.toString(),
    currency,
    deposit_tx_hash: deposit.depositTxHash ?? transactionHash(chain),
    from_address: deposit.fromAddress ?? null,
    source_payment_rail: chain,
    destination: JSON.stringify(destinationOf(address)),
    developer_fee: fee.toString(),
    subtotal_amount: rest.toString(),
    exchange_rate: null,
    converted_amount: null,
    outgoing_amount: null,
    destination_tx_hash: null,
    refund_tx_hash: null,
    return_reason: null,
    pending_entry_id: null,
    next_step_at: movesOn(deposit.environment, { payment_rail: address.destination_payment_rail, currency: address.destination_currency, bridge_wallet_id: address.bridge_wallet_id }, context)
      ? isoOf(context.now() + stepDelayMs(address.destination_payment_rail, context.timings))
      : null,
    created_at: now,
    updated_at: now,
  }
  await new DrainsRepository(tx.db).insert(row)
  const ledger = new LedgerRepository(tx.db)
  const [inflow, clearing] = (await ledger.accounts([worldAccount(context, deposit.environment, deposit.appId, currency, `chain:${chain}`, row.id), clearingAccount(row)])) as [string, string]
  await ledger.record({
    environment: deposit.environment,
    appId: deposit.appId,
    reasonType: 'drain',
    reasonId: row.id,
    status: 'posted',
    postings: [
      { accountId: inflow, direction: 'debit', amount },
      { accountId: clearing, direction: 'credit', amount },
    ],
  })
  const drain = toDrain(row)
  await tx.events.emit(deposit.appId, 'liquidation_address.drain.created', drain)
  moneyActivity.countAfterCommit(tx.unit, { drainState: 'funds_received', entries: ['posted'] })
  return drain
}

/**
 * Whether a new drain is scheduled: always in the sandbox; in live when it goes into one of the
 * application's wallets, or out on a chain whose payouts the platform sends. Any other live
 * drain waits in funds_received for a payout sender (docs/chains.md#what-waits).
 */
function movesOn(environment: LedgerEnvironment, destination: { payment_rail: string; currency: string; bridge_wallet_id?: string | null }, context: DrainContext): boolean {
  if (!awaitsPayoutSender(environment, destination)) return true
  return context.payouts !== undefined && context.payouts.offReason(destination.payment_rail, destination.currency) === undefined
}

/**
 * A live drain's payout on chain moved (the chain's sender): submitted with its transaction,
 * processed once confirmed (the pending entry posted), or in error once it reverted (the entry
 * voided: the funds are the address's clearing account's again, for an operator); its refund's
 * likewise (refundChanges). A change that does not follow from the drain's state is ignored: the
 * sender publishes each status once.
 */
export async function followLivePayout(tx: Transaction, event: ChainPayoutUpdated): Promise<void> {
  const drains = new DrainsRepository(tx.db)
  const row = await drains.lock(event.environment, event.appId, event.ownerId)
  if (row === undefined) throw new NotFound('Drain not found')
  const ledger = new LedgerRepository(tx.db)
  const entries: string[] = []
  let changes: Changes
  if (event.ownerType === 'drain_refund') {
    const refund = refundChanges(event, row)
    if (refund === undefined) return
    if (refund.state === 'refunded' && row.pending_entry_id !== null) await ledger.post(row.pending_entry_id)
    if (refund.state === 'refund_failed' && row.pending_entry_id !== null) await ledger.void(row.pending_entry_id)
    if (refund.state !== undefined) entries.push(refund.state === 'refunded' ? 'posted' : 'voided')
    changes = refund
  } else if (event.status === 'submitted' && row.state === 'funds_received') {
    changes = { state: 'payment_submitted', destination_tx_hash: event.txHash ?? null }
  } else if (event.status === 'confirmed' && (row.state === 'funds_received' || row.state === 'payment_submitted')) {
    if (row.pending_entry_id !== null) await ledger.post(row.pending_entry_id)
    entries.push('posted')
    changes = { state: 'payment_processed', destination_tx_hash: event.txHash ?? null }
  } else if (event.status === 'failed' && (row.state === 'funds_received' || row.state === 'payment_submitted')) {
    if (row.pending_entry_id !== null) await ledger.void(row.pending_entry_id)
    entries.push('voided')
    changes = { state: 'error', destination_tx_hash: event.txHash ?? null, return_reason: `the payout failed on chain: ${event.reason ?? 'reverted'}; it needs an operator` }
  } else {
    return
  }
  const updated: DrainRow = { ...row, ...changes, next_step_at: null, updated_at: event.at }
  await drains.update(row.id, { ...changes, next_step_at: null, updated_at: event.at })
  await tx.events.emit(row.app_id, 'liquidation_address.drain.updated', toDrain(updated))
  moneyActivity.countAfterCommit(tx.unit, { ...(updated.state === row.state ? {} : { drainState: updated.state }), entries })
}

/**
 * What a drain's live refund moving on chain changes: its transaction once broadcast, refunded
 * once confirmed, refund_failed once it reverted or the token refused it; undefined when the
 * drain is no longer refunding.
 */
function refundChanges(event: ChainPayoutUpdated, row: DrainRow): Changes | undefined {
  if (row.state !== 'refund_in_flight') return undefined
  const refund_tx_hash = event.txHash ?? null
  if (event.status === 'submitted') return { refund_tx_hash }
  if (event.status === 'confirmed') return { state: 'refunded', refund_tx_hash }
  return { state: 'refund_failed', refund_tx_hash, return_reason: `the refund failed on chain: ${event.reason ?? 'reverted'}; it needs an operator` }
}

/**
 * The currency a wallet holds for a destination currency: a fiat is held as its stablecoin; one
 * a wallet does not hold (WALLET_CURRENCIES) is none, since no balance would ever show it.
 */
function walletCurrencyOf(currency: Currency): Currency | undefined {
  const held = currency === 'usd' ? 'usdc' : currency === 'eur' ? 'eurc' : currency
  return (WALLET_CURRENCIES as readonly string[]).includes(held) ? held : undefined
}

type Changes = Partial<Omit<DrainRow, 'id'>>

/**
 * Moves the drain `drainId` one step on, if it is due and no other process holds it. Returns
 * false when there was nothing to do.
 */
export async function advanceDrain(tx: Transaction, context: DrainContext, drainId: string): Promise<boolean> {
  const nowMs = context.now()
  const drains = new DrainsRepository(tx.db)
  const row = await drains.lockDue(drainId, isoOf(nowMs))
  if (row === undefined) return false
  const step = new DrainStep(tx, context, row, nowMs)
  const changes = await step.run()
  if (changes === undefined) return true
  const updated: DrainRow = { ...row, ...changes, updated_at: isoOf(nowMs) }
  await drains.update(row.id, { ...changes, updated_at: updated.updated_at })
  const entered = updated.state !== row.state ? updated.state : undefined
  if (entered !== undefined) await tx.events.emit(row.app_id, 'liquidation_address.drain.updated', toDrain(updated))
  moneyActivity.countAfterCommit(tx.unit, { ...(entered === undefined ? {} : { drainState: entered }), entries: step.entries })
  return true
}

/** What an operator's action did to a held drain: the drain as it is now, and the ledger entry it wrote. */
export interface HeldDrainOutcome {
  fromState: DrainState
  drain: Drain
  /** the entry written: pending (a retry's payout, a live refund) or posted */
  entryId: string | undefined
  amount: bigint
  currency: Currency
}

/** The held drain `id` of the application, locked: 404 unknown (another application's too), 409 not held. */
async function lockHeld(tx: Transaction, environment: LedgerEnvironment, appId: string, id: string): Promise<DrainRow> {
  const row = await new DrainsRepository(tx.db).lock(environment, appId, id.toLowerCase())
  if (row === undefined) throw new NotFound('Drain not found')
  if (!isHeldDrain(row)) throw new Conflict(`This drain is ${row.state}${row.next_step_at === null ? '' : ' and moving on'}: its funds are not held for an operator`)
  return row
}

async function applyOperatorChanges(tx: Transaction, row: DrainRow, changes: Changes, nowMs: number, entries: string[], entryId: string | undefined): Promise<HeldDrainOutcome> {
  const updated: DrainRow = { ...row, ...changes, updated_at: isoOf(nowMs) }
  await new DrainsRepository(tx.db).update(row.id, { ...changes, updated_at: updated.updated_at })
  const drain = toDrain(updated)
  if (updated.state !== row.state) await tx.events.emit(row.app_id, 'liquidation_address.drain.updated', drain)
  moneyActivity.countAfterCommit(tx.unit, { ...(updated.state === row.state ? {} : { drainState: updated.state }), entries })
  return { fromState: row.state as DrainState, drain, entryId, amount: BigInt(row.amount), currency: row.currency as Currency }
}

/** Why a live drain's payout on `rail` of `currency` can't be sent now; undefined in the sandbox and when it can. */
function livePayoutRefusal(context: DrainContext, environment: string, rail: string, currency: string): string | undefined {
  if (environment !== 'live') return undefined
  if (context.payouts === undefined) return 'live payouts are not sent by this process'
  return context.payouts.offReason(rail, currency)
}

/**
 * An operator retries a drain in error: it is submitted again at once (its pending entry reserves
 * the payout, as the scheduler's submit does), the sandbox's forced failure not forced again; the
 * scheduler takes it on from there. 409 unless it is in error.
 */
export async function retryHeldDrain(tx: Transaction, context: DrainContext, environment: LedgerEnvironment, appId: string, id: string): Promise<HeldDrainOutcome> {
  const row = await lockHeld(tx, environment, appId, id)
  if (row.state !== 'error') throw new Conflict(`Only a drain in error can be retried; this one is ${row.state}`)
  const destination = JSON.parse(row.destination) as DrainDestination
  if (awaitsPayoutSender(environment, destination)) {
    const refusal = livePayoutRefusal(context, environment, destination.payment_rail, destination.currency)
    if (refusal !== undefined) throw new Conflict(`The drain can't be retried: ${refusal}`)
  }
  const nowMs = context.now()
  const step = new DrainStep(tx, context, { ...row, state: 'funds_received' }, nowMs, true)
  const changes = (await step.submit()) ?? {}
  // A live payout queued, or a rate awaited: it waits in funds_received, as a new drain would.
  const moved: Changes = { state: 'funds_received', return_reason: null, ...changes }
  return applyOperatorChanges(tx, row, moved, nowMs, step.entries, changes.pending_entry_id ?? undefined)
}

/**
 * An operator refunds a held drain to `returnAddress` (valid on the deposit's chain), or to its
 * address's return address; an address without one is given `returnAddress` first. The sandbox's refund is posted at
 * once; live, it is a payout on chain (refund_in_flight), as the scheduler's refund is.
 */
export async function refundHeldDrain(tx: Transaction, context: DrainContext, environment: LedgerEnvironment, appId: string, id: string, returnAddress: string | undefined): Promise<HeldDrainOutcome & { returnAddress: string }> {
  const row = await lockHeld(tx, environment, appId, id)
  const address = await findLiquidationAddress(tx.db, row.app_id, row.customer_id, row.liquidation_address_id)
  if (address === undefined) throw new NotFound('Liquidation address not found')
  const chain = row.source_payment_rail as Chain
  const to = returnAddress ?? address.return_address
  if (to === null) throw new InvalidRequest('return_address is required: the liquidation address has none')
  if (returnAddress !== undefined) {
    if (chain === 'stellar') throw new InvalidRequest('return_address is not supported on stellar')
    if (!isValidChainAddress(chain, returnAddress)) throw new InvalidRequest(`return_address must be a valid ${chain} address (${describeAddressFormat(chain)})`)
    // The address's own return address is set where there is none, never replaced.
    if (address.return_address === null) await setReturnAddress(tx.db, row.app_id, address.id, returnAddress)
  }
  const refusal = livePayoutRefusal(context, environment, row.source_payment_rail, row.currency)
  if (refusal !== undefined) throw new Conflict(`The drain can't be refunded: ${refusal}`)
  const nowMs = context.now()
  const step = new DrainStep(tx, context, row, nowMs)
  const changes = await step.refund(to)
  const entryId = step.refundEntryId
  return { ...(await applyOperatorChanges(tx, row, changes, nowMs, step.entries, entryId)), returnAddress: to }
}

/**
 * An operator releases a held drain's funds into one of the application's wallets: the whole
 * deposit, no developer fee, posted from the address's clearing account to the wallet's balance of
 * the deposit's currency. 404 for a wallet not of the application and environment.
 */
export async function releaseHeldDrain(tx: Transaction, context: DrainContext, environment: LedgerEnvironment, appId: string, id: string, walletId: string): Promise<HeldDrainOutcome & { walletId: string }> {
  const row = await lockHeld(tx, environment, appId, id)
  const wallet = await findWallet(tx.db, environment, appId, walletId)
  if (wallet === undefined) throw new NotFound('Wallet not found')
  const currency = row.currency as Currency
  if (walletCurrencyOf(currency) !== currency) throw new Conflict(`A wallet cannot hold ${currency}: the drain can be refunded, not released`)
  const amount = BigInt(row.amount)
  const ledger = new LedgerRepository(tx.db)
  const [clearing, balance] = (await ledger.accounts([clearingAccount(row), walletAccountKey(wallet, currency)])) as [string, string]
  const entryId = await ledger.record({
    environment,
    appId,
    reasonType: 'drain',
    reasonId: row.id,
    status: 'posted',
    postings: [
      { accountId: clearing, direction: 'debit', amount },
      { accountId: balance, direction: 'credit', amount },
    ],
  })
  const nowMs = context.now()
  return { ...(await applyOperatorChanges(tx, row, { state: 'released', return_reason: `released to wallet ${wallet.id} by an operator`, next_step_at: null }, nowMs, ['posted'], entryId)), walletId: wallet.id }
}

/** The application's drains whose funds are held for an operator, oldest first. */
export async function heldDrains(db: Db, environment: LedgerEnvironment, appId: string): Promise<Drain[]> {
  return (await new DrainsRepository(db).stopped(environment, appId, HELD_DRAIN_STATES)).map(toDrain)
}

class DrainStep {
  private readonly ledger: LedgerRepository
  private readonly environment: LedgerEnvironment
  /** what this step did to ledger entries, for the metrics: written pending or posted, settled posted or voided */
  readonly entries: string[] = []
  /** the refund's entry, once refund wrote it */
  refundEntryId: string | undefined
  private addressRead: Promise<LiquidationAddressRow | undefined> | undefined

  constructor(
    private readonly tx: Transaction,
    private readonly context: DrainContext,
    private readonly row: DrainRow,
    private readonly nowMs: number,
    /** an operator's retry: the sandbox's forced failure is not forced again */
    private readonly retried = false,
  ) {
    this.ledger = new LedgerRepository(tx.db)
    this.environment = row.environment as LedgerEnvironment
  }

  /** The drain's address, read once and only by the steps that look at it (processed does not). */
  private address(): Promise<LiquidationAddressRow | undefined> {
    this.addressRead ??= findLiquidationAddress(this.tx.db, this.row.app_id, this.row.customer_id, this.row.liquidation_address_id)
    return this.addressRead
  }

  private get destination(): DrainDestination {
    return JSON.parse(this.row.destination) as DrainDestination
  }

  private after(delayMs: number): string {
    return isoOf(this.nowMs + delayMs)
  }

  private nextStep(): string {
    return this.after(stepDelayMs(this.destination.payment_rail, this.context.timings))
  }

  /** What changes on the drain; undefined when it waits where it is. */
  async run(): Promise<Changes | undefined> {
    switch (this.row.state as DrainState) {
      case 'funds_received':
        return this.submit()
      case 'payment_submitted':
        return drainFailureOf(this.row) === 'returned' ? this.returned() : this.processed()
      case 'returned':
      case 'canceled':
        return this.refund()
      default:
        return { next_step_at: null }
    }
  }

  /**
   * Ends the drain where it is, its funds held in clearing, or sends them back when there is a
   * return address (live: when the deposit's chain sends payouts of its token; otherwise it holds them).
   */
  private async stopped(state: 'canceled' | 'returned' | 'undeliverable' | 'error', reason: string): Promise<Changes> {
    const canReturn = (state === 'canceled' || state === 'returned') && (await this.address())?.return_address != null && this.refundsOn()
    return { state, return_reason: reason, next_step_at: canReturn ? this.nextStep() : null }
  }

  /** Whether a refund can be made: always in the sandbox (simulated); live, when the deposit's chain sends payouts of its token. */
  private refundsOn(): boolean {
    if (this.environment !== 'live') return true
    return this.context.payouts !== undefined && this.context.payouts.offReason(this.row.source_payment_rail, this.row.currency) === undefined
  }

  /** Also an operator's retry of a drain in error: submitted again, now. */
  async submit(): Promise<Changes | undefined> {
    const address = await this.address()
    if (address === undefined || address.state !== 'active') return this.stopped('canceled', 'the liquidation address is deactivated')
    const failure = this.retried ? undefined : drainFailureOf(this.row)
    if (failure === 'undeliverable') return this.stopped('undeliverable', 'sandbox: the destination account could not receive the payment')
    if (failure === 'error') return this.stopped('error', 'sandbox: the payment could not be made; it needs an operator')
    const from = this.row.currency as Currency
    const destination = this.destination
    const wallet = destination.bridge_wallet_id === undefined ? undefined : await findWallet(this.tx.db, this.environment, this.row.app_id, destination.bridge_wallet_id)
    let to = destination.currency as Currency
    if (wallet !== undefined) {
      const held = walletCurrencyOf(to)
      if (held === undefined) return this.stopped('undeliverable', `a wallet cannot hold ${to}`)
      to = held
    }
    let rate = '1'
    if (rateCurrencyOf(from) !== rateCurrencyOf(to)) {
      try {
        rate = (await this.context.rates.current(this.tx.db, this.environment, rateCurrencyOf(from), rateCurrencyOf(to))).buy
      } catch (error) {
        // No fresh rate: wait for one rather than guess.
        if (error instanceof RateUnavailable) return { next_step_at: this.after(RATE_RETRY_MS) }
        throw error
      }
    }
    const amount = BigInt(this.row.amount)
    const fee = BigInt(this.row.developer_fee ?? '0')
    const subtotal = amount - fee
    const converted = convert(subtotal, from, to, rate)
    if (converted <= 0n) return this.stopped('canceled', `the amount after fees is below the smallest unit of ${to}`)
    const feeAccount: AccountKey = { environment: this.environment, appId: this.row.app_id, kind: 'developer_fee', currency: from, reference: `fee#${shardOf(this.row.id, this.context)}` }
    const receiving = wallet !== undefined ? walletAccountKey(wallet, to) : worldAccount(this.context, this.environment, this.row.app_id, to, `payout:${destination.payment_rail}`, this.row.id)
    // The entry's postings, each naming its account by key: the accounts are found in one statement.
    const moves: { account: AccountKey; direction: Posting['direction']; amount: bigint }[] = [{ account: clearingAccount(this.row), direction: 'debit', amount }]
    if (fee > 0n) moves.push({ account: feeAccount, direction: 'credit', amount: fee })
    if (from === to) {
      moves.push({ account: receiving, direction: 'credit', amount: subtotal })
    } else {
      if (subtotal > 0n) moves.push({ account: worldAccount(this.context, this.environment, this.row.app_id, from, 'exchange', this.row.id), direction: 'credit', amount: subtotal })
      moves.push({ account: worldAccount(this.context, this.environment, this.row.app_id, to, 'exchange', this.row.id), direction: 'debit', amount: converted })
      moves.push({ account: receiving, direction: 'credit', amount: converted })
    }
    const accountIds = await this.ledger.accounts(moves.map((move) => move.account))
    const postings = moves.map((move, i): Posting => ({ accountId: accountIds[i] as string, direction: move.direction, amount: move.amount }))
    const entryId = await this.ledger.record({ environment: this.environment, appId: this.row.app_id, reasonType: 'drain', reasonId: this.row.id, status: 'pending', postings })
    this.entries.push('pending')
    const payout = this.livePayout(destination, to, converted)
    if (payout !== undefined) {
      // Live on chain: the sender sends it; the drain moves on with the payout (followLivePayout).
      await payout
      return {
        destination: JSON.stringify({ ...destination, currency: to }),
        exchange_rate: rate,
        converted_amount: converted.toString(),
        outgoing_amount: converted.toString(),
        pending_entry_id: entryId,
        next_step_at: null,
      }
    }
    return {
      state: 'payment_submitted',
      destination: JSON.stringify({ ...destination, currency: to }),
      exchange_rate: rate,
      converted_amount: converted.toString(),
      outgoing_amount: converted.toString(),
      pending_entry_id: entryId,
      next_step_at: this.nextStep(),
    }
  }

  /** Queues a live drain's payout with the chain's sender; undefined for the sandbox's and a wallet's, which are simulated. */
  private livePayout(destination: DrainDestination, currency: Currency, amount: bigint): Promise<void> | undefined {
    if (!awaitsPayoutSender(this.environment, destination)) return undefined
    const payouts = this.context.payouts
    if (payouts === undefined || payouts.offReason(destination.payment_rail, currency) !== undefined || destination.to_address === undefined) {
      throw new Error(`drain ${this.row.id}: a live payout on ${destination.payment_rail} was scheduled with no sender for it`)
    }
    return payouts.request(
      this.tx.db,
      { chain: destination.payment_rail, environment: 'live', appId: this.row.app_id, ownerType: 'drain', ownerId: this.row.id, currency: currency as 'usdc' | 'eurc', toAddress: destination.to_address, amount },
      this.nowMs,
    )
  }

  private async processed(): Promise<Changes> {
    if (this.row.pending_entry_id !== null) {
      await this.ledger.post(this.row.pending_entry_id)
      this.entries.push('posted')
    }
    const destination = this.destination
    const rail = destination.payment_rail
    const changes: Changes = { state: 'payment_processed', next_step_at: null }
    const bankReference = bankReferenceOf(rail, isoOf(this.nowMs))
    if (CHAIN_RAILS.has(rail)) changes.destination_tx_hash = transactionHash(rail === 'bridge_wallet' ? this.row.source_payment_rail : rail)
    else if (bankReference !== undefined) changes.destination = JSON.stringify({ ...destination, ...bankReference })
    return changes
  }

  private async returned(): Promise<Changes> {
    if (this.row.pending_entry_id !== null) {
      await this.ledger.void(this.row.pending_entry_id)
      this.entries.push('voided')
    }
    return this.stopped('returned', 'sandbox: the receiving institution returned the payment')
  }

  /** Sends the held deposit back to `to` (an operator's refund), or to the address's return address. */
  async refund(to?: string): Promise<Changes> {
    const returnAddress = to ?? (await this.address())?.return_address
    if (returnAddress == null) return { next_step_at: null }
    const amount = BigInt(this.row.amount)
    const currency = this.row.currency as Currency
    const live = this.environment === 'live'
    const [clearing, outflow] = (await this.ledger.accounts([
      clearingAccount(this.row),
      worldAccount(this.context, this.environment, this.row.app_id, currency, `refund:${this.row.source_payment_rail}`, this.row.id),
    ])) as [string, string]
    const entryId = await this.ledger.record({
      environment: this.environment,
      appId: this.row.app_id,
      reasonType: 'drain',
      reasonId: this.row.id,
      status: live ? 'pending' : 'posted',
      postings: [
        { accountId: clearing, direction: 'debit', amount },
        { accountId: outflow, direction: 'credit', amount },
      ],
    })
    this.refundEntryId = entryId
    if (!live) {
      this.entries.push('posted')
      return { state: 'refunded', refund_tx_hash: transactionHash(this.row.source_payment_rail), next_step_at: null }
    }
    // Live: the chain's sender sends it back; the drain follows the refund (followLivePayout).
    const payouts = this.context.payouts
    if (payouts === undefined) throw new Error(`drain ${this.row.id}: a live refund was scheduled with no sender for it`)
    await payouts.request(
      this.tx.db,
      { chain: this.row.source_payment_rail, environment: 'live', appId: this.row.app_id, ownerType: 'drain_refund', ownerId: this.row.id, currency: currency as 'usdc' | 'eurc', toAddress: returnAddress, amount },
      this.nowMs,
    )
    this.entries.push('pending')
    return { state: 'refund_in_flight', pending_entry_id: entryId, next_step_at: null }
  }
}
