import type { Selectable, Updateable } from 'kysely'
import { backendOf, type Db } from '../../db/database.js'
import { newestFirstPage } from '../../db/newest-first-page.js'
import { Conflict } from '../../errors.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { PaymentLinksTable } from './tables.js'
import { newId, nowIso } from '../../db/time.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'

export type PaymentLinkRow = Selectable<PaymentLinksTable>

/** One product line of a link. */
export interface ProductLine {
  productId: string
  quantity: number
}

/** A link as stored, every field resolved (amount in the currency's smallest unit). */
export interface PaymentLinkFields {
  slug: string
  title: string
  description: string | null
  coverImage: string | null
  linkType: string
  currency: string
  amount: bigint | null
  paymentForId: string | null
  customerId: string | null
  products: readonly ProductLine[]
  isForAllProducts: boolean
  allowQuantityAdjustment: boolean
  collectTax: boolean
  taxId: string | null
  collectAddress: boolean
  allowMobilePayment: boolean
  limitPayments: boolean
  maxPayments: number | null
  customFields: Record<string, unknown> | null
  expiresAt: string | null
}

export interface PaymentLinkFilter {
  linkType?: string | undefined
  currency?: string | undefined
  skip?: number | undefined
  take?: number | undefined
}

export function productLinesOf(row: Pick<PaymentLinkRow, 'products'>): ProductLine[] {
  return JSON.parse(row.products) as ProductLine[]
}

export function customFieldsOf(row: Pick<PaymentLinkRow, 'custom_fields'>): Record<string, unknown> | null {
  return row.custom_fields === null ? null : (JSON.parse(row.custom_fields) as Record<string, unknown>)
}

/** The row's fields as the routes reason about them (the merge of an update starts here). */
export function fieldsOf(row: PaymentLinkRow): PaymentLinkFields {
  return {
    slug: row.slug,
    title: row.title,
    description: row.description,
    coverImage: row.cover_image,
    linkType: row.link_type,
    currency: row.currency,
    amount: row.amount === null ? null : BigInt(row.amount),
    paymentForId: row.payment_for_id,
    customerId: row.customer_id,
    products: productLinesOf(row),
    isForAllProducts: row.is_for_all_products === 1,
    allowQuantityAdjustment: row.allow_quantity_adjustment === 1,
    collectTax: row.collect_tax === 1,
    taxId: row.tax_id,
    collectAddress: row.collect_address === 1,
    allowMobilePayment: row.allow_mobile_payment === 1,
    limitPayments: row.limit_payments === 1,
    maxPayments: row.max_payments,
    customFields: customFieldsOf(row),
    expiresAt: row.expires_at,
  }
}

function columnsOf(fields: PaymentLinkFields) {
  return {
    slug: fields.slug,
    title: fields.title,
    description: fields.description,
    cover_image: fields.coverImage,
    link_type: fields.linkType,
    currency: fields.currency,
    amount: fields.amount === null ? null : fields.amount.toString(),
    payment_for_id: fields.paymentForId,
    customer_id: fields.customerId,
    products: JSON.stringify(fields.products),
    is_for_all_products: fields.isForAllProducts ? 1 : 0,
    allow_quantity_adjustment: fields.allowQuantityAdjustment ? 1 : 0,
    collect_tax: fields.collectTax ? 1 : 0,
    tax_id: fields.taxId,
    collect_address: fields.collectAddress ? 1 : 0,
    allow_mobile_payment: fields.allowMobilePayment ? 1 : 0,
    limit_payments: fields.limitPayments ? 1 : 0,
    max_payments: fields.maxPayments,
    custom_fields: fields.customFields === null ? null : JSON.stringify(fields.customFields),
    expires_at: fields.expiresAt,
  }
}

export function duplicateSlug(slug: string): string {
  return `A payment link with url "${slug}" already exists in this application`
}

/** Payment links of one application; every query starts from `owned`. */
export class PaymentLinksRepository {
  constructor(private readonly db: Db) {}

  private owned(appId: string, db: Db = this.db) {
    return db.selectFrom('payment_links').where('app_id', '=', appId)
  }

  /**
   * `environment`: the creating key's money (an invoice's link: the invoice's), which its page
   * takes; it never changes. The unique index on (app_id, slug) decides between concurrent creates
   * of one slug: the others get Conflict.
   */
  async create(appId: string, environment: LedgerEnvironment, fields: PaymentLinkFields): Promise<PaymentLinkRow> {
    const now = nowIso()
    const row: PaymentLinkRow = { id: newId(), app_id: appId, environment, ...columnsOf(fields), payments_count: 0, created_at: now, updated_at: now }
    try {
      await this.db.insertInto('payment_links').values(row).execute()
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(duplicateSlug(fields.slug))
      throw error
    }
    return row
  }

  /** A page and the total, read on one snapshot so they agree even while others write. */
  async list(appId: string, query: PaymentLinkFilter): Promise<{ rows: PaymentLinkRow[]; total: number }> {
    return newestFirstPage(this.db, (tx) => {
      let filtered = this.owned(appId, tx)
      if (query.linkType !== undefined) filtered = filtered.where('link_type', '=', query.linkType)
      if (query.currency !== undefined) filtered = filtered.where('currency', '=', query.currency)
      return filtered
    }, { skip: query.skip ?? 0, take: query.take ?? 10 })
  }

  async find(appId: string, id: string): Promise<PaymentLinkRow | undefined> {
    return this.owned(appId).selectAll().where('id', '=', id.toLowerCase()).executeTakeFirst()
  }

  /** The link a checkout page's address names (a slug is unique within its application). */
  async findBySlug(appId: string, slug: string): Promise<PaymentLinkRow | undefined> {
    return this.owned(appId).selectAll().where('slug', '=', slug).executeTakeFirst()
  }

  /**
   * Counts one payment of the link, in one conditional statement: a link limited to maxPayments
   * that has them all is left as it is (undefined), so concurrent payers past the limit all miss,
   * on either backend, without reading the count first.
   */
  async countPayment(appId: string, id: string, now: string): Promise<PaymentLinkRow | undefined> {
    return this.db
      .updateTable('payment_links')
      .set((eb) => ({ payments_count: eb('payments_count', '+', 1), updated_at: now }))
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .where((eb) => eb.or([eb('limit_payments', '=', 0), eb('max_payments', 'is', null), eb('payments_count', '<', eb.ref('max_payments'))]))
      .returningAll()
      .executeTakeFirst()
  }

  /**
   * The link, held until the transaction ends (PostgreSQL: FOR UPDATE; SQLite's write
   * transactions run one at a time), so an update checked against it is not raced by another.
   */
  async lock(appId: string, id: string): Promise<PaymentLinkRow | undefined> {
    let query = this.owned(appId).selectAll().where('id', '=', id.toLowerCase())
    if (backendOf(this.db) === 'postgres') query = query.forUpdate()
    return query.executeTakeFirst()
  }

  /** Writes every field (the caller merged the change into the link as it was). */
  async replace(appId: string, id: string, fields: PaymentLinkFields): Promise<PaymentLinkRow | undefined> {
    const changes: Updateable<PaymentLinksTable> = { ...columnsOf(fields), updated_at: nowIso() }
    try {
      return await this.db.updateTable('payment_links').set(changes).where('app_id', '=', appId).where('id', '=', id.toLowerCase()).returningAll().executeTakeFirst()
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(duplicateSlug(fields.slug))
      throw error
    }
  }

  /** The console's list: the application's newest in one environment (the money its page takes). */
  recent(appId: string, environment: LedgerEnvironment, take: number): Promise<PaymentLinkRow[]> {
    return this.owned(appId).selectAll().where('environment', '=', environment).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(take).execute()
  }
}
