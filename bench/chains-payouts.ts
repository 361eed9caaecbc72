/**
 * bench:payouts (issue 42, "Speed"): the payout sender (src/chains/sender.ts) against a real anvil
 * with automine (each transaction mined in its own block as it arrives) and the tests'
 * TestStablecoin, on a fresh database per backend (SQLite file, or a PostgreSQL database made and
 * dropped on DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test).
 *
 * `--payouts` live payouts to as many different addresses are queued at once (LivePayoutQueue, as a
 * drain queues its payout; no drain follows them, so the figures are the sender's alone), then
 * one sender runs (rounds every 50 ms while idle) until every payout is confirmed (confirmations 1:
 * automine makes no block without a transaction). Prints payouts sent (broadcast) and confirmed per
 * minute, from the sender's start to the last one, and the bench process's CPU time (user + system,
 * process.cpuUsage) spent during the sender's rounds, per payout: signing, the database (SQLite runs
 * in this process; PostgreSQL's own CPU is not counted) and the RPC calls' client side.
 *
 *   npm run bench:payouts [-- --payouts 200 --backends sqlite,postgres]
 */
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import type { Address } from 'viem'
import { AppsRepository } from '../src/apps/repository.js'
import type { ChainConfig } from '../src/chains/config.js'
import { LivePayoutQueue } from '../src/chains/payouts.js'
import { PayoutSender } from '../src/chains/sender.js'
import { parseDatabaseUrl } from '../src/config.js'
import { writeTransaction } from '../src/db/database.js'
import type { SignalSink } from '../src/db/unit-of-work.js'
import { DomainHooks } from '../src/events/hooks.js'
import { transactOn } from '../src/events/transact.js'
import { ExchangeRates } from '../src/ledger/rates.js'
import { openDatabase } from '../src/modules/database.js'
import { freshDatabase } from '../test/backend.js'
import { startAnvil } from '../test/helpers/anvil.js'
import { testXpub } from '../test/helpers/receiving-key.js'
import { deployToken, mint } from '../test/helpers/test-token.js'

type Backend = 'sqlite' | 'postgres'

const { values } = parseArgs({ options: { payouts: { type: 'string', default: '200' }, backends: { type: 'string', default: 'sqlite,postgres' } } })
const count = Number(values.payouts)
if (!Number.isSafeInteger(count) || count < 1) throw new Error('--payouts must be a positive integer')
const backends = values.backends.split(',') as Backend[]
const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const noSignals: SignalSink = { signalStatements: () => undefined, committed: () => undefined }
const money = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 0, achDelayMs: 0 }, now: Date.now }

interface Result {
  backend: Backend
  sentPerMinute: number
  confirmedPerMinute: number
  cpuMsPerPayout: number
  rounds: number
  seconds: number
}

async function run(backend: Backend): Promise<Result> {
  const anvil = await startAnvil({ accounts: 3 })
  const fresh = await freshDatabase(backend)
  const db = await openDatabase(parseDatabaseUrl(fresh.url))
  try {
    const token = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
    const hotWallet = anvil.accounts[1]
    if (hotWallet === undefined) throw new Error('anvil has no second account')
    await mint(anvil, token, hotWallet.address, BigInt(count) * 2_000_000n)
    const chain: ChainConfig = { chain: 'base', chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: token.toLowerCase() }, confirmations: 1, pollIntervalMs: 50, maxBlockRange: 100, startBlock: 0, rpcTimeoutMs: 5_000 }
    const app = await new AppsRepository(db).createApp('bench-payouts')
    const queue = new LivePayoutQueue({ file: 'bench', receivingXpub: testXpub(), hotWallet, chains: [chain] })
    await writeTransaction(db, async (tx) => {
      for (let i = 0; i < count; i++) {
        const toAddress: Address = `0x${randomBytes(20).toString('hex')}`
        await queue.request(tx, { chain: 'base', environment: 'live', appId: app.id, ownerType: 'drain', ownerId: `bench-${i}`, currency: 'usdc', toAddress, amount: 1_000_000n + BigInt(i) }, Date.now())
      }
    })
    // No subscriber: the payouts are the bench's own, followed by no drain.
    const transact = transactOn(db, noSignals, new DomainHooks([], { publicUrl: () => 'http://127.0.0.1', money }))
    const loud = (details: object, message: string) => process.stderr.write(`[sender] ${message} ${JSON.stringify(details)}\n`)
    const sender = new PayoutSender(chain, hotWallet, { db, transact, log: { info: () => undefined, warn: loud, error: loud }, roundMs: 50 })
    let cpuMicros = 0
    let rounds = 0
    const round = sender.round.bind(sender)
    sender.round = async () => {
      const before = process.cpuUsage()
      try {
        return await round()
      } finally {
        const used = process.cpuUsage(before)
        cpuMicros += used.user + used.system
        rounds++
      }
    }
    log(`${backend}: ${count} payouts queued; the sender starts`)
    const started = performance.now()
    let sentAt: number | undefined
    sender.start()
    for (;;) {
      const rows = await db.selectFrom('chain_payouts').select(['status']).select((eb) => eb.fn.countAll<string>().as('n')).groupBy('status').execute()
      const of = (statuses: string[]) => rows.filter((row) => statuses.includes(row.status)).reduce((sum, row) => sum + Number(row.n), 0)
      if (of(['failed']) > 0) throw new Error(`${of(['failed'])} payout(s) failed`)
      if (sentAt === undefined && of(['submitted', 'confirmed']) === count) sentAt = performance.now()
      if (of(['confirmed']) === count) break
      await sleep(100)
    }
    const seconds = (performance.now() - started) / 1000
    await sender.stop()
    const sentSeconds = ((sentAt ?? performance.now()) - started) / 1000
    return { backend, sentPerMinute: (60 * count) / sentSeconds, confirmedPerMinute: (60 * count) / seconds, cpuMsPerPayout: cpuMicros / 1000 / count, rounds, seconds }
  } finally {
    await db.destroy()
    await fresh.drop()
    await anvil.close()
  }
}

const results: Result[] = []
for (const backend of backends) results.push(await run(backend))
console.log(`\npayouts on anvil (automine, confirmations 1), ${count} queued at once, one sender`)
console.log('backend    sent/min  confirmed/min  CPU per payout  rounds  seconds')
for (const result of results) {
  console.log(
    `${result.backend.padEnd(9)} ${result.sentPerMinute.toFixed(0).padStart(9)} ${result.confirmedPerMinute.toFixed(0).padStart(14)} ${`${result.cpuMsPerPayout.toFixed(2)} ms`.padStart(15)} ${String(result.rounds).padStart(7)} ${result.seconds.toFixed(1).padStart(8)}`,
  )
}
