import { Conflict, InvalidRequest, NotFound } from '../../errors.js'
import { EVM_CHAINS } from '../../chains/config.js'
import { moneyActivity } from '../../ledger/activity.js'
import { type Currency, formatAmount } from '../../ledger/amount.js'
import { type AccountKey, InsufficientFunds, LedgerRepository, type LedgerEnvironment, type Posting } from '../../ledger/ledger.js'
import { convert, RateUnavailable, rateCurrencyOf } from '../../ledger/rates.js'
import { findWallet, WALLET_CURRENCIES, walletAccountKey, type WalletRow } from '../wallets/public.js'
import type { Db } from '../../db/database.js'
import { type Chain, CHAINS, describeAddressFormat, isValidChainAddress } from '../../validation/chain-address.js'
import { isoOf, newId } from '../../db/time.js'
import type { Transaction } from '../../events/transact.js'
import type { ChainPayoutUpdated } from '../../events/domain-events.js'
import { awaitsPayoutSender, bankReferenceOf, CHAIN_RAILS, hotShardOf, sandboxFailureOf, transactionHash } from '../../ledger/simulated-rails.js'
import { type DrainContext, RATE_RETRY_MS, stepDelayMs } from '../drains/public.js'
import { toTransfer } from './objects.js'
import { isInbound, type TransferFamily, type TransferRow, TransfersRepository } from './repository.js'
import { PAYMENT_INTENT_KINDS, type TransferKind } from './kinds.js'
import type { CustomerDetails, DepositInstructions, Endpoint, Transfer, TransferState } from './schemas.js'

/**
 * A transfer's life, after the provider's transfer model, run by the same scheduler as drains:
 * each step is one transaction that changes the transfer, writes its ledger entries and emits its
 * event together.
 *
 * Money in (direct_bank, direct_wallet, payment intents): awaiting_funds until the funds arrive
 * (the sandbox's simulate_funds), then the world's inflow → the transfer's clearing account,
 * posted; submitted: one pending entry moves clearing → developer fee and the rest to the
 * destination (the application's wallet, or a payout), through the exchange when the currencies
 * differ; processed: that entry is posted; returned: it is voided, then the funds go back to the
 * sender (refunded). Undeliverable and error hold the funds in clearing, for an operator
 * (retryHeldTransfer, refundHeldTransfer, releaseHeldTransfer).
 *
 * Money out (external_bank, external_stablecoin) and conversions: at creation one pending entry
 * reserves amount + fee on the wallet (so no wallet is spent twice) → fee, exchange and payout (a
 * conversion's payout is the same wallet's other currency); processed posts it; returned,
 * undeliverable and error void it, so the funds are the wallet's again.
 */

export type TransferContext = DrainContext

function shardOf(id: string, context: TransferContext): number {
  return hotShardOf(id, context.hotAccountShards)
}

function worldAccount(context: TransferContext, row: TransferRow, currency: Currency, what: string): AccountKey {
  return { environment: row.environment as LedgerEnvironment, appId: row.app_id, kind: 'world', currency, reference: `${what}#${shardOf(row.id, context)}` }
}

function clearingAccount(row: TransferRow): AccountKey {
  return { environment: row.environment as LedgerEnvironment, appId: row.app_id, kind: 'clearing', currency: row.currency as Currency, reference: `transfer:${row.id}` }
}

function feeAccount(context: TransferContext, row: TransferRow): AccountKey {
  return { environment: row.environment as LedgerEnvironment, appId: row.app_id, kind: 'developer_fee', currency: row.currency as Currency, reference: `fee#${shardOf(row.id, context)}` }
}

export function familyOf(kind: string): TransferFamily {
  return (PAYMENT_INTENT_KINDS as readonly string[]).includes(kind) ? 'payment_intent' : 'transfer'
}

const eventOf = (row: TransferRow, action: 'created' | 'updated'): `${string}.${string}` => `${familyOf(row.kind)}.${action}`


const transferFailureOf = (row: TransferRow) => (row.amount === null ? undefined : sandboxFailureOf(row.environment, BigInt(row.amount), row.currency as Currency))

/** The message of a refused reservation: what the wallet has and what the transfer needs. */
function insufficient(error: InsufficientFunds, currency: Currency): Conflict {
  return new Conflict(
    `Insufficient funds: the wallet has ${formatAmount(error.available, currency)} ${currency.toUpperCase()} available and this transfer needs ${formatAmount(error.needed, currency)}`,
  )
}

export interface NewTransfer {
  environment: LedgerEnvironment
  appId: string
  kind: TransferKind
  /** the application's wallet the money arrives in or leaves */
  wallet: WalletRow | undefined
  currency: Currency
  /** null: flexible, the amount is what arrives */
  amount: bigint | null
  developerFee: bigint
  destinationCurrency: Currency
  source: Endpoint
  /** `bridge_wallet_id` set: the money ends in that wallet of the application; otherwise it is paid out on `payment_rail` */
  destination: Endpoint
  /** money in: how the sender pays */
  instructions?: Omit<DepositInstructions, 'amount' | 'currency' | 'payment_rail'> | undefined
  customer?: CustomerDetails | undefined
}

/**
 * The deposit instructions of money asked for: live money on an EVM chain is paid to a receiving
 * address of its own, derived for this transfer in its transaction (src/chains/receiving.ts), so
 * the chain watcher credits it; refused when live receiving on that chain and token is off. The
 * sandbox keeps its made-up address, and money by bank its bank details.
 */
async function liveInstructions(tx: Transaction, context: TransferContext, spec: NewTransfer, id: string, nowMs: number): Promise<NewTransfer['instructions']> {
  const chain = spec.source.payment_rail
  if (spec.environment !== 'live' || !(EVM_CHAINS as readonly string[]).includes(chain)) return spec.instructions
  const currency = spec.currency === 'usdc' || spec.currency === 'eurc' ? spec.currency : undefined
  const receiving = context.receiving
  const off = receiving === undefined ? `live deposits on ${chain} are off` : receiving.offReason(chain, currency ?? spec.currency)
  if (receiving === undefined || off !== undefined || currency === undefined) throw new InvalidRequest(`${off ?? `live deposits of ${spec.currency} on ${chain} are off`}: live money on ${chain} can't be asked for`)
  const address = await receiving.allocate(tx.db, chain, { appId: spec.appId, ownerType: 'transfer', ownerId: id, currency }, nowMs)
  return { ...spec.instructions, to_address: address }
}

/**
 * Records a new transfer in the caller's transaction and emits its `.created` event. Money out
 * and conversions reserve their funds at once (409 when the wallet does not hold them); a
 * conversion at a rate that is not fresh is refused (503), not guessed.
 */
export async function createTransfer(tx: Transaction, context: TransferContext, spec: NewTransfer): Promise<Transfer> {
  const nowMs = context.now()
  const now = isoOf(nowMs)
  const inbound = spec.instructions !== undefined
  const id = newId()
  const instructions = inbound ? await liveInstructions(tx, context, spec, id, nowMs) : spec.instructions
  const row: TransferRow = {
    id,
    environment: spec.environment,
    app_id: spec.appId,
    kind: spec.kind,
    state: inbound ? 'awaiting_funds' : 'funds_received',
    wallet_id: spec.wallet?.id ?? null,
    currency: spec.currency,
    amount: spec.amount === null ? null : spec.amount.toString(),
    developer_fee: spec.developerFee.toString(),
    destination_currency: spec.destinationCurrency,
    source: JSON.stringify(spec.source),
    destination: JSON.stringify(spec.destination),
    deposit_instructions: inbound
      ? JSON.stringify({
          payment_rail: spec.source.payment_rail,
          currency: spec.currency,
          amount: spec.amount === null ? null : formatAmount(spec.amount, spec.currency),
          ...instructions,
        })
      : null,
    customer: spec.customer === undefined ? null : JSON.stringify(spec.customer),
    exchange_rate: null,
    converted_amount: null,
    destination_tx_hash: null,
    refund_tx_hash: null,
    return_reason: null,
    pending_entry_id: null,
    next_step_at: inbound || !movesOn(spec.environment, spec.destination, spec.destinationCurrency, context) ? null : isoOf(nowMs + stepDelayMs(spec.destination.payment_rail, context.timings)),
    created_at: now,
    updated_at: now,
  }
  const entries: string[] = []
  if (!inbound) {
    if (spec.wallet === undefined || spec.amount === null) throw new Error('a transfer out names its wallet and amount')
    const rate = await rateFor(context, tx, row, spec.currency, spec.destinationCurrency)
    const converted = convert(spec.amount, spec.currency, spec.destinationCurrency, rate)
    if (converted <= 0n) throw new InvalidRequest(`amount converts to less than the smallest unit of ${spec.destinationCurrency}`)
    row.exchange_rate = rate
    row.converted_amount = converted.toString()
    const payout = spec.destination.bridge_wallet_id !== undefined ? walletAccountKey(spec.wallet, spec.destinationCurrency) : worldAccount(context, row, spec.destinationCurrency, `payout:${spec.destination.payment_rail}`)
    const moves = [{ account: walletAccountKey(spec.wallet, spec.currency), direction: 'debit' as const, amount: spec.amount + spec.developerFee }, ...routeMoves(context, row, spec.amount, converted, payout)]
    if (spec.developerFee > 0n) moves.push({ account: feeAccount(context, row), direction: 'credit', amount: spec.developerFee })
    try {
      row.pending_entry_id = await recordMoves(tx, row, moves, 'pending')
    } catch (error) {
      if (error instanceof InsufficientFunds) throw insufficient(error, spec.currency)
      throw error
    }
    entries.push('pending')
  }
  await new TransfersRepository(tx.db).insert(row)
  const transfer = toTransfer(row)
  await tx.events.emit(row.app_id, eventOf(row, 'created'), transfer)
  moneyActivity.countAfterCommit(tx.unit, { transferState: row.state, entries })
  return transfer
}

/** The buy rate from one currency to another now (1 between a fiat and its stablecoin); 503 without a fresh one. */
async function rateFor(context: TransferContext, tx: Transaction, row: TransferRow, from: Currency, to: Currency): Promise<string> {
  if (rateCurrencyOf(from) === rateCurrencyOf(to)) return '1'
  return (await context.rates.current(tx.db, row.environment as LedgerEnvironment, rateCurrencyOf(from), rateCurrencyOf(to))).buy
}

interface Move {
  account: AccountKey
  direction: Posting['direction']
  amount: bigint
}

/** `amount` of the transfer's currency to `payout` as `converted` of its own, through the exchange when the two differ. */
function routeMoves(context: TransferContext, row: TransferRow, amount: bigint, converted: bigint, payout: AccountKey): Move[] {
  const from = row.currency as Currency
  if (from === payout.currency) return [{ account: payout, direction: 'credit', amount }]
  return [
    { account: worldAccount(context, row, from, 'exchange'), direction: 'credit', amount },
    { account: worldAccount(context, row, payout.currency, 'exchange'), direction: 'debit', amount: converted },
    { account: payout, direction: 'credit', amount: converted },
  ]
}

async function recordMoves(tx: Transaction, row: TransferRow, moves: readonly Move[], status: 'pending' | 'posted'): Promise<string> {
  const ledger = new LedgerRepository(tx.db)
  const ids = await ledger.accounts(moves.map((move) => move.account))
  const postings = moves.map((move, i): Posting => ({ accountId: ids[i] as string, direction: move.direction, amount: move.amount }))
  return ledger.record({ environment: row.environment as LedgerEnvironment, appId: row.app_id, reasonType: familyOf(row.kind), reasonId: row.id, status, postings })
}

type Changes = Partial<Omit<TransferRow, 'id'>>

async function applyChanges(tx: Transaction, row: TransferRow, changes: Changes, nowMs: number, entries: string[]): Promise<Transfer> {
  const updated: TransferRow = { ...row, ...changes, updated_at: isoOf(nowMs) }
  await new TransfersRepository(tx.db).update(row.id, { ...changes, updated_at: updated.updated_at })
  const transfer = toTransfer(updated)
  const entered = updated.state !== row.state ? updated.state : undefined
  if (entered !== undefined) await tx.events.emit(row.app_id, eventOf(row, 'updated'), transfer)
  moneyActivity.countAfterCommit(tx.unit, { ...(entered === undefined ? {} : { transferState: entered }), entries })
  return transfer
}

/**
 * The awaited funds arrive (the sandbox's simulate_funds, the CLI, a checkout page's sandbox
 * button): `amount` (undefined: the transfer's own) is recorded in clearing and the transfer moves
 * on. 409 unless it is awaiting funds; 400 for a flexible transfer without an amount or a fixed
 * one with another amount. The arrival is published (`transfer.funds_arrived`) before it is
 * recorded: its subscribers act in this transaction (a checkout's payment intent pays its invoice
 * or payment link), and a refusal of theirs means the funds do not arrive.
 */
export async function receiveFunds(
  tx: Transaction,
  context: TransferContext,
  family: TransferFamily,
  environment: LedgerEnvironment,
  appId: string,
  id: string,
  amount: bigint | undefined,
): Promise<Transfer> {
  const row = await new TransfersRepository(tx.db).lock(environment, appId, family, id)
  if (row === undefined) throw new NotFound(family === 'transfer' ? 'Transfer not found' : 'Payment intent not found')
  if (row.state !== 'awaiting_funds') throw new Conflict(`Funds can only arrive while awaiting funds; this one is ${row.state}`)
  const currency = row.currency as Currency
  let received: bigint
  if (row.amount === null) {
    if (amount === undefined) throw new InvalidRequest('amount is required: this one has a flexible amount')
    received = amount
  } else {
    received = BigInt(row.amount)
    if (amount !== undefined && amount !== received) throw new InvalidRequest(`amount must be ${formatAmount(received, currency)}, the amount awaited`)
  }
  if (BigInt(row.developer_fee) >= received) throw new InvalidRequest(`amount must be greater than the developer fee of ${formatAmount(BigInt(row.developer_fee), currency)}`)
  const nowMs = context.now()
  await tx.publish({ type: 'transfer.funds_arrived', family, transferId: row.id, appId, environment, amount: received, at: isoOf(nowMs) })
  const withAmount: TransferRow = { ...row, amount: received.toString() }
  const source = JSON.parse(row.source) as Endpoint
  await recordMoves(
    tx,
    withAmount,
    [
      { account: worldAccount(context, withAmount, currency, `inflow:${source.payment_rail}`), direction: 'debit', amount: received },
      { account: clearingAccount(withAmount), direction: 'credit', amount: received },
    ],
    'posted',
  )
  const destination = JSON.parse(row.destination) as Endpoint
  const nextStep = movesOn(row.environment, destination, row.destination_currency, context) ? isoOf(nowMs + stepDelayMs(destination.payment_rail, context.timings)) : null
  return applyChanges(tx, row, { state: 'funds_received', amount: received.toString(), next_step_at: nextStep }, nowMs, ['posted'])
}

/**
 * Whether a transfer with funds is scheduled: always in the sandbox; in live when it goes into one
 * of the application's wallets, or out to an address on a chain whose payouts the platform sends.
 * Any other live one waits in funds_received for a payout sender (docs/chains.md#what-waits).
 */
function movesOn(environment: string, destination: Endpoint, currency: string, context: TransferContext): boolean {
  if (!awaitsPayoutSender(environment, destination)) return true
  return destination.to_address !== undefined && context.payouts !== undefined && context.payouts.offReason(destination.payment_rail, currency) === undefined
}

/**
 * A live transfer's payout on chain moved (the chain's sender): submitted with its transaction,
 * processed once confirmed (the pending entry posted), or in error once it reverted or was
 * refused (the entry voided: the funds are in clearing again, for an operator).
 */
export async function followLivePayout(tx: Transaction, context: TransferContext, event: ChainPayoutUpdated): Promise<void> {
  const transfers = new TransfersRepository(tx.db)
  const row = (await transfers.lock(event.environment, event.appId, 'payment_intent', event.ownerId)) ?? (await transfers.lock(event.environment, event.appId, 'transfer', event.ownerId))
  if (row === undefined) throw new NotFound('Transfer not found')
  const ledger = new LedgerRepository(tx.db)
  const nowMs = Date.parse(event.at)
  if (event.status === 'submitted' && row.state === 'funds_received') {
    await applyChanges(tx, row, { state: 'payment_submitted', destination_tx_hash: event.txHash ?? null, next_step_at: null }, nowMs, [])
  } else if (event.status === 'confirmed' && (row.state === 'funds_received' || row.state === 'payment_submitted')) {
    if (row.pending_entry_id !== null) await ledger.post(row.pending_entry_id)
    await applyChanges(tx, row, { state: 'payment_processed', destination_tx_hash: event.txHash ?? null, next_step_at: null }, nowMs, ['posted'])
  } else if (event.status === 'failed' && (row.state === 'funds_received' || row.state === 'payment_submitted')) {
    if (row.pending_entry_id !== null) await ledger.void(row.pending_entry_id)
    // Money out's reservation voided is the wallet's again; money in's is back in clearing, for an operator.
    const after = isInbound(row) ? 'it needs an operator' : 'the funds are back in the wallet'
    const reason = `the payout failed on chain: ${event.reason ?? 'reverted'}; ${after}`
    await applyChanges(tx, row, { state: 'error', destination_tx_hash: event.txHash ?? null, return_reason: reason, next_step_at: null }, nowMs, ['voided'])
  }
}

export async function cancelTransfer(tx: Transaction, context: TransferContext, family: TransferFamily, environment: LedgerEnvironment, appId: string, id: string): Promise<Transfer> {
  const row = await new TransfersRepository(tx.db).lock(environment, appId, family, id)
  if (row === undefined) throw new NotFound(family === 'transfer' ? 'Transfer not found' : 'Payment intent not found')
  if (row.state !== 'awaiting_funds') throw new Conflict(`Only a transfer awaiting funds can be canceled; this one is ${row.state}`)
  return applyChanges(tx, row, { state: 'canceled', return_reason: 'canceled before the funds arrived', next_step_at: null }, context.now(), [])
}

/** The states whose funds stay in a transfer's clearing account until an operator acts: money in only (money out's are the wallet's again). */
export const HELD_TRANSFER_STATES: readonly TransferState[] = ['error', 'undeliverable', 'returned']

/** Whether the transfer's funds wait in clearing for an operator: money in, in a held state, with no step scheduled. */
export function isHeldTransfer(row: Pick<TransferRow, 'state' | 'next_step_at' | 'deposit_instructions'>): boolean {
  return isInbound(row) && HELD_TRANSFER_STATES.includes(row.state as TransferState) && row.next_step_at === null
}

/** What an operator's action did to a held transfer: the transfer as it is now, and the ledger entry it wrote. */
export interface HeldTransferOutcome {
  fromState: TransferState
  transfer: Transfer
  entryId: string | undefined
  amount: bigint
  currency: Currency
}

/** The held transfer or payment intent `id` of the application, locked: 404 unknown (another application's too), 409 not held. */
async function lockHeld(tx: Transaction, environment: LedgerEnvironment, appId: string, id: string): Promise<TransferRow> {
  const transfers = new TransfersRepository(tx.db)
  const row = (await transfers.lock(environment, appId, 'transfer', id)) ?? (await transfers.lock(environment, appId, 'payment_intent', id))
  if (row === undefined) throw new NotFound('Transfer not found')
  if (!isHeldTransfer(row)) throw new Conflict(`This transfer is ${row.state}${row.next_step_at === null ? '' : ' and moving on'}: its funds are not held for an operator`)
  return row
}

async function operatorOutcome(tx: Transaction, row: TransferRow, changes: Changes, nowMs: number, entries: string[], entryId: string | undefined): Promise<HeldTransferOutcome> {
  const transfer = await applyChanges(tx, row, changes, nowMs, entries)
  return { fromState: row.state as TransferState, transfer, entryId, amount: BigInt(row.amount ?? '0'), currency: row.currency as Currency }
}

/**
 * An operator retries money in that ended in error: it is submitted again at once (its pending
 * entry reserves the delivery), the sandbox's forced failure not forced again; the scheduler takes
 * it on from there. 409 unless it is in error.
 */
export async function retryHeldTransfer(tx: Transaction, context: TransferContext, environment: LedgerEnvironment, appId: string, id: string): Promise<HeldTransferOutcome> {
  const row = await lockHeld(tx, environment, appId, id)
  if (row.state !== 'error') throw new Conflict(`Only a transfer in error can be retried; this one is ${row.state}`)
  const destination = JSON.parse(row.destination) as Endpoint
  if (environment === 'live' && awaitsPayoutSender(environment, destination)) {
    const refusal = context.payouts === undefined ? 'live payouts are not sent by this process' : context.payouts.offReason(destination.payment_rail, row.destination_currency)
    if (refusal !== undefined) throw new Conflict(`The transfer can't be retried: ${refusal}`)
  }
  const nowMs = context.now()
  const step = new TransferStep(tx, context, { ...row, state: 'funds_received' }, nowMs, true)
  const changes = (await step.submit()) ?? {}
  return operatorOutcome(tx, row, { state: 'funds_received', return_reason: null, ...changes }, nowMs, step.entries, changes.pending_entry_id ?? undefined)
}

/**
 * An operator sends held money in back to its sender: on a chain, to `returnAddress` (the
 * source's from_address when none is given; one of the two is required), posted from the
 * transfer's clearing account to the rail's outflow, as the scheduler's refund is. Live refunds of
 * transfers are not sent by the platform yet: 409.
 */
export async function refundHeldTransfer(tx: Transaction, context: TransferContext, environment: LedgerEnvironment, appId: string, id: string, returnAddress: string | undefined): Promise<HeldTransferOutcome & { returnAddress: string | undefined }> {
  const row = await lockHeld(tx, environment, appId, id)
  const source = JSON.parse(row.source) as Endpoint
  let to: string | undefined
  if (CHAIN_RAILS.has(source.payment_rail)) {
    to = returnAddress ?? source.from_address
    if (to === undefined) throw new InvalidRequest("return_address is required: the transfer's source has no from_address")
    const chain = source.payment_rail as Chain
    if (!(CHAINS as readonly string[]).includes(chain) || chain === 'stellar') throw new InvalidRequest(`return_address is not supported on ${source.payment_rail}`)
    if (!isValidChainAddress(chain, to)) throw new InvalidRequest(`return_address must be a valid ${chain} address (${describeAddressFormat(chain)})`)
  } else if (returnAddress !== undefined) {
    throw new InvalidRequest(`return_address: money in by ${source.payment_rail} goes back by its rail, to the account it came from`)
  }
  if (environment === 'live') throw new Conflict("A live transfer's refund is not sent by the platform yet: release it to a wallet, or refund it by hand and release it")
  const nowMs = context.now()
  const amount = BigInt(row.amount ?? '0')
  const entryId = await recordMoves(
    tx,
    row,
    [
      { account: clearingAccount(row), direction: 'debit', amount },
      { account: worldAccount(context, row, row.currency as Currency, `refund:${source.payment_rail}`), direction: 'credit', amount },
    ],
    'posted',
  )
  const changes: Changes = { state: 'refunded', next_step_at: null }
  if (CHAIN_RAILS.has(source.payment_rail)) changes.refund_tx_hash = transactionHash(source.payment_rail)
  return { ...(await operatorOutcome(tx, row, changes, nowMs, ['posted'], entryId)), returnAddress: to }
}

/**
 * An operator releases held money in into one of the application's wallets: the whole amount, no
 * developer fee, posted from the transfer's clearing account to the wallet's balance (a fiat as its
 * stablecoin, one to one). 404 for a wallet not of the application and environment.
 */
export async function releaseHeldTransfer(tx: Transaction, context: TransferContext, environment: LedgerEnvironment, appId: string, id: string, walletId: string): Promise<HeldTransferOutcome & { walletId: string }> {
  const row = await lockHeld(tx, environment, appId, id)
  const wallet = await findWallet(tx.db, environment, appId, walletId)
  if (wallet === undefined) throw new NotFound('Wallet not found')
  const from = row.currency as Currency
  const to: Currency | undefined = from === 'usd' ? 'usdc' : from === 'eur' ? 'eurc' : (WALLET_CURRENCIES as readonly string[]).includes(from) ? from : undefined
  if (to === undefined) throw new Conflict(`A wallet cannot hold ${from}: the transfer can be refunded, not released`)
  const amount = BigInt(row.amount ?? '0')
  const converted = convert(amount, from, to, '1')
  const entryId = await recordMoves(tx, row, [{ account: clearingAccount(row), direction: 'debit', amount }, ...routeMoves(context, row, amount, converted, walletAccountKey(wallet, to))], 'posted')
  const nowMs = context.now()
  return { ...(await operatorOutcome(tx, row, { state: 'released', return_reason: `released to wallet ${wallet.id} by an operator`, next_step_at: null }, nowMs, ['posted'], entryId)), walletId: wallet.id }
}

/** The application's transfers and payment intents whose funds are held for an operator, oldest first. */
export async function heldTransfers(db: Db, environment: LedgerEnvironment, appId: string): Promise<Transfer[]> {
  return (await new TransfersRepository(db).stoppedInbound(environment, appId, HELD_TRANSFER_STATES)).map(toTransfer)
}

/** Moves the transfer `id` one step on, if it is due and no other process holds it; false when there was nothing to do. */
export async function advanceTransfer(tx: Transaction, context: TransferContext, id: string): Promise<boolean> {
  const nowMs = context.now()
  const row = await new TransfersRepository(tx.db).lockDue(id, isoOf(nowMs))
  if (row === undefined) return false
  const step = new TransferStep(tx, context, row, nowMs)
  const changes = await step.run()
  if (changes !== undefined) await applyChanges(tx, row, changes, nowMs, step.entries)
  return true
}

class TransferStep {
  readonly entries: string[] = []
  private readonly ledger: LedgerRepository

  constructor(
    private readonly tx: Transaction,
    private readonly context: TransferContext,
    private readonly row: TransferRow,
    private readonly nowMs: number,
    /** an operator's retry: the sandbox's forced failure is not forced again */
    private readonly retried = false,
  ) {
    this.ledger = new LedgerRepository(tx.db)
  }

  private get destination(): Endpoint {
    return JSON.parse(this.row.destination) as Endpoint
  }

  private nextStep(): string {
    return isoOf(this.nowMs + stepDelayMs(this.destination.payment_rail, this.context.timings))
  }

  async run(): Promise<Changes | undefined> {
    switch (this.row.state as TransferState) {
      case 'funds_received':
        return this.submit()
      case 'payment_submitted':
        return transferFailureOf(this.row) === 'returned' ? this.returned() : this.processed()
      case 'returned':
        return this.refund()
      default:
        return { next_step_at: null }
    }
  }

  /** Releases a transfer out's reservation: the funds are the wallet's again. */
  private async release(): Promise<void> {
    if (this.row.pending_entry_id === null) return
    await this.ledger.void(this.row.pending_entry_id)
    this.entries.push('voided')
  }

  /** Also an operator's retry of a transfer in error: submitted again, now. */
  async submit(): Promise<Changes | undefined> {
    const failure = this.retried ? undefined : transferFailureOf(this.row)
    if (failure === 'undeliverable' || failure === 'error') {
      if (!isInbound(this.row)) await this.release()
      return { state: failure, return_reason: failure === 'error' ? 'sandbox: the payment could not be made' : 'sandbox: the destination could not receive the payment', next_step_at: null }
    }
    if (!isInbound(this.row)) {
      if (!awaitsPayoutSender(this.row.environment, this.destination)) return { state: 'payment_submitted', next_step_at: this.nextStep() }
      // Live on chain: the sender sends the reserved payout; the transfer moves on with it (followLivePayout).
      await this.requestPayout(this.destination, this.row.destination_currency as Currency, BigInt(this.row.converted_amount ?? '0'))
      return { next_step_at: null }
    }
    const from = this.row.currency as Currency
    const to = this.row.destination_currency as Currency
    let rate: string
    try {
      rate = await rateFor(this.context, this.tx, this.row, from, to)
    } catch (error) {
      // No fresh rate: wait for one rather than guess.
      if (error instanceof RateUnavailable) return { next_step_at: isoOf(this.nowMs + RATE_RETRY_MS) }
      throw error
    }
    const amount = BigInt(this.row.amount ?? '0')
    const fee = BigInt(this.row.developer_fee)
    const converted = convert(amount - fee, from, to, rate)
    // Nothing can be delivered: the funds go back to their sender (the refund step).
    if (converted <= 0n) return { state: 'returned', return_reason: `the amount after fees converts to less than the smallest unit of ${to}`, next_step_at: this.nextStep() }
    const destination = this.destination
    const wallet = destination.bridge_wallet_id === undefined ? undefined : await findWallet(this.tx.db, this.row.environment as LedgerEnvironment, this.row.app_id, destination.bridge_wallet_id)
    const payout = wallet !== undefined ? walletAccountKey(wallet, to) : worldAccount(this.context, this.row, to, `payout:${destination.payment_rail}`)
    const moves: Move[] = [{ account: clearingAccount(this.row), direction: 'debit', amount }, ...routeMoves(this.context, this.row, amount - fee, converted, payout)]
    if (fee > 0n) moves.push({ account: feeAccount(this.context, this.row), direction: 'credit', amount: fee })
    const entryId = await recordMoves(this.tx, this.row, moves, 'pending')
    this.entries.push('pending')
    if (wallet === undefined && awaitsPayoutSender(this.row.environment, destination)) {
      // Live on chain: the sender sends it; the transfer moves on with the payout (followLivePayout).
      await this.requestPayout(destination, to, converted)
      return { exchange_rate: rate, converted_amount: converted.toString(), pending_entry_id: entryId, next_step_at: null }
    }
    return { state: 'payment_submitted', exchange_rate: rate, converted_amount: converted.toString(), pending_entry_id: entryId, next_step_at: this.nextStep() }
  }

  /** Queues the transfer's live payout with the chain's sender, in this step's transaction. */
  private async requestPayout(destination: Endpoint, currency: Currency, amount: bigint): Promise<void> {
    const payouts = this.context.payouts
    if (payouts === undefined || destination.to_address === undefined) throw new Error(`transfer ${this.row.id}: a live payout was scheduled with no sender for it`)
    await payouts.request(
      this.tx.db,
      { chain: destination.payment_rail, environment: 'live', appId: this.row.app_id, ownerType: 'transfer', ownerId: this.row.id, currency: currency as 'usdc' | 'eurc', toAddress: destination.to_address, amount },
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
    if (CHAIN_RAILS.has(rail)) changes.destination_tx_hash = transactionHash(rail)
    else if (bankReference !== undefined) changes.destination = JSON.stringify({ ...destination, ...bankReference } satisfies Endpoint)
    return changes
  }

  private async returned(): Promise<Changes> {
    if (this.row.pending_entry_id !== null) {
      await this.ledger.void(this.row.pending_entry_id)
      this.entries.push('voided')
    }
    return { state: 'returned', return_reason: 'sandbox: the receiving institution returned the payment', next_step_at: this.nextStep() }
  }

  /** Money in goes back to its sender; money out is already back in its wallet (the reservation was voided). */
  private async refund(): Promise<Changes> {
    if (!isInbound(this.row)) return { state: 'refunded', next_step_at: null }
    const amount = BigInt(this.row.amount ?? '0')
    const currency = this.row.currency as Currency
    const source = JSON.parse(this.row.source) as Endpoint
    await recordMoves(
      this.tx,
      this.row,
      [
        { account: clearingAccount(this.row), direction: 'debit', amount },
        { account: worldAccount(this.context, this.row, currency, `refund:${source.payment_rail}`), direction: 'credit', amount },
      ],
      'posted',
    )
    this.entries.push('posted')
    const changes: Changes = { state: 'refunded', next_step_at: null }
    if (CHAIN_RAILS.has(source.payment_rail)) changes.refund_tx_hash = transactionHash(source.payment_rail)
    return changes
  }
}
