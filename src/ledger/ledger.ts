import type { Selectable } from 'kysely'
import { backendOf, type Db } from '../db/database.js'
import type { LedgerAccountsTable } from '../db/schema.js'
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
    const found = await this.findAccount(key)
    if (found !== undefined) return found.id
    const now = nowIso()
    const id = newId()
    await this.db
      .insertInto('ledger_accounts')
      .values({
        id,
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
      })
      .onConflict((conflict) => conflict.doNothing())
      .execute()
    const row = await this.findAccount(key)
    if (row === undefined) throw new LedgerError('account could not be made')
    return row.id
  }

  private findAccount(key: AccountKey): Promise<AccountRow | undefined> {
    return this.db
      .selectFrom('ledger_accounts')
      .selectAll()
      .where('environment', '=', key.environment)
      .where('app_id', '=', key.appId)
      .where('kind', '=', key.kind)
      .where('currency', '=', key.currency)
      .where('reference', '=', key.reference)
      .executeTakeFirst()
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
    await this.db
      .insertInto('ledger_entries')
      .values({ id: entryId, environment: entry.environment, app_id: entry.appId, status: entry.status, reason_type: entry.reasonType, reason_id: entry.reasonId, created_at: now, updated_at: now })
      .execute()
    await this.db
      .insertInto('ledger_postings')
      .values(entry.postings.map((posting) => ({ id: newId(), entry_id: entryId, account_id: posting.accountId, direction: posting.direction, amount: posting.amount.toString() })))
      .execute()
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
    const entry = await this.lockedEntry(entryId)
    if (entry === undefined) throw new LedgerError(`unknown entry ${entryId}`)
    if (entry.status !== 'pending') throw new LedgerError(`entry ${entryId} is ${entry.status}, not pending`)
    const postings = await this.db.selectFrom('ledger_postings').selectAll().where('entry_id', '=', entryId).execute()
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
    await this.db.updateTable('ledger_entries').set({ status: to, updated_at: now }).where('id', '=', entryId).execute()
    await this.store([...changed.values()], now)
  }

  private async lockedEntry(entryId: string) {
    let query = this.db.selectFrom('ledger_entries').selectAll().where('id', '=', entryId)
    if (backendOf(this.db) === 'postgres') query = query.forUpdate()
    return query.executeTakeFirst()
  }

  /** The accounts, each locked for this transaction, in id order so two entries never wait on each other. */
  private async locked(accountIds: readonly string[]): Promise<Map<string, AccountRow>> {
    const ids = [...new Set(accountIds)].sort()
    let query = this.db.selectFrom('ledger_accounts').selectAll().where('id', 'in', ids).orderBy('id')
    if (backendOf(this.db) === 'postgres') query = query.forUpdate()
    const rows = await query.execute()
    return new Map(rows.map((row) => [row.id, row]))
  }

  private async store(balances: readonly Balance[], now: string): Promise<void> {
    for (const balance of balances) {
      await this.db
        .updateTable('ledger_accounts')
        .set({
          debits_posted: balance.debitsPosted.toString(),
          credits_posted: balance.creditsPosted.toString(),
          debits_pending: balance.debitsPending.toString(),
          credits_pending: balance.creditsPending.toString(),
          available: balance.available.toString(),
          updated_at: now,
        })
        .where('id', '=', balance.accountId)
        .execute()
    }
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
  const accounts = await db.selectFrom('ledger_accounts').selectAll().where('environment', '=', environment).orderBy('id').execute()
  const recomputed = new Map<string, Balance>(
    accounts.map((row) => [row.id, { accountId: row.id, currency: row.currency as Currency, debitsPosted: 0n, creditsPosted: 0n, debitsPending: 0n, creditsPending: 0n, available: 0n }]),
  )
  const currencyOf = new Map(accounts.map((row) => [row.id, row.currency]))
  const postings = await db
    .selectFrom('ledger_postings as p')
    .innerJoin('ledger_entries as e', 'e.id', 'p.entry_id')
    .select(['p.entry_id', 'p.account_id', 'p.direction', 'p.amount', 'e.status'])
    .where('e.environment', '=', environment)
    .orderBy('p.entry_id')
    .execute()
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
