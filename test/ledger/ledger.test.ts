import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { type Db, writeTransaction } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import type { Currency } from '../../src/ledger/amount.js'
import { type AccountKey, InsufficientFunds, LedgerError, type LedgerEnvironment, LedgerRepository, type Posting, verifyLedger } from '../../src/ledger/ledger.js'
import { dropFreshDatabases, freshDatabase } from '../backend.js'

let db: Db
beforeAll(async () => {
  const fresh = await freshDatabase()
  db = await openDatabase(parseDatabaseUrl(fresh.url, 'DATABASE_URL', 20))
})
afterAll(async () => {
  await db.destroy()
  await dropFreshDatabases()
})

let appSequence = 0
const inTransaction = <T>(work: (ledger: LedgerRepository) => Promise<T>) => writeTransaction(db, (tx) => work(new LedgerRepository(tx)))
const account = (key: AccountKey) => inTransaction((ledger) => ledger.account(key))
const balanceOf = async (accountId: string) => (await new LedgerRepository(db).balances([accountId]))[0]
const debit = (accountId: string, amount: bigint): Posting => ({ accountId, direction: 'debit', amount })
const credit = (accountId: string, amount: bigint): Posting => ({ accountId, direction: 'credit', amount })

/** A new application's wallet in `currency`, and the world's inflow account it is funded from. */
async function walletAndWorld(currency: Currency = 'usdc', environment: LedgerEnvironment = 'sandbox') {
  const appId = `app-${++appSequence}`
  const wallet = await account({ environment, appId, kind: 'wallet', currency, reference: 'ethereum' })
  const world = await account({ environment, appId: '', kind: 'world', currency, reference: 'ethereum' })
  return { appId, wallet, world }
}

function record(appId: string, postings: Posting[], status: 'pending' | 'posted' = 'posted', environment: LedgerEnvironment = 'sandbox') {
  return inTransaction((ledger) => ledger.record({ environment, appId, reasonType: 'test', reasonId: `r-${appSequence}`, status, postings }))
}

async function rows(table: 'ledger_entries' | 'ledger_postings'): Promise<number> {
  const result = await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return Number(result.n)
}

describe('the ledger', () => {
  it('an entry moves money between accounts; the world may go negative, balances are kept beside the postings', async () => {
    const { appId, wallet, world } = await walletAndWorld()
    await record(appId, [debit(world, 1_000_000n), credit(wallet, 1_000_000n)])
    expect(await balanceOf(wallet)).toMatchObject({ creditsPosted: 1_000_000n, available: 1_000_000n })
    expect(await balanceOf(world)).toMatchObject({ debitsPosted: 1_000_000n, available: -1_000_000n })
    expect(await verifyLedger(db, 'sandbox')).toBeUndefined()
  })

  it('refuses an entry whose debits and credits differ, or with fewer than two postings, or a zero amount: nothing written', async () => {
    const { appId, wallet, world } = await walletAndWorld()
    const before = [await rows('ledger_entries'), await rows('ledger_postings')]
    await expect(record(appId, [debit(world, 10n), credit(wallet, 9n)])).rejects.toThrow("the entry's debits and credits differ by 1 in usdc")
    await expect(record(appId, [debit(world, 10n)])).rejects.toThrow('an entry has at least two postings')
    await expect(record(appId, [debit(world, 0n), credit(wallet, 0n)])).rejects.toThrow('a posting moves a positive amount')
    expect([await rows('ledger_entries'), await rows('ledger_postings')]).toEqual(before)
    expect(await balanceOf(wallet)).toMatchObject({ available: 0n })
  })

  it('refuses an entry that mixes currencies unbalanced, even when the totals match', async () => {
    const { appId, wallet, world } = await walletAndWorld('usdc')
    const eurc = await walletAndWorld('eurc')
    await expect(record(appId, [debit(world, 10n), credit(eurc.wallet, 10n), debit(eurc.world, 5n), credit(wallet, 5n)])).rejects.toThrow(LedgerError)
  })

  it('an account that may not go negative can be emptied exactly, and not by one unit more', async () => {
    const { appId, wallet, world } = await walletAndWorld()
    const payout = await account({ environment: 'sandbox', appId: '', kind: 'world', currency: 'usdc', reference: 'bank' })
    await record(appId, [debit(world, 500n), credit(wallet, 500n)])
    const refused = record(appId, [debit(wallet, 501n), credit(payout, 501n)])
    await expect(refused).rejects.toBeInstanceOf(InsufficientFunds)
    await expect(refused).rejects.toMatchObject({ available: 500n, needed: 501n })
    await record(appId, [debit(wallet, 500n), credit(payout, 500n)])
    expect(await balanceOf(wallet)).toMatchObject({ available: 0n, debitsPosted: 500n, creditsPosted: 500n })
    expect(await verifyLedger(db, 'sandbox')).toBeUndefined()
  })

  it('the database itself refuses a negative balance on an account that may not go negative', async () => {
    const { wallet } = await walletAndWorld()
    await expect(db.updateTable('ledger_accounts').set({ available: '-1' }).where('id', '=', wallet).execute()).rejects.toThrow()
    expect(await balanceOf(wallet)).toMatchObject({ available: 0n })
  })

  it('a pending entry reserves its debits; void releases them, post makes them final; each only once', async () => {
    const { appId, wallet, world } = await walletAndWorld()
    const payout = await account({ environment: 'sandbox', appId: '', kind: 'world', currency: 'usdc', reference: 'wire' })
    await record(appId, [debit(world, 100n), credit(wallet, 100n)])
    const reserved = await record(appId, [debit(wallet, 70n), credit(payout, 70n)], 'pending')
    expect(await balanceOf(wallet)).toMatchObject({ available: 30n, debitsPending: 70n })
    // The reserve counts: a second spend of more than what is left is refused.
    await expect(record(appId, [debit(wallet, 31n), credit(payout, 31n)], 'pending')).rejects.toBeInstanceOf(InsufficientFunds)
    await inTransaction((ledger) => ledger.void(reserved))
    expect(await balanceOf(wallet)).toMatchObject({ available: 100n, debitsPending: 0n, debitsPosted: 0n })
    await expect(inTransaction((ledger) => ledger.post(reserved))).rejects.toThrow('is voided, not pending')
    const spent = await record(appId, [debit(wallet, 70n), credit(payout, 70n)], 'pending')
    await inTransaction((ledger) => ledger.post(spent))
    expect(await balanceOf(wallet)).toMatchObject({ available: 30n, debitsPending: 0n, debitsPosted: 70n })
    expect(await balanceOf(payout)).toMatchObject({ creditsPosted: 70n, creditsPending: 0n })
    await expect(inTransaction((ledger) => ledger.void(spent))).rejects.toThrow('is posted, not pending')
    expect(await verifyLedger(db, 'sandbox')).toBeUndefined()
  })

  it('sandbox and live money never mix: an entry of one environment cannot touch an account of the other', async () => {
    const sandbox = await walletAndWorld('usdc', 'sandbox')
    const live = await walletAndWorld('usdc', 'live')
    await expect(record(sandbox.appId, [debit(sandbox.world, 5n), credit(live.wallet, 5n)], 'posted', 'sandbox')).rejects.toThrow('is not of the sandbox environment')
    await record(live.appId, [debit(live.world, 5n), credit(live.wallet, 5n)], 'posted', 'live')
    expect(await verifyLedger(db, 'live')).toBeUndefined()
    expect(await verifyLedger(db, 'sandbox')).toBeUndefined()
  })

  it('verify finds a stored balance that differs from its postings', async () => {
    const { appId, wallet, world } = await walletAndWorld('eur', 'live')
    await record(appId, [debit(world, 7n), credit(wallet, 7n)], 'posted', 'live')
    await db.updateTable('ledger_accounts').set({ credits_posted: '8', available: '8' }).where('id', '=', wallet).execute()
    expect(await verifyLedger(db, 'live')).toEqual({ kind: 'balance', accountId: wallet, field: 'creditsPosted', stored: 8n, recomputed: 7n })
    await db.updateTable('ledger_accounts').set({ credits_posted: '7', available: '7' }).where('id', '=', wallet).execute()
    expect(await verifyLedger(db, 'live')).toBeUndefined()
  })

  it('amounts past 2^63 (DAI has 18 decimals) stay exact', async () => {
    const { appId, wallet, world } = await walletAndWorld('dai')
    const big = 123_456_789_012_345_678_901_234_567n
    await record(appId, [debit(world, big), credit(wallet, big)])
    await record(appId, [debit(world, 1n), credit(wallet, 1n)])
    expect(await balanceOf(wallet)).toMatchObject({ available: big + 1n })
    expect(await verifyLedger(db, 'sandbox')).toBeUndefined()
  })

  it('100 concurrent debits of a balance that covers 10 succeed exactly 10 times and leave exactly zero', async () => {
    const { appId, wallet, world } = await walletAndWorld()
    const payout = await account({ environment: 'sandbox', appId: '', kind: 'world', currency: 'usdc', reference: 'race' })
    await record(appId, [debit(world, 10n), credit(wallet, 10n)])
    const results = await Promise.allSettled(Array.from({ length: 100 }, () => record(appId, [debit(wallet, 1n), credit(payout, 1n)])))
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(10)
    for (const result of results) if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(InsufficientFunds)
    expect(await balanceOf(wallet)).toMatchObject({ available: 0n })
    expect(await verifyLedger(db, 'sandbox')).toBeUndefined()
  })
})

describe('the ledger under random operations (seeded property test)', () => {
  it('keeps every entry balanced, every balance equal to its recomputation, no protected account below zero, and no unit created or lost', async () => {
    let seed = 20261125
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    const environment: LedgerEnvironment = 'sandbox'
    const currency: Currency = 'pyusd'
    const apps = [`prop-${++appSequence}`, `prop-${++appSequence}`, `prop-${++appSequence}`]
    const world = await account({ environment, appId: '', kind: 'world', currency, reference: 'property' })
    const wallets = await Promise.all(apps.map((appId) => account({ environment, appId, kind: 'wallet', currency, reference: 'property' })))
    const fees = await Promise.all(apps.map((appId) => account({ environment, appId, kind: 'developer_fee', currency, reference: 'property' })))
    const pending: string[] = []
    let refused = 0
    for (let step = 0; step < 300; step++) {
      const i = next(apps.length)
      const appId = apps[i] as string
      const wallet = wallets[i] as string
      const fee = fees[i] as string
      const amount = BigInt(1 + next(1_000))
      const action = next(5)
      try {
        if (action === 0) await record(appId, [debit(world, amount), credit(wallet, amount)])
        else if (action === 1) await record(appId, [debit(wallet, amount), credit(fee, amount / 10n + 1n), credit(world, amount - amount / 10n - 1n)].filter((posting) => posting.amount > 0n))
        else if (action === 2) pending.push(await record(appId, [debit(wallet, amount), credit(world, amount)], 'pending'))
        else if (pending.length > 0) {
          const entry = pending.splice(next(pending.length), 1)[0] as string
          await inTransaction((ledger) => (action === 3 ? ledger.post(entry) : ledger.void(entry)))
        }
      } catch (error) {
        if (!(error instanceof LedgerError)) throw error
        refused++
      }
    }
    expect(refused).toBeGreaterThan(0)
    expect(await verifyLedger(db, environment)).toBeUndefined()
    const all = await new LedgerRepository(db).balances([world, ...wallets, ...fees])
    // Every unit that left the world is somewhere: posted sums over all accounts are zero.
    expect(all.reduce((sum, balance) => sum + balance.creditsPosted - balance.debitsPosted, 0n)).toBe(0n)
    for (const balance of all) if (balance.accountId !== world) expect(balance.available >= 0n).toBe(true)
    const { rows: negative } = await sql<{ n: number }>`select count(*) as n from ledger_accounts where may_go_negative = 0 and available like '-%'`.execute(db)
    expect(Number(negative[0]?.n)).toBe(0)
  })
})
