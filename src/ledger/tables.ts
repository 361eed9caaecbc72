import type { TableDeclaration } from '../modules/module.js'

/** A ledger account and its four sums kept beside its postings (src/ledger/ledger.ts); amounts are decimal integer text. */
export interface LedgerAccountsTable {
  id: string
  environment: string
  /** '' for the platform's own accounts */
  app_id: string
  kind: string
  currency: string
  reference: string
  may_go_negative: number
  debits_posted: string
  credits_posted: string
  debits_pending: string
  credits_pending: string
  /** credits_posted − debits_posted − debits_pending */
  available: string
  created_at: string
  updated_at: string
}

export interface LedgerEntriesTable {
  id: string
  environment: string
  app_id: string
  status: string
  /** what the entry belongs to: a drain, a transfer, a payment */
  reason_type: string
  reason_id: string
  created_at: string
  updated_at: string
}

export interface LedgerPostingsTable {
  id: string
  entry_id: string
  account_id: string
  direction: string
  amount: string
}

/** An exchange rate an operator loaded (src/ledger/rates.ts); rates are decimal text. */
export interface ExchangeRatesTable {
  id: string
  environment: string
  from_currency: string
  to_currency: string
  midmarket_rate: string
  buy_rate: string
  sell_rate: string
  /** when the rate was true */
  as_of: string
  loaded_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../db/schema.js' {
  interface Database {
    ledger_accounts: LedgerAccountsTable
    ledger_entries: LedgerEntriesTable
    ledger_postings: LedgerPostingsTable
    exchange_rates: ExchangeRatesTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const ledgerTables: readonly TableDeclaration[] = [
  { name: 'ledger_accounts', appDeletion: 'kept', reason: 'money records: the ledger stays whole (ledger verify)' },
  { name: 'ledger_entries', appDeletion: 'kept', reason: 'money records: the ledger stays whole (ledger verify)' },
  { name: 'ledger_postings', appDeletion: 'untouched', reason: 'the postings of a ledger entry, kept with it' },
  { name: 'exchange_rates', appDeletion: 'untouched', reason: 'the rates an operator loads, no application\'s' },
]
