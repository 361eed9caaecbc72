import type { TableDeclaration } from '../../modules/module.js'

/** A sandbox card payment and its refund, if it has one (src/resources/test-payments/). */
export interface TestPaymentsTable {
  /** pay_ and 24 hex digits */
  id: string
  app_id: string
  /** integer text of the currency's minor unit (cents) */
  amount: string
  /** USD or EUR */
  currency: string
  description: string
  customer_id: string | null
  /** the sandbox wallet credited (its USDC or EURC account) */
  wallet_id: string
  /** the posted entry that credited it */
  entry_id: string
  /** ref_ and 24 hex digits, once refunded */
  refund_id: string | null
  refund_entry_id: string | null
  refunded_at: string | null
  created_at: string
  updated_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    test_payments: TestPaymentsTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const testPaymentsTables: readonly TableDeclaration[] = [{ name: 'test_payments', appDeletion: 'kept', reason: 'money records: what the sandbox ledger entries of test payments are for' }]
