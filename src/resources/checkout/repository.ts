import type { Selectable } from 'kysely'
import { backendOf, type Db } from '../../db/database.js'
import type { CheckoutPaymentsTable, InvoicesTable, PaymentLinksTable } from '../../db/schema.js'

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

/** The payments the hosted checkout started, and the writes that settle them into what they pay. */
export class CheckoutRepository {
  constructor(private readonly db: Db) {}

  async insert(row: CheckoutPaymentRow): Promise<void> {
    await this.db.insertInto('checkout_payments').values(row).execute()
  }

  async find(transferId: string): Promise<CheckoutPaymentRow | undefined> {
    return this.db.selectFrom('checkout_payments').selectAll().where('transfer_id', '=', transferId.toLowerCase()).executeTakeFirst()
  }

  /** Marks it paid; false when it already was (its funds cannot arrive twice, but the row says so too). */
  async markPaid(transferId: string, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('checkout_payments')
      .set({ state: 'paid', paid_at: now })
      .where('transfer_id', '=', transferId)
      .where('state', '=', 'awaiting_funds')
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /** The invoice, held until the transaction ends (PostgreSQL: FOR UPDATE; SQLite's write transactions run one at a time). */
  async lockInvoice(appId: string, invoiceId: string): Promise<Selectable<InvoicesTable> | undefined> {
    let query = this.db.selectFrom('invoices').selectAll().where('app_id', '=', appId).where('id', '=', invoiceId)
    if (backendOf(this.db) === 'postgres') query = query.forUpdate()
    return query.executeTakeFirst()
  }

  async setInvoicePaid(appId: string, invoiceId: string, amountPaid: bigint, status: string, now: string): Promise<Selectable<InvoicesTable>> {
    return this.db
      .updateTable('invoices')
      .set({ amount_paid: amountPaid.toString(), status, updated_at: now })
      .where('app_id', '=', appId)
      .where('id', '=', invoiceId)
      .returningAll()
      .executeTakeFirstOrThrow()
  }

  /**
   * Counts one payment of the link, in one conditional statement: a link limited to maxPayments
   * that has them all is left as it is (undefined), so concurrent payers past the limit all miss,
   * on either backend, without reading the count first.
   */
  async countLinkPayment(appId: string, linkId: string, now: string): Promise<Selectable<PaymentLinksTable> | undefined> {
    return this.db
      .updateTable('payment_links')
      .set((eb) => ({ payments_count: eb('payments_count', '+', 1), updated_at: now }))
      .where('app_id', '=', appId)
      .where('id', '=', linkId)
      .where((eb) => eb.or([eb('limit_payments', '=', 0), eb('max_payments', 'is', null), eb('payments_count', '<', eb.ref('max_payments'))]))
      .returningAll()
      .executeTakeFirst()
  }

  async findLink(linkId: string): Promise<Selectable<PaymentLinksTable> | undefined> {
    return this.db.selectFrom('payment_links').selectAll().where('id', '=', linkId).executeTakeFirst()
  }
}
