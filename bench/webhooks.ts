/**
 * Webhook delivery benchmark. This process runs the real app (buildApp: outbox, dispatcher,
 * a fresh SQLite file, or PostgreSQL when DATABASE_URL names one) and commits events through the same `transact` + outbox the routes use; a local
 * receiver runs in a child process. 100 applications with one webhook each, 1 KB events,
 * events spread round-robin, so each event is one delivery.
 *
 * Every figure is printed beside a baseline measured in the same run: a bare keep-alive HTTP
 * client POSTing the same bodies to the same receiver (no database, no signing).
 *
 *   npm run bench:webhooks [-- --seconds 10]
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379 npm run bench:webhooks
 */
import { WebhooksRepository } from '../src/resources/webhooks/repository.js'
import { fork, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { Writable } from 'node:stream'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openDatabase } from '../src/modules/database.js'
import { runUnitOfWork } from '../src/db/unit-of-work.js'
import { DeliveryNotifier } from '../src/delivery/notifier.js'
import { barePost, createOneWebhookApps, TAX_EVENT_DATA } from './api-harness.js'
import { benchDatabase } from './database.js'
import { EventsRepository } from '../src/events/events-repository.js'
import { newId } from '../src/db/time.js'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' } } })
const seconds = Number(values.seconds)
const WEBHOOKS = 100
const PENDING_RETRIES = 100_000

const epochNow = () => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// --- the receiver ---
const receiver = fork(fileURLToPath(new URL('./webhook-receiver.mjs', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
const receiverPort = await new Promise<number>((resolve) => receiver.once('message', (m: { port: number }) => resolve(m.port)))
type Arrivals = [string, number][]
function takeArrivals(): Promise<Arrivals> {
  return new Promise((resolve) => {
    receiver.once('message', (m: { arrivals: Arrivals }) => resolve(m.arrivals))
    receiver.send('take')
  })
}

// --- the app, on a fresh SQLite file ---
const database = await benchDatabase()
const config = { ...loadConfig({ NODE_ENV: 'development', LOG_LEVEL: 'warn' }), database: database.location }
const db = await openDatabase(config.database)
const { appIds, webhookIds } = await createOneWebhookApps(db, WEBHOOKS, receiverPort, 'bench')
const app = await buildApp({ config, db, logStream: new Writable({ write: (_c, _e, done) => done() }) })
await app.ready()

const data = TAX_EVENT_DATA
const envelopeBytes = JSON.stringify({ id: newId(), type: 'tax.updated', created_at: new Date().toISOString(), data }).length

let next = 0
const commitTimes = new Map<string, number>()
/** One event in its own transaction, exactly as a route writes it; returns when committed. */
async function commitEvent(exclude?: number): Promise<void> {
  let index = next++ % WEBHOOKS
  if (index === exclude) index = next++ % WEBHOOKS
  const appId = appIds[index] ?? ''
  const eventId = await app.transact((tx) => tx.events.emit(appId, 'tax.updated', data))
  commitTimes.set(eventId, epochNow())
}

/**
 * Successful deliveries recorded so far: the webhooks' own statistics (100 rows), which the outcome
 * writer keeps in the transaction that records each attempt. Counting the deliveries table
 * instead scanned every delivery row, on the app's own connection, every 50 ms: up to a third of
 * the event loop at the sizes this bench reaches.
 */
async function countSucceeded(): Promise<number> {
  const row = await sql<{ n: number | null }>`select sum(successful_deliveries) as n from webhooks`.execute(db)
  return Number(row.rows[0]?.n ?? 0)
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

let peakRss = process.memoryUsage().rss
const baselineRss = peakRss
const rssSampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss)
}, 50)

// --- baselines: a bare keep-alive client, same receiver, same bodies ---
const body = JSON.stringify({ id: newId(), type: 'tax.updated', created_at: new Date().toISOString(), data })
const agent = new http.Agent({ keepAlive: true })
const rawPost = (id: string) => barePost(agent, receiverPort, body, id)

async function rawThroughput(): Promise<number> {
  let done = 0
  let running = true
  const workers = Array.from({ length: config.webhooks.concurrency }, async () => {
    while (running) {
      await rawPost('raw')
      done++
    }
  })
  await sleep(1000)
  const start = done
  await sleep(seconds * 1000)
  const rate = (done - start) / seconds
  running = false
  await Promise.all(workers)
  await takeArrivals()
  return rate
}

/** Commits that failed (e.g. no pooled connection within its timeout), by error message: reported, not fatal. */
const failedSendErrors = new Map<string, number>()

/** Sends at `perSecond` for the run's length (ticks of 10 ms); resolves once every send has ended. */
async function paced(perSecond: number, send: () => Promise<void>, durationS = seconds): Promise<void> {
  const perTick = perSecond / 100
  const start = performance.now()
  let sent = 0
  const inflight: Promise<void>[] = []
  while (performance.now() - start < durationS * 1000) {
    const due = Math.floor(((performance.now() - start) / 10) * perTick)
    while (sent < due) {
      inflight.push(
        send().catch((error: unknown) => {
          const message = error instanceof Error ? error.message : String(error)
          failedSendErrors.set(message, (failedSendErrors.get(message) ?? 0) + 1)
        }),
      )
      sent++
    }
    await sleep(1)
    if (inflight.length > 1000) await Promise.all(inflight.splice(0))
  }
  await Promise.all(inflight)
}

async function rawLatency(): Promise<number[]> {
  const sentAt = new Map<string, number>()
  await paced(1000, async () => {
    const id = newId()
    sentAt.set(id, epochNow())
    await rawPost(id)
  })
  await sleep(500)
  return latencies(await takeArrivals(), sentAt)
}

function latencies(arrivals: Arrivals, startedAt: Map<string, number>, skip?: Set<string>): number[] {
  const first = new Map<string, number>()
  for (const [id, at] of arrivals) if (!first.has(id)) first.set(id, at)
  const out: number[] = []
  for (const [id, at] of first) {
    const t0 = startedAt.get(id)
    if (t0 !== undefined && !skip?.has(id)) out.push(at - t0)
  }
  return out.sort((a, b) => a - b)
}

// --- delivery scenarios ---
async function deliveryThroughput(): Promise<number> {
  let running = true
  let committed = 0
  let succeeded = await countSucceeded()
  const producer = (async () => {
    while (running) {
      // Keep a backlog, so the dispatcher, not the producer, sets the pace. The 200 commits run
      // at once, as 200 requests would: one after another, each waits for its own group commit
      // and sync, and the producer (about 1,000 commits/s on SQLite) set the figure instead.
      if (committed - succeeded < 3000) {
        await Promise.all(Array.from({ length: 200 }, () => commitEvent()))
        committed += 200
      } else await sleep(5)
    }
  })()
  const baseSucceeded = succeeded
  committed = 0
  const counter = setInterval(() => {
    void countSucceeded().then((n) => {
      succeeded = n - baseSucceeded
    })
  }, 50)
  await sleep(1000)
  const start = await countSucceeded()
  await sleep(seconds * 1000)
  const end = await countSucceeded()
  running = false
  clearInterval(counter)
  await producer
  // Drain what is left before the next scenario.
  for (let i = 0; i < 600; i++) {
    const pending = await sql<{ n: number }>`select count(*) as n from deliveries where status = 'pending'`.execute(db)
    if (Number(pending.rows[0]?.n ?? 0) === 0) break
    await sleep(50)
  }
  await takeArrivals()
  return (end - start) / seconds
}

async function deliveryLatency(exclude?: number, durationS = seconds): Promise<number[]> {
  commitTimes.clear()
  await paced(1000, () => commitEvent(exclude), durationS)
  await sleep(1000)
  return latencies(await takeArrivals(), commitTimes)
}

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a')
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`
const rows: string[][] = []

console.log(`envelope: ${envelopeBytes} bytes; ${WEBHOOKS} webhooks; ${seconds} s per measurement; concurrency ${config.webhooks.concurrency}, ${config.webhooks.perWebhookConcurrency} per webhook`)

const rawRate = await rawThroughput()
const rate = await deliveryThroughput()
rows.push(['sustained successful deliveries/s', rate.toFixed(0), `bare client ${rawRate.toFixed(0)} req/s (${((100 * rate) / rawRate).toFixed(0)} %)`, '>= 2,000/s'])

const raw = await rawLatency()
// The clean run lasts as long as the hanging run below (past one timeout), so their p99s compare like for like.
const hangSeconds = Math.max(seconds, Math.ceil(config.webhooks.timeoutMs / 1000) + 5)
const clean = await deliveryLatency(undefined, hangSeconds)
rows.push([`commit -> receiver first byte at 1,000 events/s (${hangSeconds} s run): p50 / p99 (ms)`, `${fmt(percentile(clean, 50))} / ${fmt(percentile(clean, 99))}`, `bare client send -> receiver ${fmt(percentile(raw, 50))} / ${fmt(percentile(raw, 99))}`, 'p50 <= 5, p99 <= 25'])

// One webhook hangs until its timeout: its attempts sit on the wire for the whole timeout.
await db.updateTable('webhooks').set({ url: `http://127.0.0.1:${receiverPort}/hang` }).where('id', '=', webhookIds[0] ?? '').execute()
commitTimes.clear()
await paced(1000, () => commitEvent(), hangSeconds)
await sleep(1000)
const hangArrivals = await takeArrivals()
const hangIds = new Set<string>()
for (const row of await db.selectFrom('deliveries').select('event_id').where('webhook_id', '=', webhookIds[0] ?? '').execute()) hangIds.add(row.event_id)
const hanging = latencies(hangArrivals, commitTimes, hangIds)
const timedOut = await db.selectFrom('delivery_attempts').select('id').where('webhook_id', '=', webhookIds[0] ?? '').where('error', 'like', 'timed out%').execute()
rows.push([
  `same, one webhook hanging (${hangSeconds} s run, ${timedOut.length} attempts timed out): p99 of the others (ms)`,
  fmt(percentile(hanging, 99)),
  `clean run p99 ${fmt(percentile(clean, 99))} (${((100 * percentile(hanging, 99)) / percentile(clean, 99)).toFixed(0)} %)`,
  'within 10 % of the clean run',
])
await app.transact(async (tx) => {
  const owner = appIds[0] ?? ''
  await new WebhooksRepository(tx.db, tx.unit).delete(owner, webhookIds[0] ?? '')
})

// 100,000 pending retries: events queued through the outbox, each failed once and due in an hour.
// In transactions of 5,000 events (one of 100,000 outlived PostgreSQL's statement timeout), each
// touching only the rows it wrote: updating every pending row would wait for the dispatcher's own
// rows while holding every webhook (a deadlock on PostgreSQL).
for (let done = 0; done < PENDING_RETRIES; done += 5_000) {
  const since = new Date().toISOString()
  await runUnitOfWork(db, app.notifier, async (unit) => {
    const tx = unit.tx
    const events = new EventsRepository(tx, unit)
    for (let i = done; i < Math.min(PENDING_RETRIES, done + 5_000); i++) await events.emit(appIds[1 + (i % (WEBHOOKS - 1))] ?? '', 'tax.updated', data)
    await tx
      .updateTable('deliveries')
      .set({ attempts: 1, next_attempt_at: new Date(Date.now() + 3_600_000).toISOString() })
      .where('status', '=', 'pending')
      .where('created_at', '>=', since)
      .execute()
  })
}
const pendingRetries = Number((await sql<{ n: number }>`select count(*) as n from deliveries where status = 'pending'`.execute(db)).rows[0]?.n ?? 0)
const withRetries = await deliveryLatency(0)
rows.push([
  `commit -> receiver p99 with ${pendingRetries.toLocaleString('en')} pending retries queued (ms)`,
  fmt(percentile(withRetries, 99)),
  `clean run p99 ${fmt(percentile(clean, 99))}`,
  '(no goal: the queue must not slow the due work)',
])
rows.push(['peak RSS of this bench process (app + producer + setup, under tsx)', mb(peakRss), `before the first measurement ${mb(baselineRss)}`, ''])
await app.close()

// The server's own memory: the built server (dist/server.js) on this database, with the
// pending retries still queued, delivering 1,000 events/s that this process commits to the
// same file (the server finds them by polling every 10 ms). Linux /proc gives its peak RSS.
const statusOf = (pid: number, field: string) => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(field))
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? Number.NaN) * 1024
}
const server = spawn(process.execPath, ['dist/server.js'], {
  env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: database.url, LOG_LEVEL: 'warn', NODE_ENV: 'development', WEBHOOK_POLL_MS: '10' },
  stdio: ['ignore', 'ignore', 'inherit'],
})
await sleep(2000)
const serverPid = server.pid ?? 0
const idleServerRss = statusOf(serverPid, 'VmRSS')
const producerDb = await openDatabase(config.database)
const producerSignals = new DeliveryNotifier()
await paced(1000, async () => {
  const index = 1 + (next++ % (WEBHOOKS - 1))
  await runUnitOfWork(producerDb, producerSignals, (unit) => new EventsRepository(unit.tx, unit).emit(appIds[index] ?? '', 'tax.updated', data))
})
await sleep(1000)
const serverPeak = statusOf(serverPid, 'VmHWM')
const stillPending = Number((await sql<{ n: number }>`select count(*) as n from deliveries where status = 'pending'`.execute(producerDb)).rows[0]?.n ?? 0)
const delivered = (await takeArrivals()).length
server.kill('SIGTERM')
await new Promise((resolve) => server.once('exit', resolve))
await producerDb.destroy()
rows.push([
  `server peak RSS (VmHWM) with ${pendingRetries.toLocaleString('en')} pending retries, delivering 1,000 events/s`,
  mb(serverPeak),
  `same server idle after start ${mb(idleServerRss)}; ${delivered.toLocaleString('en')} delivered meanwhile, ${stillPending.toLocaleString('en')} pending at the end`,
  '<= 256 MB',
])

clearInterval(rssSampler)
console.log('')
const failedSends = [...failedSendErrors.values()].reduce((sum, count) => sum + count, 0)
console.log(database.label + (failedSends > 0 ? ` (${failedSends} paced commits failed and were not sent)` : ''))
for (const [message, count] of failedSendErrors) console.log(`- ${count} failed with: ${message}`)
console.log('| measurement | figure | baseline, same run | goal |')
console.log('|---|---|---|---|')
for (const row of rows) console.log(`| ${row.join(' | ')} |`)

agent.destroy()
receiver.kill()
await database.drop()
