import type { Selectable } from 'kysely'
import { backendOf, type Db } from '../../db/database.js'
import { newestFirstPage } from '../../db/newest-first-page.js'
import type { InvoicesTable } from './tables.js'
import { newId, nowIso } from '../../db/time.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'

export type InvoiceRow = Selectable<InvoicesTable>

/** A line as stored: its price frozen when it was set, amounts in cents. */
export interface InvoiceLine {
  product_id: string
  name: string
  quantity: number
  unit_price: bigint
  amount: bigint
}

interface StoredLine {
  product_id: string
  name: string
  quantity: number
  unit_price: string
  amount: string
}

/** The tax an invoice applies, as it was when applied. */
export interface AppliedTax {
  id: string
  name: string
  /** exact decimal text */
  percentage: string
}

/** Everything an invoice holds that a caller's body or its pricing sets. */
export interface InvoiceFields {
  customerId: string
  name: string
  email: string
  currency: string
  status: string
  lines: readonly InvoiceLine[]
  subtotal: bigint
  tax: AppliedTax | null
  taxAmount: bigint
  total: bigint
  dueDate: string
  sendDate: string | null
  delivery: string
  paymentMethods: readonly string[]
  paymentLink: boolean
  partialPayment: boolean
  address: string | null
  phoneNumber: string | null
  logo: string | null
}

export interface InvoiceFilter {
  status?: string | undefined
  customerId?: string | undefined
  skip?: number | undefined
  take?: number | undefined
}

/** An invoice's lines, from its row. */
export function linesOf(row: Pick<InvoiceRow, 'lines'>): InvoiceLine[] {
  const stored = JSON.parse(row.lines) as StoredLine[]
  return stored.map((line) => ({ ...line, unit_price: BigInt(line.unit_price), amount: BigInt(line.amount) }))
}

/** The tax an invoice applies, from its row. */
export function taxOf(row: Pick<InvoiceRow, 'tax_id' | 'tax_name' | 'tax_percentage'>): AppliedTax | null {
  if (row.tax_id === null || row.tax_percentage === null) return null
  return { id: row.tax_id, name: row.tax_name ?? '', percentage: row.tax_percentage }
}

export function paymentMethodsOf(row: Pick<InvoiceRow, 'payment_methods'>): string[] {
  return JSON.parse(row.payment_methods) as string[]
}

/** The columns `fields` set (all but id, app_id, amount_paid, payment_link_id and the timestamps). */
function columnsOf(fields: InvoiceFields) {
  const lines: StoredLine[] = fields.lines.map((line) => ({ ...line, unit_price: line.unit_price.toString(), amount: line.amount.toString() }))
  return {
    customer_id: fields.customerId,
    name: fields.name,
    email: fields.email,
    currency: fields.currency,
    status: fields.status,
    lines: JSON.stringify(lines),
    subtotal: fields.subtotal.toString(),
    tax_id: fields.tax?.id ?? null,
    tax_name: fields.tax?.name ?? null,
    tax_percentage: fields.tax?.percentage ?? null,
    tax_amount: fields.taxAmount.toString(),
    total: fields.total.toString(),
    due_date: fields.dueDate,
    send_date: fields.sendDate,
    delivery: fields.delivery,
    payment_methods: JSON.stringify(fields.paymentMethods),
    payment_link: fields.paymentLink ? 1 : 0,
    partial_payment: fields.partialPayment ? 1 : 0,
    address: fields.address,
    phone_number: fields.phoneNumber,
    logo: fields.logo,
  }
}

/** Invoices of one application; every query starts from `owned`. */
export class InvoicesRepository {
  constructor(private readonly db: Db) {}

  private owned(appId: string, db: Db = this.db) {
    return db.selectFrom('invoices').where('app_id', '=', appId)
  }

  /** `environment`: the creating key's money, which its page takes; it never changes. */
  async create(appId: string, environment: LedgerEnvironment, fields: InvoiceFields): Promise<InvoiceRow> {
    const now = nowIso()
    const row: InvoiceRow = { id: newId(), app_id: appId, environment, ...columnsOf(fields), amount_paid: '0', payment_link_id: null, created_at: now, updated_at: now }
    await this.db.insertInto('invoices').values(row).execute()
    return row
  }

  /** A page and the total, read on one snapshot so they agree even while others write. */
  async list(appId: string, query: InvoiceFilter): Promise<{ rows: InvoiceRow[]; total: number }> {
    return newestFirstPage(this.db, (tx) => {
      let filtered = this.owned(appId, tx)
      if (query.customerId !== undefined) filtered = filtered.where('customer_id', '=', query.customerId.toLowerCase())
      if (query.status !== undefined) filtered = filtered.where('status', '=', query.status)
      return filtered
    }, { skip: query.skip ?? 0, take: query.take ?? 10 })
  }

  /** The invoice a checkout page's address names, unless its application is deleted (its invoices are kept for audit, not paid). */
  async findPayable(id: string): Promise<InvoiceRow | undefined> {
    return this.db
      .selectFrom('invoices')
      .selectAll('invoices')
      .where('invoices.id', '=', id.toLowerCase())
      .where(({ exists, selectFrom }) => exists(selectFrom('apps').select('apps.id').whereRef('apps.id', '=', 'invoices.app_id').where('apps.deleted_at', 'is', null)))
      .executeTakeFirst()
  }

  async find(appId: string, id: string): Promise<InvoiceRow | undefined> {
    return this.owned(appId).selectAll().where('id', '=', id.toLowerCase()).executeTakeFirst()
  }

  /**
   * The invoice, held until the transaction ends (PostgreSQL: FOR UPDATE; SQLite's write
   * transactions run one at a time), so a PUT judges its transition on the status it replaces.
   */
  async lock(appId: string, id: string): Promise<InvoiceRow | undefined> {
    let query = this.owned(appId).selectAll().where('id', '=', id.toLowerCase())
    if (backendOf(this.db) === 'postgres') query = query.forUpdate()
    return query.executeTakeFirst()
  }

  /** Sets every field; returns the row as it now is. */
  async replace(appId: string, id: string, fields: InvoiceFields): Promise<InvoiceRow | undefined> {
    return this.db
      .updateTable('invoices')
      .set({ ...columnsOf(fields), updated_at: nowIso() })
      .where('app_id', '=', appId)
      .where('id', '=', id.toLowerCase())
      .returningAll()
      .executeTakeFirst()
  }

  /** Records the invoice's payment link; returns the invoice as it now is. */
  async setPaymentLink(invoice: InvoiceRow, linkId: string): Promise<InvoiceRow> {
    const updatedAt = nowIso()
    await this.db.updateTable('invoices').set({ payment_link_id: linkId, updated_at: updatedAt }).where('id', '=', invoice.id).execute()
    return { ...invoice, payment_link_id: linkId, updated_at: updatedAt }
  }

  /** Records a payment: amount_paid and status; returns the invoice as it now is. */
  async setPaid(appId: string, id: string, amountPaid: bigint, status: string, now: string): Promise<InvoiceRow> {
    return this.db
      .updateTable('invoices')
      .set({ amount_paid: amountPaid.toString(), status, updated_at: now })
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
  }

  /** Whether `fields` would change the row: a PUT that resends it as it is writes nothing. */
  static changes(row: InvoiceRow, fields: InvoiceFields): boolean {
    const columns = columnsOf(fields)
    return (Object.keys(columns) as Array<keyof typeof columns>).some((column) => row[column] !== columns[column])
  }

  /** The console's list: the application's newest in one environment (the money its page takes). */
  recent(appId: string, environment: LedgerEnvironment, take: number): Promise<InvoiceRow[]> {
    return this.owned(appId).selectAll().where('environment', '=', environment).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(take).execute()
  }
}
