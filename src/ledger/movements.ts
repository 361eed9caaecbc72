import type { Db } from '../db/database.js'
import type { Currency } from './amount.js'
import type { LedgerEnvironment } from './ledger.js'

/**
 * The movements of an application's money, read from the ledger's entries: Stripe's balance
 * transactions. The application's money is its wallets (what GET /balance counts) and its fee
 * account (the developer fees it collected); clearing accounts (a deposit on its way, or held for an
 * operator) and the world's are not its balance.
 *
 * One movement per entry, balance (wallet or fees) and currency, counted as the balance counts it
 * (credits posted − debits posted − debits pending): a voided entry moves nothing, a pending one
 * only by what it reserves. So the movements of each balance add up to it, exactly, at every moment.
 */

/** Which of the application's balances a movement moves. */
export type MovedBalance = 'wallet' | 'fees'

export interface Movement {
  entryId: string
  balance: MovedBalance
  currency: Currency
  /** the change of the balance, in the currency's smallest unit */
  net: bigint
  /** the developer fee the same entry collected into the fee account in this currency (wallet movements; 0 for the fees') */
  fee: bigint
  /** what the entry belongs to: a drain, a transfer, a payment intent, a test payment, a deposit */
  reasonType: string
  reasonId: string
  /** 'pending' while it only reserves (a debit not yet final), else 'posted' */
  status: 'pending' | 'posted'
  createdAt: string
}

/** Where a page starts: after this entry, in the order (created_at, then id), newest first. */
export interface EntryPlace {
  id: string
  createdAt: string
}

export interface MovementQuery {
  currency?: Currency | undefined
  createdAfter?: string | undefined
  createdBefore?: string | undefined
  /** entries at or older than this one (the caller drops the movements it already gave) */
  atOrBefore?: EntryPlace | undefined
  /** entries read per statement */
  batch: number
}

interface PostingRow {
  entry_id: string
  status: string
  reason_type: string
  reason_id: string
  created_at: string
  kind: string
  currency: string
  direction: string
  amount: string
}

/** The movements of entries, newest first: each entry's wallet movements (by currency) then its fees'. */
function movementsOf(rows: readonly PostingRow[]): Movement[] {
  const byEntry = new Map<string, PostingRow[]>()
  for (const row of rows) byEntry.set(row.entry_id, [...(byEntry.get(row.entry_id) ?? []), row])
  const movements: Movement[] = []
  for (const [entryId, postings] of byEntry) {
    const first = postings[0] as PostingRow
    const posted = first.status === 'posted'
    const currencies = [...new Set(postings.map((posting) => posting.currency))].sort()
    const sum = (kind: string, currency: string, counted: (posting: PostingRow) => boolean) =>
      postings
        .filter((posting) => posting.kind === kind && posting.currency === currency && counted(posting))
        .reduce((total, posting) => total + (posting.direction === 'credit' ? BigInt(posting.amount) : -BigInt(posting.amount)), 0n)
    // As the balance counts it: credits once posted, debits at once (a pending debit is reserved).
    const counted = (posting: PostingRow) => posted || posting.direction === 'debit'
    const base = { entryId, reasonType: first.reason_type, reasonId: first.reason_id, status: posted ? ('posted' as const) : ('pending' as const), createdAt: first.created_at }
    for (const currency of currencies) {
      const net = sum('wallet', currency, counted)
      if (net !== 0n) movements.push({ ...base, balance: 'wallet', currency: currency as Currency, net, fee: sum('developer_fee', currency, (posting) => posting.direction === 'credit') })
    }
    for (const currency of currencies) {
      const net = sum('developer_fee', currency, counted)
      if (net !== 0n) movements.push({ ...base, balance: 'fees', currency: currency as Currency, net, fee: 0n })
    }
  }
  return movements
}

/**
 * The movements of the application's money in `environment`, newest first, read `batch` entries at
 * a time while `wanted` asks for more (it is given each batch's movements, in order, and answers
 * whether to read on). Voided entries are left out.
 */
export async function readMovements(db: Db, environment: LedgerEnvironment, appId: string, query: MovementQuery, wanted: (movements: Movement[]) => boolean): Promise<void> {
  let place = query.atOrBefore
  let inclusive = true
  for (;;) {
    let entries = db
      .selectFrom('ledger_entries as e')
      .select(['e.id', 'e.created_at'])
      .where('e.app_id', '=', appId)
      .where('e.environment', '=', environment)
      .where('e.status', '<>', 'voided')
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('ledger_postings as p')
            .innerJoin('ledger_accounts as a', 'a.id', 'p.account_id')
            .select('p.id')
            .whereRef('p.entry_id', '=', 'e.id')
            .where('a.app_id', '=', appId)
            .where('a.kind', 'in', ['wallet', 'developer_fee']),
        ),
      )
    if (query.createdAfter !== undefined) entries = entries.where('e.created_at', '>', query.createdAfter)
    if (query.createdBefore !== undefined) entries = entries.where('e.created_at', '<', query.createdBefore)
    if (place !== undefined) {
      const at = place
      entries = entries.where('e.created_at', '<=', at.createdAt).where((eb) => eb.or([eb('e.created_at', '<', at.createdAt), eb('e.id', inclusive ? '<=' : '<', at.id)]))
    }
    const page = await entries.orderBy('e.created_at', 'desc').orderBy('e.id', 'desc').limit(query.batch).execute()
    if (page.length === 0) return
    let postings = db
      .selectFrom('ledger_postings as p')
      .innerJoin('ledger_entries as e', 'e.id', 'p.entry_id')
      .innerJoin('ledger_accounts as a', 'a.id', 'p.account_id')
      .select(['p.entry_id', 'e.status', 'e.reason_type', 'e.reason_id', 'e.created_at', 'a.kind', 'a.currency', 'p.direction', 'p.amount'])
      .where(
        'p.entry_id',
        'in',
        page.map((entry) => entry.id),
      )
      .where('a.app_id', '=', appId)
      .where('a.kind', 'in', ['wallet', 'developer_fee'])
    if (query.currency !== undefined) postings = postings.where('a.currency', '=', query.currency)
    const rows = await postings.orderBy('e.created_at', 'desc').orderBy('p.entry_id', 'desc').execute()
    if (!wanted(movementsOf(rows))) return
    if (page.length < query.batch) return
    const last = page.at(-1) as { id: string; created_at: string }
    place = { id: last.id, createdAt: last.created_at }
    inclusive = false
  }
}
