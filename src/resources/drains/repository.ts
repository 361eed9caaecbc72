import type { Selectable, Updateable } from 'kysely'
import { backendOf, type Db } from '../../db/database.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { Recent } from '../../db/newest-first-page.js'
import { PreparedInsert } from '../../db/prepared.js'
import type { DrainsTable } from './tables.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { Conflict } from '../../errors.js'

export type DrainRow = Selectable<DrainsTable>

/** Every deposit's drain: its insert built once (PreparedInsert). */
const INSERT_DRAIN = new PreparedInsert('drains')

/** Drains of one application in one environment; every read of the API starts from `owned`. */
export class DrainsRepository {
  constructor(private readonly db: Db) {}

  private owned(environment: LedgerEnvironment, appId: string, customerId: string, liquidationAddressId: string) {
    return this.db
      .selectFrom('drains')
      .selectAll()
      .where('app_id', '=', appId)
      .where('environment', '=', environment)
      .where('customer_id', '=', customerId.toLowerCase())
      .where('liquidation_address_id', '=', liquidationAddressId.toLowerCase())
  }

  /** 409 when the address already received a deposit of this transaction. */
  async insert(row: DrainRow): Promise<void> {
    try {
      await INSERT_DRAIN.execute(this.db, row)
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict('A deposit with this deposit_tx_hash was already received at this liquidation address')
      throw error
    }
  }

  async list(environment: LedgerEnvironment, appId: string, customerId: string, liquidationAddressId: string, page: { skip: number; take: number }): Promise<{ rows: DrainRow[]; total: number }> {
    const rows = await this.owned(environment, appId, customerId, liquidationAddressId).orderBy('created_at', 'desc').orderBy('id', 'desc').offset(page.skip).limit(page.take).execute()
    const counted = await this.db
      .selectFrom('drains')
      .select((eb) => eb.fn.countAll<number | string>().as('total'))
      .where('app_id', '=', appId)
      .where('environment', '=', environment)
      .where('liquidation_address_id', '=', liquidationAddressId.toLowerCase())
      .where('customer_id', '=', customerId.toLowerCase())
      .executeTakeFirst()
    return { rows, total: Number(counted?.total ?? 0) }
  }

  find(environment: LedgerEnvironment, appId: string, customerId: string, liquidationAddressId: string, id: string): Promise<DrainRow | undefined> {
    return this.owned(environment, appId, customerId, liquidationAddressId).where('id', '=', id.toLowerCase()).executeTakeFirst()
  }

  /** Ids of drains due to move on at `nowIso`, the longest waiting first. */
  async due(nowIso: string, limit: number): Promise<string[]> {
    const rows = await this.db.selectFrom('drains').select('id').where('next_step_at', 'is not', null).where('next_step_at', '<=', nowIso).orderBy('next_step_at').limit(limit).execute()
    return rows.map((row) => row.id)
  }

  /**
   * The drain, if it is still due at `nowIso`, locked for this transaction. On PostgreSQL a drain
   * another instance is advancing is skipped (SKIP LOCKED), not waited for; on SQLite the write
   * transaction already holds the database.
   */
  async lockDue(id: string, nowIso: string): Promise<DrainRow | undefined> {
    let query = this.db.selectFrom('drains').selectAll().where('id', '=', id).where('next_step_at', 'is not', null).where('next_step_at', '<=', nowIso)
    if (backendOf(this.db) === 'postgres') query = query.forUpdate().skipLocked()
    return query.executeTakeFirst()
  }

  /** The drain, locked until the transaction ends (PostgreSQL; SQLite's write transaction is the lock). */
  async lock(environment: LedgerEnvironment, appId: string, id: string): Promise<DrainRow | undefined> {
    let query = this.db.selectFrom('drains').selectAll().where('id', '=', id).where('environment', '=', environment).where('app_id', '=', appId)
    if (backendOf(this.db) === 'postgres') query = query.forUpdate()
    return query.executeTakeFirst()
  }

  async update(id: string, changes: Updateable<DrainsTable>): Promise<void> {
    await this.db.updateTable('drains').set(changes).where('id', '=', id).execute()
  }

  /** The console's list: the application's newest drains in the environment, of every customer and address. */
  recent(environment: LedgerEnvironment, appId: string, recent: Recent): Promise<DrainRow[]> {
    let query = this.db.selectFrom('drains').selectAll().where('app_id', '=', appId).where('environment', '=', environment)
    if (recent.state !== undefined) query = query.where('state', '=', recent.state)
    if (recent.createdFrom !== undefined) query = query.where('created_at', '>=', recent.createdFrom)
    if (recent.createdBefore !== undefined) query = query.where('created_at', '<', recent.createdBefore)
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(recent.take).execute()
  }

  /** The application's drains in one of `states` with no step scheduled, longest unchanged first. */
  stopped(environment: LedgerEnvironment, appId: string, states: readonly string[]): Promise<DrainRow[]> {
    return this.db
      .selectFrom('drains')
      .selectAll()
      .where('app_id', '=', appId)
      .where('environment', '=', environment)
      .where('state', 'in', [...states])
      .where('next_step_at', 'is', null)
      .orderBy('updated_at')
      .orderBy('id')
      .execute()
  }

  /** One of the application's drains in the environment, whatever its customer and address. */
  findOfApp(environment: LedgerEnvironment, appId: string, id: string): Promise<DrainRow | undefined> {
    return this.db.selectFrom('drains').selectAll().where('app_id', '=', appId).where('environment', '=', environment).where('id', '=', id.toLowerCase()).executeTakeFirst()
  }
}
