import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { type Db, writeTransaction } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { LedgerRepository } from '../../src/ledger/ledger.js'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../backend.js'
import { CLI, cleanUp, exitWithin, launch } from '../processes.js'

let fresh: FreshDatabase
let db: Db
let wallet: string

beforeAll(async () => {
  fresh = await freshDatabase()
  db = await openDatabase(parseDatabaseUrl(fresh.url))
  await writeTransaction(db, async (tx) => {
    const ledger = new LedgerRepository(tx)
    wallet = await ledger.account({ environment: 'live', appId: 'app', kind: 'wallet', currency: 'usdc', reference: 'ethereum' })
    const world = await ledger.account({ environment: 'live', appId: '', kind: 'world', currency: 'usdc', reference: 'ethereum' })
    await ledger.record({ environment: 'live', appId: 'app', reasonType: 'test', reasonId: 't', status: 'posted', postings: [{ accountId: world, direction: 'debit', amount: 5n }, { accountId: wallet, direction: 'credit', amount: 5n }] })
  })
})
afterAll(async () => {
  await db.destroy()
  cleanUp()
  await dropFreshDatabases()
})

async function verify(...args: string[]) {
  const running = launch(CLI, ['ledger', 'verify', ...args], { DATABASE_URL: fresh.url })
  const exit = await exitWithin(running, 20_000)
  return { code: exit.code, stdout: running.stdout(), stderr: running.stderr() }
}

describe('devplatform ledger verify', () => {
  it('checks each environment on its own and exits 0 when the ledger is exact', async () => {
    const result = await verify('--json')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual([
      { environment: 'sandbox', ok: true },
      { environment: 'live', ok: true },
    ])
    expect((await verify()).stdout).toBe('sandbox: ok\nlive: ok\n')
  })

  it('exits 1 with the first difference when a stored balance differs from its postings; only the environment asked for', async () => {
    await db.updateTable('ledger_accounts').set({ credits_posted: '6', available: '6' }).where('id', '=', wallet).execute()
    try {
      const result = await verify('--json', '--environment', 'live')
      expect(result.code).toBe(1)
      expect(JSON.parse(result.stdout)).toEqual([
        { environment: 'live', ok: false, difference: { kind: 'balance', accountId: wallet, field: 'creditsPosted', stored: '6', recomputed: '5' } },
      ])
      expect((await verify('--environment', 'sandbox')).code).toBe(0)
    } finally {
      await db.updateTable('ledger_accounts').set({ credits_posted: '5', available: '5' }).where('id', '=', wallet).execute()
    }
  })

  it('an unknown environment is a usage error (exit 2, one line)', async () => {
    const result = await verify('--environment', 'production')
    expect(result.code).toBe(2)
    expect(result.stderr).toBe('devplatform: --environment must be sandbox or live for "ledger verify" (got production)\n')
  })
})
