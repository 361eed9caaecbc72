import type { Db } from '../db/database.js'
import { newestFirstPage, type Page } from '../db/newest-first-page.js'
import type { LedgerEnvironment } from '../ledger/ledger.js'
import { type DepositObject, toDeposit } from './objects.js'

/** The confirmations a chain requires (its configuration's; for a chain no longer configured, what the API shows). */
export type ConfirmationsRequired = (chain: string) => number

/** The application's deposits seen on chain in the environment, newest first, and how many there are. */
export async function listDeposits(
  db: Db,
  environment: LedgerEnvironment,
  appId: string,
  filters: { status?: string; chain?: string },
  page: Page,
  required: ConfirmationsRequired,
): Promise<{ deposits: DepositObject[]; total: number }> {
  const { rows, total } = await newestFirstPage(
    db,
    (tx) => {
      let query = tx.selectFrom('chain_deposits').where('app_id', '=', appId).where('environment', '=', environment)
      if (filters.status !== undefined) query = query.where('status', '=', filters.status)
      if (filters.chain !== undefined) query = query.where('chain', '=', filters.chain)
      return query
    },
    page,
  )
  return { deposits: rows.map((row) => toDeposit(row, required(row.chain))), total }
}

/** One of the application's deposits, or undefined (another application's or environment's is undefined). */
export async function findDeposit(db: Db, environment: LedgerEnvironment, appId: string, id: string, required: ConfirmationsRequired): Promise<DepositObject | undefined> {
  const row = await db.selectFrom('chain_deposits').selectAll().where('id', '=', id).where('app_id', '=', appId).where('environment', '=', environment).executeTakeFirst()
  return row === undefined ? undefined : toDeposit(row, required(row.chain))
}
