import type { TableDeclaration } from '../../modules/module.js'

/** What a hosted checkout's payment intent pays (src/resources/checkout/). */
export interface CheckoutPaymentsTable {
  /** the payment intent (a row of transfers) */
  transfer_id: string
  app_id: string
  /** sandbox or live, the intent's */
  environment: string
  /** exactly one of invoice_id and payment_link_id is set */
  invoice_id: string | null
  payment_link_id: string | null
  /** usdc or eurc */
  currency: string
  /** integer text of the currency's smallest unit */
  amount: string
  email: string | null
  address: string | null
  /** JSON: the product lines a PRODUCT link's payer bought, [{product_id, name, quantity, unit_price}] */
  items: string | null
  /** awaiting_funds, then paid */
  state: string
  paid_at: string | null
  created_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    checkout_payments: CheckoutPaymentsTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const checkoutTables: readonly TableDeclaration[] = [{ name: 'checkout_payments', appDeletion: 'kept', reason: 'money records: what each checkout payment intent paid' }]
