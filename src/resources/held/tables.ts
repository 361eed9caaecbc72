import type { TableDeclaration } from '../../modules/module.js'

/** What an operator did to held money (src/resources/held/): who, when, why, and the ledger entry it wrote. */
export interface HeldActionsTable {
  id: string
  environment: string
  app_id: string
  /** drain | transfer */
  target_type: string
  target_id: string
  /** retry | refund | release */
  action: string
  from_state: string
  to_state: string
  /** integer text of the smallest unit of currency: the held amount acted on */
  amount: string
  currency: string
  /** the entry the action wrote (pending for a retry and a live refund, posted otherwise) */
  entry_id: string | null
  return_address: string | null
  wallet_id: string | null
  /** the operator who acted, as they named themselves */
  operator: string
  reason: string
  /** the key that makes a repeated action answer the first one (the API's Idempotency-Key, the CLI's) */
  idempotency_key: string | null
  created_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    held_actions: HeldActionsTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const heldTables: readonly TableDeclaration[] = [{ name: 'held_actions', appDeletion: 'kept', reason: 'money records: who moved held money, when and why (the audit of its ledger entries)' }]
