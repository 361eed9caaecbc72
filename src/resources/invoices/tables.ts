import type { TableDeclaration } from '../../modules/module.js'

/** An invoice of an application (src/resources/invoices/). */
export interface InvoicesTable {
  id: string
  app_id: string
  /** sandbox or live: the money its page takes, the environment of the key that created it */
  environment: string
  customer_id: string
  name: string
  email: string
  /** usdc or eurc */
  currency: string
  /** DRAFT, OPEN, PASTDUE, PAID or PARTIALLYPAID */
  status: string
  /** JSON: the lines in order, each {product_id, name, quantity, unit_price, amount}, amounts integer text of cents */
  lines: string
  /** integer text of cents, as are tax_amount, total and amount_paid */
  subtotal: string
  /** the tax applied, its name and its percentage (exact decimal text) as they were when applied; null without a tax */
  tax_id: string | null
  tax_name: string | null
  tax_percentage: string | null
  tax_amount: string
  total: string
  amount_paid: string
  due_date: string
  send_date: string | null
  delivery: string
  /** JSON array of payment method names */
  payment_methods: string
  payment_link: number
  /** the payment link made for it, once there is one */
  payment_link_id: string | null
  partial_payment: number
  address: string | null
  phone_number: string | null
  logo: string | null
  created_at: string
  updated_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    invoices: InvoicesTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const invoicesTables: readonly TableDeclaration[] = [{ name: 'invoices', appDeletion: 'kept', reason: 'financial records: what was billed, at the prices it was issued with, and what was paid' }]
