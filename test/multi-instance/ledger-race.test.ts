import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { writeTransaction } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { LedgerRepository, verifyLedger } from '../../src/ledger/ledger.js'
import { dropFreshDatabases, freshDatabase } from '../backend.js'
import { cleanUp, exitWithin, launch } from '../processes.js'

const DEBITS = fileURLToPath(new URL('../fixtures/ledger-debits.mjs', import.meta.url))

afterAll(async () => {
  cleanUp()
  await dropFreshDatabases()
})

describe('the ledger across processes on one PostgreSQL', () => {
  it('100 concurrent debits of a balance that covers 10, from two processes, succeed exactly 10 times and leave exactly zero', async () => {
    const fresh = await freshDatabase('postgres')
    const db = await openDatabase(parseDatabaseUrl(fresh.url))
    try {
      const { wallet, payout } = await writeTransaction(db, async (tx) => {
        const ledger = new LedgerRepository(tx)
        const wallet = await ledger.account({ environment: 'sandbox', appId: 'race', kind: 'wallet', currency: 'usdc', reference: 'ethereum' })
        const world = await ledger.account({ environment: 'sandbox', appId: '', kind: 'world', currency: 'usdc', reference: 'ethereum' })
        const payout = await ledger.account({ environment: 'sandbox', appId: '', kind: 'world', currency: 'usdc', reference: 'bank' })
        await ledger.record({ environment: 'sandbox', appId: 'race', reasonType: 'test', reasonId: 'fund', status: 'posted', postings: [{ accountId: world, direction: 'debit', amount: 10n }, { accountId: wallet, direction: 'credit', amount: 10n }] })
        return { wallet, payout }
      })
      const processes = [0, 1].map(() => launch(DEBITS, [fresh.url, wallet, payout, '50'], {}))
      const results: { succeeded: number; refused: number; failed: string[] }[] = []
      for (const running of processes) {
        const exit = await exitWithin(running, 30_000)
        expect(exit.code, running.stderr()).toBe(0)
        results.push(JSON.parse(running.stdout()) as { succeeded: number; refused: number; failed: string[] })
      }
      expect(results.flatMap((result) => result.failed)).toEqual([])
      expect(results.reduce((sum, result) => sum + result.succeeded, 0)).toBe(10)
      expect(results.reduce((sum, result) => sum + result.refused, 0)).toBe(90)
      expect((await new LedgerRepository(db).balances([wallet]))[0]?.available).toBe(0n)
      expect(await verifyLedger(db, 'sandbox')).toBeUndefined()
    } finally {
      await db.destroy()
    }
  })
})
