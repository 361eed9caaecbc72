import type { Selectable, Updateable } from 'kysely'
import { backendOf, type Db } from '../../db/database.js'
import { newestFirstPage, type Page, type Recent } from '../../db/newest-first-page.js'
import { PreparedInsert } from '../../db/prepared.js'
import type { TransfersTable } from './tables.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { PAYMENT_INTENT_KINDS, TRANSFER_KINDS } from './kinds.js'

export type TransferRow = Selectable<TransfersTable>

const INSERT_TRANSFER = new PreparedInsert('transfers')

/** Whether money comes in from outside (it waited for funds, with instructions) rather than leaving a wallet. */
export const isInbound = (row: Pick<TransferRow, 'deposit_instructions'>) => row.deposit_instructions !== null

/** Which rows a list or a read sees: transfers, or payment intents (one table, two resources). */
export type TransferFamily = 'transfer' | 'payment_intent'

export interface TransferFilter {
  state?: string | undefined
  walletId?: string | undefined
}

/** Transfers and payment intents of one application in one environment; every read starts from `owned`. */
export class TransfersRepository {
  constructor(private readonly db: Db) {}

  private owned(environment: LedgerEnvironment, appId: string, family: TransferFamily, db: Db = this.db) {
    const query = db.selectFrom('transfers').where('app_id', '=', appId).where('environment', '=', environment)
    return query.where('kind', 'in', family === 'payment_intent' ? [...PAYMENT_INTENT_KINDS] : [...TRANSFER_KINDS])
  }

  async insert(row: TransferRow): Promise<void> {
    await INSERT_TRANSFER.execute(this.db, row)
  }

  /** A page and the total, read on one snapshot so they agree even while others write. */
  async list(environment: LedgerEnvironment, appId: string, family: TransferFamily, filter: TransferFilter, page: Page): Promise<{ rows: TransferRow[]; total: number }> {
    return newestFirstPage(this.db, (tx) => {
      let query = this.owned(environment, appId, family, tx)
      if (filter.state !== undefined) query = query.where('state', '=', filter.state)
      if (filter.walletId !== undefined) query = query.where('wallet_id', '=', filter.walletId.toLowerCase())
      return query
    }, page)
  }

  find(environment: LedgerEnvironment, appId: string, family: TransferFamily, id: string): Promise<TransferRow | undefined> {
    return this.owned(environment, appId, family).selectAll().where('id', '=', id.toLowerCase()).executeTakeFirst()
  }

  /** The transfer, locked for this transaction (PostgreSQL: a row lock; SQLite: the write lock is held). */
  async lock(environment: LedgerEnvironment, appId: string, family: TransferFamily, id: string): Promise<TransferRow | undefined> {
    const query = this.owned(environment, appId, family).selectAll().where('id', '=', id.toLowerCase())
    return backendOf(this.db) === 'postgres' ? query.forUpdate().executeTakeFirst() : query.executeTakeFirst()
  }

  /** Ids of transfers due to move on at `nowIso`, the longest waiting first. */
  async due(nowIso: string, limit: number): Promise<string[]> {
    const rows = await this.db.selectFrom('transfers').select('id').where('next_step_at', 'is not', null).where('next_step_at', '<=', nowIso).orderBy('next_step_at').limit(limit).execute()
    return rows.map((row) => row.id)
  }

  /** The transfer, if it is still due at `nowIso`, locked; one another instance is advancing is skipped (SKIP LOCKED). */
  async lockDue(id: string, nowIso: string): Promise<TransferRow | undefined> {
    let query = this.db.selectFrom('transfers').selectAll().where('id', '=', id).where('next_step_at', 'is not', null).where('next_step_at', '<=', nowIso)
    if (backendOf(this.db) === 'postgres') query = query.forUpdate().skipLocked()
    return query.executeTakeFirst()
  }

  async update(id: string, changes: Updateable<TransfersTable>): Promise<void> {
    await this.db.updateTable('transfers').set(changes).where('id', '=', id).execute()
  }

  /** The application's money in (transfers and payment intents with deposit instructions) in one of `states` with no step scheduled, longest unchanged first. */
  stoppedInbound(environment: LedgerEnvironment, appId: string, states: readonly string[]): Promise<TransferRow[]> {
    return this.db
      .selectFrom('transfers')
      .selectAll()
      .where('app_id', '=', appId)
      .where('environment', '=', environment)
      .where('state', 'in', [...states])
      .where('next_step_at', 'is', null)
      .where('deposit_instructions', 'is not', null)
      .orderBy('updated_at')
      .orderBy('id')
      .execute()
  }

  /** The console's list: the application's newest transfers or payment intents (`family`) in the environment. */
  recent(environment: LedgerEnvironment, appId: string, family: TransferFamily, recent: Recent): Promise<TransferRow[]> {
    let query = this.owned(environment, appId, family).selectAll()
    if (recent.state !== undefined) query = query.where('state', '=', recent.state)
    if (recent.createdFrom !== undefined) query = query.where('created_at', '>=', recent.createdFrom)
    if (recent.createdBefore !== undefined) query = query.where('created_at', '<', recent.createdBefore)
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(recent.take).execute()
  }
}
