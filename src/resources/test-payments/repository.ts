import { randomBytes } from 'node:crypto'
import type { Selectable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { Recent } from '../../db/newest-first-page.js'
import type { TestPaymentsTable } from './tables.js'
import { nowIso } from '../../db/time.js'

export type TestPaymentRow = Selectable<TestPaymentsTable>

/** A new id in the published client's style: the prefix and 96 random bits in hex. */
export function newPaymentId(prefix: 'pay' | 'ref'): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`
}

export interface NewTestPayment {
  id: string
  /** integer of the currency's minor unit */
  amount: bigint
  currency: string
  description: string
  customerId: string | null
  walletId: string
  entryId: string
}

/** Test payments of one application; every query names the application. */
export class TestPaymentsRepository {
  constructor(private readonly db: Db) {}

  async create(appId: string, input: NewTestPayment): Promise<TestPaymentRow> {
    const now = nowIso()
    const row: TestPaymentRow = {
      id: input.id,
      app_id: appId,
      amount: input.amount.toString(),
      currency: input.currency,
      description: input.description,
      customer_id: input.customerId,
      wallet_id: input.walletId,
      entry_id: input.entryId,
      refund_id: null,
      refund_entry_id: null,
      refunded_at: null,
      created_at: now,
      updated_at: now,
    }
    await this.db.insertInto('test_payments').values(row).execute()
    return row
  }

  async find(appId: string, id: string): Promise<TestPaymentRow | undefined> {
    return this.db.selectFrom('test_payments').selectAll().where('app_id', '=', appId).where('id', '=', id.toLowerCase()).executeTakeFirst()
  }

  /**
   * Marks the payment refunded by `refundId` if it is not yet: one conditional update, so of
   * concurrent refunds exactly one gets the row (PostgreSQL: the others wait on its row lock,
   * then find refund_id set; SQLite: write transactions run one at a time). Undefined when the
   * payment is missing or already refunded.
   */
  async claimRefund(appId: string, id: string, refundId: string): Promise<TestPaymentRow | undefined> {
    const now = nowIso()
    return this.db
      .updateTable('test_payments')
      .set({ refund_id: refundId, refunded_at: now, updated_at: now })
      .where('app_id', '=', appId)
      .where('id', '=', id.toLowerCase())
      .where('refund_id', 'is', null)
      .returningAll()
      .executeTakeFirst()
  }

  async setRefundEntry(appId: string, id: string, entryId: string): Promise<void> {
    await this.db.updateTable('test_payments').set({ refund_entry_id: entryId }).where('app_id', '=', appId).where('id', '=', id).execute()
  }

  /** The console's list (sandbox money only): the newest, `succeeded` or `refunded`. */
  recent(appId: string, recent: Recent): Promise<TestPaymentRow[]> {
    let query = this.db.selectFrom('test_payments').selectAll().where('app_id', '=', appId)
    if (recent.state === 'refunded') query = query.where('refund_id', 'is not', null)
    else if (recent.state === 'succeeded') query = query.where('refund_id', 'is', null)
    else if (recent.state !== undefined) return Promise.resolve([])
    if (recent.createdFrom !== undefined) query = query.where('created_at', '>=', recent.createdFrom)
    if (recent.createdBefore !== undefined) query = query.where('created_at', '<', recent.createdBefore)
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(recent.take).execute()
  }
}
