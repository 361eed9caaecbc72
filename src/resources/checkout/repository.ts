import type { Selectable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { CheckoutPaymentsTable } from './tables.js'

export type CheckoutPaymentRow = Selectable<CheckoutPaymentsTable>

/** A product line as a PRODUCT link's payer bought it, prices in cents of the fiat. */
export interface BoughtItem {
  product_id: string
  name: string
  quantity: number
  unit_price: string
}

export function itemsOf(row: Pick<CheckoutPaymentRow, 'items'>): BoughtItem[] {
  return row.items === null ? [] : (JSON.parse(row.items) as BoughtItem[])
}

/** The payments the hosted checkout started. */
export class CheckoutRepository {
  constructor(private readonly db: Db) {}

  async insert(row: CheckoutPaymentRow): Promise<void> {
    await this.db.insertInto('checkout_payments').values(row).execute()
  }

  async find(transferId: string): Promise<CheckoutPaymentRow | undefined> {
    return this.db.selectFrom('checkout_payments').selectAll().where('transfer_id', '=', transferId.toLowerCase()).executeTakeFirst()
  }

  /** The payment, unless its application is deleted (what it pays is kept for audit, not paid). */
  async findPayable(transferId: string): Promise<CheckoutPaymentRow | undefined> {
    return this.db
      .selectFrom('checkout_payments')
      .selectAll('checkout_payments')
      .where('transfer_id', '=', transferId.toLowerCase())
      .where(({ exists, selectFrom }) => exists(selectFrom('apps').select('apps.id').whereRef('apps.id', '=', 'checkout_payments.app_id').where('apps.deleted_at', 'is', null)))
      .executeTakeFirst()
  }

  /** Marks it paid, in the transaction its funds arrive in (settleCheckoutPayment). */
  async markPaid(transferId: string, now: string): Promise<void> {
    await this.db.updateTable('checkout_payments').set({ state: 'paid', paid_at: now }).where('transfer_id', '=', transferId).where('state', '=', 'awaiting_funds').execute()
  }

  /** The checkout payments among these payment intents (the console marks them). */
  async among(appId: string, transferIds: readonly string[]): Promise<CheckoutPaymentRow[]> {
    if (transferIds.length === 0) return []
    return this.db.selectFrom('checkout_payments').selectAll().where('app_id', '=', appId).where('transfer_id', 'in', transferIds).execute()
  }
}
