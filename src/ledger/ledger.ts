import { type Compilable, type Selectable, sql } from 'kysely'
import { backendOf, type Db, readSnapshot } from '../db/database.js'
import { PreparedInsert, PreparedQuery } from '../db/prepared.js'
import type { LedgerAccountsTable } from './tables.js'
import { newId, nowIso } from '../db/time.js'
import type { Currency } from './amount.js'

/**
 * A double-entry ledger, after TigerBeetle's model. Every movement is one entry of two or more
 * postings whose debits equal their credits in each currency; entries are never changed, only
 * moved from pending to posted or voided. Each account keeps its four sums beside the postings,
 * updated in the entry's own transaction, so a balance is read in constant time and
 * `verifyLedger` can recompute it. Amounts are integers of the currency's smallest unit, stored
 * as decimal text (DAI's 18 decimals pass what a 64-bit integer holds).
 *
 * An account that may not go negative never does: the entry that would take its available
 * balance (credits posted − debits posted − debits pending) below zero is refused before
 * anything is written, and a CHECK in the database refuses it too. Accounts are locked in id
 * order (PostgreSQL: row locks; SQLite: the write lock), so concurrent entries on one account
 * serialise and none reads a balance another is changing.
 */

/** Test money and live money never mix: every account and entry belongs to one. */
export type LedgerEnvironment = 'sandbox' | 'live'

export type AccountKind = 'wallet' | 'clearing' | 'developer_fee' | 'world'

export type EntryStatus = 'pending' | 'posted' | 'voided'

export interface AccountKey {
  environment: LedgerEnvironment
  /** '' for the platform's own accounts (the outside world) */
  appId: string
  kind: AccountKind
  currency: Currency
  /** what the account is of: a wallet's network, a liquidation address id, the world's rail */
  reference: string
}

export interface Posting {
  accountId: string
  direction: 'debit' | 'credit'
  /** a positive integer of the account currency's smallest unit */
  amount: bigint
}

export interface Balance {
  accountId: string
  currency: Currency
  debitsPosted: bigint
  creditsPosted: bigint
  debitsPending: bigint
  creditsPending: bigint
  /** credits posted − debits posted − debits pending: what may be spent now */
  available: bigint
}

/** Why the ledger refused an entry; nothing was written. */
export class LedgerError extends Error {}

/** An entry would take an account that may not go negative below zero. */
export class InsufficientFunds extends LedgerError {
  constructor(
    readonly accountId: string,
    readonly available: bigint,
    readonly needed: bigint,
  ) {
    super(`account ${accountId} has ${available} available, ${needed} needed`)
  }
}

type AccountRow = Selectable<LedgerAccountsTable>

/**
 * A statement whose shape depends on a count (of keys, accounts, postings): one PreparedQuery per
 * count, of `slots(count)` values, each built once.
 */
function perCount<Row>(slots: (count: number) => number, build: (count: number) => (db: Db, ...slots: string[]) => Compilable<Row>): (count: number) => PreparedQuery<Row> {
  const built = new Map<number, PreparedQuery<Row>>()
  return (count) => {
    let query = built.get(count)
    if (query === undefined) {
      query = new PreparedQuery(slots(count), build(count))
      built.set(count, query)
    }
    return query
  }
}

/** The slots of row `i` of `count`-slot rows. */
const rowOf = (slots: readonly string[], i: number, count: number) => slots.slice(i * count, (i + 1) * count) as string[]

const KEY_FIELDS = 5
const keyValues = (key: AccountKey) => [key.environment, key.appId, key.kind, key.currency, key.reference]
const keyText = (key: AccountKey) => keyValues(key).join('\u0000')

/** The ids of the accounts of `count` keys, found through the unique key (ledger_accounts_key): one statement. */
const FIND_ACCOUNTS = perCount<Pick<AccountRow, 'id' | 'environment' | 'app_id' | 'kind' | 'currency' | 'reference'>>((count) => KEY_FIELDS * count, (count) => (db, ...slots) =>
  db
    .selectFrom('ledger_accounts')
    .select(['id', 'environment', 'app_id', 'kind', 'currency', 'reference'])
    .where((eb) =>
      eb.or(
        Array.from({ length: count }, (_, i) => {
          const [environment, appId, kind, currency, reference] = rowOf(slots, i, KEY_FIELDS)
          return eb.and([eb('environment', '=', environment ?? ''), eb('app_id', '=', appId ?? ''), eb('kind', '=', kind ?? ''), eb('currency', '=', currency ?? ''), eb('reference', '=', reference ?? '')])
        }),
      ),
    ),
)

/** `count` accounts by id, in id order, locked for the transaction on PostgreSQL (SQLite: the write lock is held). */
const LOCK_ACCOUNTS = perCount<AccountRow>((count) => count, () => (db, ...ids) => {
  const query = db.selectFrom('ledger_accounts').selectAll().where('id', 'in', ids).orderBy('id')
  return backendOf(db) === 'postgres' ? query.forUpdate() : query
})

const POSTING_FIELDS = 5
const postingRows = (slots: readonly string[], count: number) =>
  Array.from({ length: count }, (_, i) => {
    const [id, entry_id, account_id, direction, amount] = rowOf(slots, i, POSTING_FIELDS)
    return { id: id ?? '', entry_id: entry_id ?? '', account_id: account_id ?? '', direction: direction ?? '', amount: amount ?? '' }
  })

const INSERT_ENTRY = new PreparedInsert('ledger_entries')
const INSERT_POSTINGS = perCount<never>((count) => POSTING_FIELDS * count, (count) => (db, ...slots) => db.insertInto('ledger_postings').values(postingRows(slots, count)))

const ENTRY_FIELDS = 8
/**
 * PostgreSQL: the entry and its `count` postings in one statement (one round trip where there were
 * two); the postings' foreign key to the entry is checked at the end of the statement.
 */
const ENTRY_WITH_POSTINGS = perCount<never>((count) => ENTRY_FIELDS + POSTING_FIELDS * count, (count) => (db, ...slots) => {
  const [id, environment, app_id, status, reason_type, reason_id, created_at, updated_at] = slots.slice(0, ENTRY_FIELDS) as string[]
  return db
    .with('entry', () =>
      db.insertInto('ledger_entries').values({
        id: id ?? '',
        environment: environment ?? '',
        app_id: app_id ?? '',
        status: status ?? '',
        reason_type: reason_type ?? '',
        reason_id: reason_id ?? '',
        created_at: created_at ?? '',
        updated_at: updated_at ?? '',
      }),
    )
    .insertInto('ledger_postings')
    .values(postingRows(slots.slice(ENTRY_FIELDS), count))
})

const BALANCE_FIELDS = 7
/** The sums of `count` accounts in one statement (UPDATE … FROM VALUES, on both backends). */
const STORE_BALANCES = perCount<never>((count) => BALANCE_FIELDS * count, (count) => (db, ...slots) => {
  const rows = Array.from({ length: count }, (_, i) => sql`(${sql.join(rowOf(slots, i, BALANCE_FIELDS))})`)
  const statement = sql<never>`update ledger_accounts set debits_posted = v.column2, credits_posted = v.column3, debits_pending = v.column4,
    credits_pending = v.column5, available = v.column6, updated_at = v.column7
    from (values ${sql.join(rows)}) as v where ledger_accounts.id = v.column1`
  return { compile: () => statement.compile(db) }
})

const SETTLE_ENTRY = new PreparedQuery<never>(3, (db, status, updatedAt, entryId) => db.updateTable('ledger_entries').set({ status, updated_at: updatedAt }).where('id', '=', entryId))

/** A pending entry's status, locked for the transaction on PostgreSQL, with its postings: one statement. */
const LOCK_ENTRY_WITH_POSTINGS = new PreparedQuery<{ status: string; account_id: string; direction: string; amount: string }>(1, (db, entryId) => {
  const query = db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_postings as p', 'p.entry_id', 'e.id')
    .select(['e.status', 'p.account_id', 'p.direction', 'p.amount'])
    .where('e.id', '=', entryId)
  return backendOf(db) === 'postgres' ? query.forUpdate('e') : query
})

function balanceOf(row: AccountRow): Balance {
  return {
    accountId: row.id,
    currency: row.currency as Currency,
    debitsPosted: BigInt(row.debits_posted),
    creditsPosted: BigInt(row.credits_posted),
    debitsPending: BigInt(row.debits_pending),
    creditsPending: BigInt(row.credits_pending),
    available: BigInt(row.available),
  }
}

export class LedgerRepository {
  /** `db` must be a write transaction for `record`, `post` and `void` (writeTransaction). */
  constructor(private readonly db: Db) {}

  /** The account of `key`, made the first time it is asked for; only the world's accounts may go negative. */
  async account(key: AccountKey): Promise<string> {
    return (await this.accounts([key]))[0] as string
  }

  /**
   * The accounts of `keys`, in their order, each made the first time it is asked for: one
   * statement when they all exist. Only the world's accounts may go negative.
   */
  async accounts(keys: readonly AccountKey[]): Promise<string[]> {
    const found = await this.findAccounts(keys)
    const missing = [...new Map(keys.filter((key) => !found.has(keyText(key))).map((key) => [keyText(key), key])).values()]
    if (missing.length > 0) {
      const now = nowIso()
      await this.db
        .insertInto('ledger_accounts')
        .values(
          missing.map((key) => ({
            id: newId(),
            environment: key.environment,
            app_id: key.appId,
            kind: key.kind,
            currency: key.currency,
            reference: key.reference,
            may_go_negative: key.kind === 'world' ? 1 : 0,
            debits_posted: '0',
            credits_posted: '0',
            debits_pending: '0',
            credits_pending: '0',
            available: '0',
            created_at: now,
            updated_at: now,
          })),
        )
        .onConflict((conflict) => conflict.doNothing())
        .execute()
      for (const [text, id] of await this.findAccounts(missing)) found.set(text, id)
    }
    return keys.map((key) => {
      const id = found.get(keyText(key))
      if (id === undefined) throw new LedgerError('account could not be made')
      return id
    })
  }

  /** The ids of the accounts of `keys` that exist, by keyText. */
  private async findAccounts(keys: readonly AccountKey[]): Promise<Map<string, string>> {
    const rows = await FIND_ACCOUNTS(keys.length).execute(this.db, ...keys.flatMap(keyValues))
    return new Map(rows.map((row) => [keyText({ environment: row.environment as LedgerEnvironment, appId: row.app_id, kind: row.kind as AccountKind, currency: row.currency as Currency, reference: row.reference }), row.id]))
  }

  async balances(accountIds: readonly string[]): Promise<Balance[]> {
    if (accountIds.length === 0) return []
    const rows = await this.db.selectFrom('ledger_accounts').selectAll().where('id', 'in', accountIds).orderBy('id').execute()
    return rows.map(balanceOf)
  }

  /**
   * Writes one entry of `postings` in `environment`, posted at once or pending (its debits
   * reserved until it is posted or voided). Refused, with nothing written, when it does not
   * balance in each currency, names an account of another environment, or would take an account
   * that may not go negative below zero.
   */
  async record(entry: { environment: LedgerEnvironment; appId: string; reasonType: string; reasonId: string; status: 'pending' | 'posted'; postings: readonly Posting[] }): Promise<string> {
    if (entry.postings.length < 2) throw new LedgerError('an entry has at least two postings')
    for (const posting of entry.postings) if (posting.amount <= 0n) throw new LedgerError('a posting moves a positive amount')
    const accounts = await this.locked(entry.postings.map((posting) => posting.accountId))
    const sums = new Map<string, bigint>()
    for (const posting of entry.postings) {
      const account = accounts.get(posting.accountId)
      if (account === undefined) throw new LedgerError(`unknown account ${posting.accountId}`)
      if (account.environment !== entry.environment) throw new LedgerError(`account ${posting.accountId} is not of the ${entry.environment} environment`)
      const signed = posting.direction === 'debit' ? posting.amount : -posting.amount
      sums.set(account.currency, (sums.get(account.currency) ?? 0n) + signed)
    }
    for (const [currency, sum] of sums) if (sum !== 0n) throw new LedgerError(`the entry's debits and credits differ by ${sum} in ${currency}`)
    const pending = entry.status === 'pending'
    const changed = new Map<string, Balance>()
    for (const posting of entry.postings) {
      const account = accounts.get(posting.accountId) as AccountRow
      const balance = changed.get(account.id) ?? balanceOf(account)
      if (posting.direction === 'debit') {
        if (pending) balance.debitsPending += posting.amount
        else balance.debitsPosted += posting.amount
        balance.available -= posting.amount
      } else if (pending) {
        balance.creditsPending += posting.amount
      } else {
        balance.creditsPosted += posting.amount
        balance.available += posting.amount
      }
      changed.set(account.id, balance)
    }
    for (const balance of changed.values()) {
      const account = accounts.get(balance.accountId) as AccountRow
      if (account.may_go_negative === 0 && balance.available < 0n) throw new InsufficientFunds(account.id, BigInt(account.available), BigInt(account.available) - balance.available)
    }
    const now = nowIso()
    const entryId = newId()
    const postings = entry.postings.flatMap((posting) => [newId(), entryId, posting.accountId, posting.direction, posting.amount.toString()])
    if (backendOf(this.db) === 'postgres') {
      await ENTRY_WITH_POSTINGS(entry.postings.length).execute(this.db, entryId, entry.environment, entry.appId, entry.status, entry.reasonType, entry.reasonId, now, now, ...postings)
    } else {
      await INSERT_ENTRY.execute(this.db, { id: entryId, environment: entry.environment, app_id: entry.appId, status: entry.status, reason_type: entry.reasonType, reason_id: entry.reasonId, created_at: now, updated_at: now })
      await INSERT_POSTINGS(entry.postings.length).execute(this.db, ...postings)
    }
    await this.store([...changed.values()], now)
    return entryId
  }

  /** Posts a pending entry: its reserved debits and its credits take effect. */
  post(entryId: string): Promise<void> {
    return this.settle(entryId, 'posted')
  }

  /** Voids a pending entry: its reserved debits are released, its credits never happen. */
  void(entryId: string): Promise<void> {
    return this.settle(entryId, 'voided')
  }

  private async settle(entryId: string, to: 'posted' | 'voided'): Promise<void> {
    const postings = await LOCK_ENTRY_WITH_POSTINGS.execute(this.db, entryId)
    const status = postings[0]?.status
    if (status === undefined) throw new LedgerError(`unknown entry ${entryId}`)
    if (status !== 'pending') throw new LedgerError(`entry ${entryId} is ${status}, not pending`)
    const accounts = await this.locked(postings.map((posting) => posting.account_id))
    const changed = new Map<string, Balance>()
    for (const posting of postings) {
      const account = accounts.get(posting.account_id) as AccountRow
      const balance = changed.get(account.id) ?? balanceOf(account)
      const amount = BigInt(posting.amount)
      if (posting.direction === 'debit') {
        balance.debitsPending -= amount
        if (to === 'posted') balance.debitsPosted += amount
        else balance.available += amount
      } else {
        balance.creditsPending -= amount
        if (to === 'posted') {
          balance.creditsPosted += amount
          balance.available += amount
        }
      }
      changed.set(account.id, balance)
    }
    const now = nowIso()
    await SETTLE_ENTRY.execute(this.db, to, now, entryId)
    await this.store([...changed.values()], now)
  }

  /** The accounts, each locked for this transaction, in id order so two entries never wait on each other. */
  private async locked(accountIds: readonly string[]): Promise<Map<string, AccountRow>> {
    const ids = [...new Set(accountIds)].sort()
    const rows = await LOCK_ACCOUNTS(ids.length).execute(this.db, ...ids)
    return new Map(rows.map((row) => [row.id, row]))
  }

  /** Every changed account's sums, in one statement. */
  private async store(balances: readonly Balance[], now: string): Promise<void> {
    const values = balances.flatMap((balance) => [
      balance.accountId,
      balance.debitsPosted.toString(),
      balance.creditsPosted.toString(),
      balance.debitsPending.toString(),
      balance.creditsPending.toString(),
      balance.available.toString(),
      now,
    ])
    await STORE_BALANCES(balances.length).execute(this.db, ...values)
  }
}

/** The first difference `verifyLedger` found, or none. */
export type LedgerDifference =
  | { kind: 'unbalanced entry'; entryId: string; currency: string; difference: bigint }
  | { kind: 'balance'; accountId: string; field: keyof Omit<Balance, 'accountId' | 'currency'>; stored: bigint; recomputed: bigint }
  | { kind: 'negative'; accountId: string; available: bigint }

/**
 * Recomputes every balance of `environment` from its postings, checks that every entry balances
 * in each currency and that no account that may not go negative is below zero. Returns the first
 * difference, or undefined when the ledger is exact.
 */
export async function verifyLedger(db: Db, environment: LedgerEnvironment): Promise<LedgerDifference | undefined> {
  // The accounts and the postings as of one moment: on a running platform an entry committed
  // between two separate reads would be counted in one and not the other, a difference that is not there.
  const { accounts, postings } = await readSnapshot(db, async (snapshot) => ({
    accounts: await snapshot.selectFrom('ledger_accounts').selectAll().where('environment', '=', environment).orderBy('id').execute(),
    postings: await snapshot
      .selectFrom('ledger_postings as p')
      .innerJoin('ledger_entries as e', 'e.id', 'p.entry_id')
      .select(['p.entry_id', 'p.account_id', 'p.direction', 'p.amount', 'e.status'])
      .where('e.environment', '=', environment)
      .orderBy('p.entry_id')
      .execute(),
  }))
  const recomputed = new Map<string, Balance>(
    accounts.map((row) => [row.id, { accountId: row.id, currency: row.currency as Currency, debitsPosted: 0n, creditsPosted: 0n, debitsPending: 0n, creditsPending: 0n, available: 0n }]),
  )
  const currencyOf = new Map(accounts.map((row) => [row.id, row.currency]))
  const entrySums = new Map<string, Map<string, bigint>>()
  for (const posting of postings) {
    const amount = BigInt(posting.amount)
    const currency = currencyOf.get(posting.account_id) ?? '?'
    const sums = entrySums.get(posting.entry_id) ?? new Map<string, bigint>()
    sums.set(currency, (sums.get(currency) ?? 0n) + (posting.direction === 'debit' ? amount : -amount))
    entrySums.set(posting.entry_id, sums)
    const balance = recomputed.get(posting.account_id)
    if (balance === undefined || posting.status === 'voided') continue
    if (posting.direction === 'debit') {
      if (posting.status === 'pending') balance.debitsPending += amount
      else balance.debitsPosted += amount
    } else if (posting.status === 'pending') balance.creditsPending += amount
    else balance.creditsPosted += amount
  }
  for (const [entryId, sums] of entrySums) {
    for (const [currency, difference] of sums) if (difference !== 0n) return { kind: 'unbalanced entry', entryId, currency, difference }
  }
  for (const row of accounts) {
    const stored = balanceOf(row)
    const again = recomputed.get(row.id) as Balance
    again.available = again.creditsPosted - again.debitsPosted - again.debitsPending
    for (const field of ['debitsPosted', 'creditsPosted', 'debitsPending', 'creditsPending', 'available'] as const) {
      if (stored[field] !== again[field]) return { kind: 'balance', accountId: row.id, field, stored: stored[field], recomputed: again[field] }
    }
    if (row.may_go_negative === 0 && stored.available < 0n) return { kind: 'negative', accountId: row.id, available: stored.available }
  }
  return undefined
}
