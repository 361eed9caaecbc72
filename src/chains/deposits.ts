import type { Db } from '../db/database.js'
import { DomainError } from '../errors.js'
import type { ChainDepositConfirmed } from '../events/domain-events.js'
import type { Transact, Transaction } from '../events/transact.js'
import { isoOf, newId } from '../db/time.js'
import { LedgerRepository, type LedgerEnvironment } from '../ledger/ledger.js'
import { hotShardOf } from '../ledger/simulated-rails.js'
import type { ChainConfig, ChainToken } from './config.js'
import { toDeposit } from './objects.js'
import { type ChainAddressRow, type ChainDepositRow, ChainsRepository } from './repository.js'
import type { TransferLog } from './rpc.js'

/**
 * A deposit's life, once the watcher has seen its log (docs/chains.md):
 * pending (counting confirmations) → confirmed (credited to what owns the address, in the same
 * transaction) or held (recorded in the ledger, credited to nothing: the owner refused it);
 * pending → removed when a reorg takes its block away, pending again if the log comes back;
 * confirmed or held → reversed when a reorg deeper than the confirmations takes it away after it
 * was credited: an alert, never a silent rewrite of the ledger.
 */

/** What a payer's page shows of a live deposit to one of the application's addresses: the latest still on the chain, or undefined when none was seen. */
export function latestDepositTo(db: Db, appId: string, chain: string, address: string): Promise<ChainDepositRow | undefined> {
  return new ChainsRepository(db).latestDepositTo(appId, 'live', chain, address)
}

/** The token's ledger currency on this chain, or undefined for a contract the chain does not accept. */
export function currencyOf(config: ChainConfig, token: string): ChainToken | undefined {
  for (const [currency, contract] of Object.entries(config.tokens)) if (contract === token) return currency as ChainToken
  return undefined
}

/**
 * Records a log to a receiving address seen in a block the watcher read, in its transaction.
 * Exactly once per (chain, transaction, log index): a log read again changes nothing, except one
 * a reorg had taken away, which comes back in its new block.
 */
export async function recordSeen(tx: Transaction, config: ChainConfig, log: TransferLog, address: ChainAddressRow, head: number, now: number): Promise<void> {
  const currency = currencyOf(config, log.token)
  if (currency === undefined) return
  const repository = new ChainsRepository(tx.db)
  const at = isoOf(now)
  const confirmations = Math.max(0, head - log.blockNumber + 1)
  const row: ChainDepositRow = {
    id: newId(),
    chain: config.chain,
    tx_hash: log.txHash,
    log_index: log.logIndex,
    block_number: log.blockNumber,
    block_hash: log.blockHash,
    token: log.token,
    currency,
    from_address: log.from,
    to_address: log.to,
    amount: log.value.toString(),
    environment: address.environment,
    app_id: address.app_id,
    owner_type: address.owner_type,
    owner_id: address.owner_id,
    status: 'pending',
    confirmations,
    reason: null,
    credited_type: null,
    credited_id: null,
    sweep_id: null,
    created_at: at,
    updated_at: at,
  }
  if (await repository.insertDeposit(row)) {
    await tx.events.emit(row.app_id, 'deposit.pending', toDeposit(row, config.confirmations))
    return
  }
  const existing = await repository.findDepositByLog(config.chain, log.txHash, log.logIndex)
  if (existing === undefined || existing.block_hash === log.blockHash) return
  const block = { block_number: log.blockNumber, block_hash: log.blockHash, updated_at: at }
  if (existing.status === 'removed') {
    if (await repository.move(existing.id, 'removed', { ...block, status: 'pending', confirmations, reason: null })) {
      await tx.events.emit(existing.app_id, 'deposit.pending', toDeposit({ ...existing, ...block, status: 'pending', confirmations, reason: null }, config.confirmations))
    }
  } else if (existing.status === 'reorged' || existing.status === 'reversed') {
    // Mined again in the new chain: it is what it was credited as (a reversed one says so in an event).
    const status = existing.credited_type === null ? 'held' : 'confirmed'
    const reason = existing.status === 'reversed' ? `back on the chain in block ${log.blockNumber} after a reorg had taken it away` : existing.reason
    if ((await repository.move(existing.id, existing.status, { ...block, status, reason })) && existing.status === 'reversed') {
      await tx.events.emit(existing.app_id, `deposit.${status}`, toDeposit({ ...existing, ...block, status, reason }, config.confirmations))
    }
  } else {
    await repository.move(existing.id, existing.status as 'pending', block)
  }
}

/** A deposit the owner of its address did not take, and why. */
class Refused extends Error {}

/**
 * Credits a pending deposit that has its confirmations: marks it confirmed and publishes
 * `chain.deposit_confirmed` in one transaction, so the owner's credit and the mark commit together
 * or not at all, once. Refused by the owner (a domain error) or owned by nothing that credits,
 * it is held instead: its amount posted from the chain's inflow to a clearing account of its own.
 * Returns the status it ended in, or undefined when another process had moved it.
 */
export async function confirmDeposit(transact: Transact, config: ChainConfig, depositId: string, now: () => number): Promise<'confirmed' | 'held' | undefined> {
  let refusal: string
  try {
    return await transact(async (tx) => {
      const repository = new ChainsRepository(tx.db)
      const row = await repository.findDeposit(depositId)
      if (row === undefined || row.status !== 'pending') return undefined
      const at = isoOf(now())
      if (!(await repository.move(row.id, 'pending', { status: 'confirmed', confirmations: config.confirmations, updated_at: at }))) return undefined
      if (row.owner_type === 'unassigned' || row.owner_id === null) throw new Refused('the receiving address was not given to a liquidation address yet')
      const event: ChainDepositConfirmed = {
        type: 'chain.deposit_confirmed',
        depositId: row.id,
        chain: row.chain,
        environment: row.environment as LedgerEnvironment,
        appId: row.app_id,
        ownerType: row.owner_type as ChainDepositConfirmed['ownerType'],
        ownerId: row.owner_id,
        currency: row.currency as ChainToken,
        amount: BigInt(row.amount),
        txHash: row.tx_hash,
        fromAddress: row.from_address,
        at,
        credited: undefined,
      }
      await tx.publish(event)
      const credited = event.credited as ChainDepositConfirmed['credited']
      if (credited === undefined) throw new Refused(`nothing credits deposits to a ${row.owner_type}`)
      const confirmed: ChainDepositRow = { ...row, status: 'confirmed', confirmations: config.confirmations, credited_type: credited.type, credited_id: credited.id, updated_at: at }
      await tx.db.updateTable('chain_deposits').set({ credited_type: credited.type, credited_id: credited.id }).where('id', '=', row.id).execute()
      await tx.events.emit(row.app_id, 'deposit.confirmed', toDeposit(confirmed, config.confirmations))
      return 'confirmed' as const
    })
  } catch (error) {
    if (!(error instanceof DomainError) && !(error instanceof Refused)) throw error
    refusal = error.message
  }
  return transact(async (tx) => hold(tx, config, depositId, refusal, now()))
}

async function hold(tx: Transaction, config: ChainConfig, depositId: string, reason: string, nowMs: number): Promise<'held' | undefined> {
  const repository = new ChainsRepository(tx.db)
  const row = await repository.findDeposit(depositId)
  if (row === undefined || row.status !== 'pending') return undefined
  const at = isoOf(nowMs)
  if (!(await repository.move(row.id, 'pending', { status: 'held', reason, confirmations: config.confirmations, updated_at: at }))) return undefined
  const environment = row.environment as LedgerEnvironment
  const ledger = new LedgerRepository(tx.db)
  const [inflow, held] = (await ledger.accounts([
    { environment, appId: row.app_id, kind: 'world', currency: row.currency as ChainToken, reference: `chain:${row.chain}#${hotShardOf(row.id)}` },
    { environment, appId: row.app_id, kind: 'clearing', currency: row.currency as ChainToken, reference: `deposit:${row.id}` },
  ])) as [string, string]
  const amount = BigInt(row.amount)
  await ledger.record({
    environment,
    appId: row.app_id,
    reasonType: 'deposit',
    reasonId: row.id,
    status: 'posted',
    postings: [
      { accountId: inflow, direction: 'debit', amount },
      { accountId: held, direction: 'credit', amount },
    ],
  })
  await tx.events.emit(row.app_id, 'deposit.held', toDeposit({ ...row, status: 'held', reason, confirmations: config.confirmations, updated_at: at }, config.confirmations))
  return 'held'
}

/**
 * The blocks from `fork` up are no longer the chain's: their pending deposits are removed, and
 * their credited ones (confirmed or held) wait, as `reorged`, for the watcher to read the new
 * blocks: a log mined again comes back as it was (recordSeen); one still missing once the
 * watcher has caught up is reversed (reverseMissing). Returns the removed ones.
 */
export async function takeAwayFrom(tx: Transaction, config: ChainConfig, fork: number, head: number, nowMs: number): Promise<ChainDepositRow[]> {
  const repository = new ChainsRepository(tx.db)
  const at = isoOf(nowMs)
  await repository.forgetBlocks(config.chain, 'from', fork)
  const removed: ChainDepositRow[] = []
  for (const row of await repository.depositsFrom(config.chain, fork, ['pending', 'confirmed', 'held'])) {
    if (row.status === 'pending') {
      const reason = `its block ${row.block_number} left the chain in a reorg (head ${head})`
      if (await repository.move(row.id, 'pending', { status: 'removed', reason, updated_at: at })) {
        removed.push(row)
        await tx.events.emit(row.app_id, 'deposit.removed', toDeposit({ ...row, status: 'removed', reason, updated_at: at }, config.confirmations))
      }
    } else {
      await repository.move(row.id, row.status as 'confirmed', { status: 'reorged', updated_at: at })
    }
  }
  return removed
}

/**
 * The credited deposits a reorg took away that the new chain does not hold (the watcher has read
 * it up to its head): each is reversed, with an event, for the watcher's alert. The ledger keeps
 * what was credited: an operator decides (docs/chains.md#reorgs).
 */
export async function reverseMissing(tx: Transaction, config: ChainConfig, nowMs: number): Promise<ChainDepositRow[]> {
  const repository = new ChainsRepository(tx.db)
  const at = isoOf(nowMs)
  const reversed: ChainDepositRow[] = []
  for (const row of await repository.depositsFrom(config.chain, 0, ['reorged'])) {
    const was = row.credited_type === null ? 'held' : 'credited'
    const reason = `its block ${row.block_number} left the chain in a reorg deeper than ${config.confirmations} confirmations, after it was ${was}: the ledger is unchanged; an operator must look (docs/chains.md#reorgs)`
    if (await repository.move(row.id, 'reorged', { status: 'reversed', reason, updated_at: at })) {
      reversed.push(row)
      await tx.events.emit(row.app_id, 'deposit.reversed', toDeposit({ ...row, status: 'reversed', reason, updated_at: at }, config.confirmations))
    }
  }
  return reversed
}
