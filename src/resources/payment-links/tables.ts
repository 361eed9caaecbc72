import type { TableDeclaration } from '../../modules/module.js'

/** A payment link of an application (src/resources/payment-links/). */
export interface PaymentLinksTable {
  id: string
  app_id: string
  /** sandbox or live: the money its page takes, the environment of the key that created it */
  environment: string
  /** the link's url: lower-case letters, digits and hyphens, unique within the application */
  slug: string
  title: string
  description: string | null
  cover_image: string | null
  /** INVOICE, PRODUCT, COLLECTION or DONATION; never changes */
  link_type: string
  /** usdc or eurc */
  currency: string
  /** integer text of the currency's smallest unit; null when the payer chooses (or the products price it) */
  amount: string | null
  payment_for_id: string | null
  customer_id: string | null
  /** JSON: [{productId, quantity}] */
  products: string
  is_for_all_products: number
  allow_quantity_adjustment: number
  collect_tax: number
  tax_id: string | null
  collect_address: number
  allow_mobile_payment: number
  limit_payments: number
  max_payments: number | null
  payments_count: number
  /** JSON object */
  custom_fields: string | null
  expires_at: string | null
  created_at: string
  updated_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    payment_links: PaymentLinksTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const paymentLinksTables: readonly TableDeclaration[] = [{ name: 'payment_links', appDeletion: 'removed' }]
