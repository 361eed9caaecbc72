import type { Selectable } from 'kysely'
import type { Db } from '../../db/database.js'
import { isUniqueViolation } from '../../db/errors.js'
import { isoOf, newId } from '../../db/time.js'
import { Conflict, InvalidRequest } from '../../errors.js'
import type { Transaction } from '../../events/transact.js'
import { type Currency, formatAmount } from '../../ledger/amount.js'
import { livemodeOf } from '../../ledger/environment.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import type { MoneyContext } from '../../ledger/money-context.js'
import { heldDrains, refundHeldDrain, releaseHeldDrain, retryHeldDrain } from '../drains/public.js'
import { heldTransfers, refundHeldTransfer, releaseHeldTransfer, retryHeldTransfer } from '../transfers/public.js'
import type { HeldAction, HeldActionName, HeldItem, HeldKind } from './schemas.js'
import type { HeldActionsTable } from './tables.js'

/**
 * An operator's action on held money: the drain's or the transfer's own step (src/resources/drains/,
 * src/resources/transfers/ write its ledger entry and move its state) and the audit record of who,
 * when and why, in one transaction. The held row is locked first, so of two operators acting on
 * one at once the second finds it no longer held (409); an idempotency key already used answers
 * the first action again, and nothing more is done.
 */

export interface HeldRequest {
  environment: LedgerEnvironment
  appId: string
  kind: HeldKind
  id: string
  action: HeldActionName
  by: string
  reason: string
  idempotencyKey?: string | undefined
  /** refund: where the funds go back, when none is known */
  returnAddress?: string | undefined
  /** release: the application's wallet */
  walletId?: string | undefined
}

type HeldActionRow = Selectable<HeldActionsTable>

export function toHeldAction(row: HeldActionRow): HeldAction {
  const action: HeldAction = {
    id: row.id,
    target_type: row.target_type as HeldKind,
    target_id: row.target_id,
    action: row.action as HeldActionName,
    from_state: row.from_state,
    to_state: row.to_state,
    amount: formatAmount(BigInt(row.amount), row.currency as Currency),
    currency: row.currency,
    by: row.operator,
    reason: row.reason,
    livemode: livemodeOf(row.environment),
    created_at: row.created_at,
  }
  if (row.entry_id !== null) action.ledger_entry_id = row.entry_id
  if (row.return_address !== null) action.return_address = row.return_address
  if (row.wallet_id !== null) action.wallet_id = row.wallet_id
  return action
}

function text(value: string, field: string, most: number): string {
  const trimmed = value.trim()
  if (trimmed === '' || trimmed.length > most) throw new InvalidRequest(`${field} must be 1 to ${most} characters`)
  return trimmed
}

interface Outcome {
  fromState: string
  toState: string
  entryId: string | undefined
  amount: bigint
  currency: Currency
  returnAddress?: string | undefined
  walletId?: string | undefined
}

async function act(tx: Transaction, context: MoneyContext, request: HeldRequest): Promise<Outcome> {
  const { environment, appId, id } = request
  const walletId = () => {
    if (request.walletId === undefined) throw new InvalidRequest('wallet_id is required: the wallet the funds go into')
    return request.walletId
  }
  if (request.kind === 'drain') {
    const done =
      request.action === 'retry'
        ? await retryHeldDrain(tx, context, environment, appId, id)
        : request.action === 'refund'
          ? await refundHeldDrain(tx, context, environment, appId, id, request.returnAddress)
          : await releaseHeldDrain(tx, context, environment, appId, id, walletId())
    return { ...done, toState: done.drain.state }
  }
  const done =
    request.action === 'retry'
      ? await retryHeldTransfer(tx, context, environment, appId, id)
      : request.action === 'refund'
        ? await refundHeldTransfer(tx, context, environment, appId, id, request.returnAddress)
        : await releaseHeldTransfer(tx, context, environment, appId, id, walletId())
  return { ...done, toState: done.transfer.state }
}

/** Carries out the operator's action in the caller's transaction and records it; `replayed` when the idempotency key had already done it. */
export async function actOnHeld(tx: Transaction, context: MoneyContext, request: HeldRequest): Promise<{ action: HeldAction; replayed: boolean }> {
  const by = text(request.by, 'by', 200)
  const reason = text(request.reason, 'reason', 1000)
  const key = request.idempotencyKey
  if (key !== undefined) {
    const earlier = await tx.db.selectFrom('held_actions').selectAll().where('app_id', '=', request.appId).where('environment', '=', request.environment).where('idempotency_key', '=', key).executeTakeFirst()
    if (earlier !== undefined) {
      if (earlier.target_type !== request.kind || earlier.target_id !== request.id.toLowerCase() || earlier.action !== request.action) throw new Conflict('This idempotency key was already used for another action')
      return { action: toHeldAction(earlier), replayed: true }
    }
  }
  const outcome = await act(tx, context, request)
  const row: HeldActionRow = {
    id: newId(),
    environment: request.environment,
    app_id: request.appId,
    target_type: request.kind,
    target_id: request.id.toLowerCase(),
    action: request.action,
    from_state: outcome.fromState,
    to_state: outcome.toState,
    amount: outcome.amount.toString(),
    currency: outcome.currency,
    entry_id: outcome.entryId ?? null,
    return_address: outcome.returnAddress ?? null,
    wallet_id: outcome.walletId ?? null,
    operator: by,
    reason,
    idempotency_key: key ?? null,
    created_at: isoOf(context.now()),
  }
  try {
    await tx.db.insertInto('held_actions').values(row).execute()
  } catch (error) {
    if (isUniqueViolation(error)) throw new Conflict('This idempotency key is being used by another action')
    throw error
  }
  return { action: toHeldAction(row), replayed: false }
}

/** What an operator may do with held funds in `state`: only an error is retried. */
function actionsOf(state: string): HeldActionName[] {
  return state === 'error' ? ['retry', 'refund', 'release'] : ['refund', 'release']
}

/** Everything of the application whose funds are held for an operator in `environment`, longest held first. */
export async function listHeld(db: Db, environment: LedgerEnvironment, appId: string): Promise<HeldItem[]> {
  const items: HeldItem[] = []
  for (const drain of await heldDrains(db, environment, appId)) {
    const item: HeldItem = { type: 'drain', id: drain.id, state: drain.state, amount: drain.amount, currency: drain.currency, actions: actionsOf(drain.state), held_since: drain.updated_at, livemode: drain.livemode }
    if (drain.return_details !== undefined) item.reason = drain.return_details.reason
    items.push(item)
  }
  for (const transfer of await heldTransfers(db, environment, appId)) {
    const item: HeldItem = { type: 'transfer', id: transfer.id, state: transfer.state, amount: transfer.amount ?? '0', currency: transfer.currency, actions: actionsOf(transfer.state), held_since: transfer.updated_at, livemode: transfer.livemode }
    if (transfer.return_reason !== undefined) item.reason = transfer.return_reason
    items.push(item)
  }
  return items.sort((a, b) => (a.held_since < b.held_since ? -1 : a.held_since > b.held_since ? 1 : 0))
}

/** The audit: what operators did to the application's held money in `environment`, newest first. */
export async function listHeldActions(db: Db, environment: LedgerEnvironment, appId: string, limit = 100): Promise<HeldAction[]> {
  const rows = await db.selectFrom('held_actions').selectAll().where('app_id', '=', appId).where('environment', '=', environment).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute()
  return rows.map(toHeldAction)
}
