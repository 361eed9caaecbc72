/**
 * API benchmark. Runs the built server (dist/server.js) as a child process on a fresh database
 * (SQLite, or PostgreSQL when DATABASE_URL names one; REDIS_URL is passed on) and loads it with
 * autocannon from this process, on the same machine. The operations with a floor (GET, DELETE and
 * POST of the baseline group) are each measured right after their floor (bench/fastify-floor.mjs:
 * a bare Fastify doing only what any server must do for that operation on the same database, its
 * own process), and their share of it is the figure with a goal. A bare Fastify 5 hello world
 * (bench/fastify-hello.mjs, logger off, GET / → {hello:'world'}) is measured first, for reference.
 * Writes go through an application with ONE ACTIVE webhook pointing at a local receiver
 * (bench/webhook-receiver.mjs, its own process), so every write of the server also delivers its
 * event; the tables count the deliveries that arrived by 3 s after the run.
 *
 * Groups (`--only baseline,webhooks,rows`; all by default), each on its own fresh database and server:
 *
 *   baseline  GET /health/public (no auth, no database), GET /webhooks/{id}, DELETE /webhooks/{id}
 *             of existing inactive webhooks, DELETE /webhooks/{id} missing (404), POST
 *             /customers/{id}/liquidation_addresses, and the floor of the GET, the DELETE and the
 *             POST. Each DELETE takes the next webhook of a pool of inactive webhooks seeded
 *             beforehand, big enough for `seconds` × 25,000 req/s (one pool for the server, one for
 *             its floor); the pools belong to an application of their own (its own key), because
 *             the outbox reads every webhook of the writing application (deleted ones too) to find
 *             the active ones.
 *   webhooks  the same POST for an application with 1 active webhook and for another (its own
 *             key) with 1,000 active webhooks, all at the local receiver: the write's cost should
 *             not depend on its application's webhooks (goal: within 20 %).
 *   rows      GET /webhooks/{id}, GET /customers?name=er12 (the list's partial, case-insensitive
 *             name filter), DELETE /webhooks/{id} (existing, inactive), POST liquidation address,
 *             and the dispatcher's claim, once with --rows-small and once with --rows-large rows in
 *             each of customers, liquidation addresses, webhooks and deliveries (goal: within 20 %).
 *             Seeded in bulk (bench/api-seed.ts), then ANALYZE (VACUUM ANALYZE on PostgreSQL)
 *             and a checkpoint. The benchmarked application owns a fixed share (--own-rows
 *             customers, addresses and ended deliveries; 11 webhooks); the rest belongs to
 *             other applications (one per 1,000 rows), and the pending backlog
 *             (1,000 retries not yet due on 100 other webhooks) is the same in both sizes: the
 *             question is whether a request's cost grows with the data around it, not with its
 *             own application's data (a name filter reads all of its application's customers).
 *             The DELETE pool (min(5,000, rows-small / 2) webhooks, counted in the webhooks' rows)
 *             is used up exactly (autocannon `amount`), the same number in both sizes.
 *             The claim is timed in this process before the server starts, as the dispatcher's
 *             claimAndStart does it: QueueScan.due (windows of DeliveriesRepository.dueQueues,
 *             reads), FairShare's plan with the default caps, then dueOf + claim in a write transaction, rolled back so
 *             the same 100 due deliveries (10 webhooks of 10 applications) are claimed every time.
 *
 * Goals (share of the floor's rate): GET /webhooks/{id} ≥ 85 % on SQLite and ≥ 75 % on PostgreSQL
 * + Redis, and ≥ 75 % of the stricter floor (statistics as stored counters) on both; DELETE ≥ 85 %
 * and POST ≥ 70 % on SQLite, both ≥ 60 % on PostgreSQL + Redis. Pair ratios (1,000 vs 1 webhooks, large vs
 * small): ≥ 80 %. Rates are requests answered per second (an `amount` run: up to its last
 * answer); the claim's is claims per second, one after another.
 *
 *   npm run bench:api [-- --seconds 10 --connections 50 --rows-small 10000 --rows-large 1000000 --own-rows 1000 --only baseline,rows]
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379 npm run bench:api
 */
import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { loadWebhookConfig } from '../src/config.js'
import { type Db, writeTransaction } from '../src/db/database.js'
import { openDatabase } from '../src/modules/database.js'
import { DeliveriesRepository } from '../src/events/deliveries-repository.js'
import { newId } from '../src/db/time.js'
import { generateSigningSecret } from '../src/resources/webhooks/routes.js'
import { FairShare } from '../src/delivery/fair-share.js'
import { QueueScan } from '../src/delivery/queue-scan.js'
import {
  bulkConnection,
  cancelDue,
  countRows,
  DUE_PER_WEBHOOK,
  DUE_WEBHOOKS,
  OWN_CUSTOMER_ID,
  otherAppsFor,
  seedRows,
  seedWebhookPool,
} from './api-seed.js'
import {
  createApplication,
  createCustomer,
  deletePool,
  forkChild,
  getWebhook,
  log,
  onFreshDatabase,
  postAddress,
  sleep,
  startFloor,
  startServer,
} from './api-harness.js'

const GROUPS = ['baseline', 'webhooks', 'rows'] as const
type GroupName = (typeof GROUPS)[number]

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    'rows-small': { type: 'string', default: '10000' },
    'rows-large': { type: 'string', default: '1000000' },
    'own-rows': { type: 'string', default: '1000' },
    only: { type: 'string', multiple: true },
  },
})
function positive(name: string, text: string): number {
  const n = Number(text)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer (got ${JSON.stringify(text)})`)
  return n
}
const duration = positive('seconds', values.seconds)
const connections = positive('connections', values.connections)
const rowsSmall = positive('rows-small', values['rows-small'])
const rowsLarge = positive('rows-large', values['rows-large'])
const ownRows = positive('own-rows', values['own-rows'])
const only = new Set<GroupName>()
for (const name of (values.only ?? [...GROUPS]).flatMap((value) => value.split(','))) {
  const group = GROUPS.find((known) => known === name.trim())
  if (group === undefined) throw new Error(`--only: unknown group ${JSON.stringify(name)} (groups: ${GROUPS.join(', ')})`)
  only.add(group)
}

/** An upper bound on any write scenario's rate on this kind of machine: sizes the baseline's DELETE pool. */
const DELETE_MAX_RPS = 25_000
/** The rows group's DELETE pool: used up exactly, the same in both sizes. */
const ROWS_POOL = Math.min(5_000, Math.floor(rowsSmall / 2))
const MANY_WEBHOOKS = 1_000
/** How long deliveries may keep arriving after a write scenario before they are counted. */
const SETTLE_MS = 3_000
/** The dispatcher's MAX_CLAIM (src/delivery/dispatcher.ts, not exported) */
const MAX_CLAIM = 500
const NAME_FILTER = 'er12'
const postgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '')
/** Goals of a share of the floor, in %, by backend (none where the issue sets none). */
const FLOOR_GOALS = {
  get: postgres ? 75 : 85,
  getStoredCounters: 75,
  delete: postgres ? 60 : 85,
  post: postgres ? 60 : 70,
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const thousands = (n: number) => Math.round(n).toLocaleString('en-US')

// --- the children: the webhook receiver and the bare Fastify hello --------------------------

const receiver = await forkChild('./webhook-receiver.mjs')
const receiverUrl = `http://127.0.0.1:${receiver.port}/hook`
/** Deliveries that reached the receiver since the last call. */
function takeArrivals(): Promise<number> {
  return new Promise((resolve) => {
    receiver.child.once('message', (message: { arrivals: unknown[] }) => resolve(message.arrivals.length))
    receiver.child.send('take')
  })
}

// --- measuring --------------------------------------------------------------------------------

interface Row {
  name: string
  rate: number
  unit: 'req/s' | 'claims/s'
  p50: number
  p99: number
  non2xx?: number
  /** connection errors and timeouts */
  errors?: number
  /** writes: deliveries that arrived, of those the 2xx writes made */
  delivered?: { arrived: number; expected: number }
  /** the same operation on the floor, measured right before it */
  floor?: Row
  /** the goal of its share of the floor's rate, in % */
  goal?: number
  note?: string
}

interface MeasureOptions {
  /** each 2xx writes this many deliveries, to be counted at the receiver */
  deliveriesPerWrite?: number
  goal?: number
}

async function measure(name: string, options: autocannon.Options, extra: MeasureOptions = {}): Promise<Row> {
  log(`${name}…`)
  if (extra.deliveriesPerWrite !== undefined) await takeArrivals()
  // An `amount` run's rate is counted from the start to its last response: autocannon's own
  // duration ends on its next one-second tick, up to a second after the last request.
  const started = performance.now()
  let lastResponse = started
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ connections, ...(options.amount === undefined ? { duration } : {}), ...options }, (error, done) =>
      error === null || error === undefined ? resolve(done) : reject(error instanceof Error ? error : new Error(String(error))),
    )
    if (options.amount !== undefined) {
      instance.on('response', () => {
        lastResponse = performance.now()
      })
    }
  })
  const row: Row = {
    name,
    rate: options.amount === undefined ? result.requests.total / result.duration : (result.requests.total / (lastResponse - started)) * 1000,
    unit: 'req/s',
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  }
  if (extra.goal !== undefined) row.goal = extra.goal
  if (extra.deliveriesPerWrite !== undefined) {
    const expected = result['2xx'] * extra.deliveriesPerWrite
    let arrived = await takeArrivals()
    const until = Date.now() + SETTLE_MS
    while (arrived < expected && Date.now() < until) {
      await sleep(250)
      arrived += await takeArrivals()
    }
    row.delivered = { arrived, expected }
  }
  return row
}

const hello = await forkChild('./fastify-hello.mjs')
const helloRow = await measure('bare Fastify hello (GET / → {hello:"world"})', { url: `http://127.0.0.1:${hello.port}/` })
hello.child.kill('SIGTERM')
const helloRps = helloRow.rate

// --- the server and its applications ------------------------------------------------------------


// --- the scenarios ------------------------------------------------------------------------------


// --- printing -----------------------------------------------------------------------------------

const ratio = (part: number, whole: number) => `${((part / whole) * 100).toFixed(0)} %`
const verdict = (value: number, goal: number) => `≥ ${goal} %: ${value * 100 >= goal ? 'met' : 'missed'}`
const ms = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2))

function printTable(title: string, rows: Row[]): void {
  const withFloor = rows.some((row) => row.floor !== undefined)
  const floorHead = withFloor ? ' floor | share of floor | goal (share of floor) |' : ''
  const lines = [
    `### ${title}`,
    '',
    `| scenario | rate |${floorHead} vs hello | p50 ms | p99 ms | non-2xx | events delivered |`,
    `|---|---|${withFloor ? '---|---|---|' : ''}---|---|---|---|---|`,
  ]
  for (const row of rows) {
    const failures = row.non2xx === undefined ? '–' : `${thousands(row.non2xx)}${row.errors ? ` (+${thousands(row.errors)} errors)` : ''}`
    const delivered = row.delivered === undefined ? '–' : `${thousands(row.delivered.arrived)} of ${thousands(row.delivered.expected)}`
    const floor = row.floor
    const floorCells = !withFloor
      ? ''
      : floor === undefined
        ? ' | | |'
        : (row.non2xx ?? 0) + (floor.non2xx ?? 0) > 0
          ? ` ${thousands(floor.rate)} req/s | no share: non-2xx answers | – |`
          : ` ${thousands(floor.rate)} req/s | ${ratio(row.rate, floor.rate)} | ${row.goal === undefined ? '–' : verdict(row.rate / floor.rate, row.goal)} |`
    lines.push(
      `| ${row.name} | ${thousands(row.rate)} ${row.unit} |${floorCells} ${row.unit === 'req/s' ? ratio(row.rate, helloRps) : '–'} | ${ms(row.p50)} | ${ms(row.p99)} | ${failures} | ${delivered} |`,
    )
  }
  console.log(`${lines.join('\n')}\n`)
}

interface Pair {
  name: string
  first: { label: string; row: Row }
  second: { label: string; row: Row }
}

function printPairs(title: string, pairs: Pair[]): void {
  const lines = [`### ${title}`, '', '| operation | rate | rate | second / first | goal |', '|---|---|---|---|---|']
  for (const pair of pairs) {
    const value = pair.second.row.rate / pair.first.row.rate
    lines.push(
      `| ${pair.name} | ${pair.first.label}: ${thousands(pair.first.row.rate)} ${pair.first.row.unit} | ${pair.second.label}: ${thousands(pair.second.row.rate)} ${pair.second.row.unit} | ${ratio(pair.second.row.rate, pair.first.row.rate)} | ${verdict(value, 80)} |`,
    )
  }
  console.log(`${lines.join('\n')}\n`)
}

const databaseName = postgres ? `PostgreSQL${process.env.REDIS_URL ? ' + Redis' : ' (no REDIS_URL: in-process rate limiter)'}` : 'SQLite (a temporary file)'
console.log(
  `\n## bench:api: ${databaseName}, Node ${process.version}, ${connections} connections, ${duration} s per scenario, client and server on this machine (${availableParallelism()} cores)\n`,
)
console.log(`Bare Fastify hello, the reference for every "vs hello": ${thousands(helloRps)} req/s, p50 ${helloRow.p50} / p99 ${helloRow.p99} ms.\n`)
console.log(
  `Events delivered: deliveries that reached the receiver by ${SETTLE_MS / 1000} s after the run, of those the 2xx answers made (up to one write per connection was still in flight when autocannon stopped counting, so a few more can arrive than were counted).\n`,
)
const timings: string[] = []

// --- baseline -----------------------------------------------------------------------------------

if (only.has('baseline')) {
  const started = Date.now()
  const pool = Math.ceil(duration * DELETE_MAX_RPS)
  const rows = await onFreshDatabase(async (database) => {
    const db = await openDatabase(database.location)
    const app = await createApplication(db, 'bench', 1, receiverUrl)
    const customerId = await createCustomer(db, app.id)
    const poolApp = await createApplication(db, 'deletes', 0, receiverUrl)
    // The server deletes the first `pool` webhooks, its floor the next `pool`.
    const bulk = bulkConnection(database.location, db)
    await seedWebhookPool(bulk.db, poolApp.id, 2 * pool, generateSigningSecret())
    await bulk.close()
    await db.destroy()
    const server = await startServer(database)
    const floor = await startFloor(database)
    /** The operation on its floor, then on the server, back to back. */
    const againstFloor = async (name: string, onFloor: autocannon.Options, onServer: autocannon.Options, extra: MeasureOptions = {}): Promise<Row> => {
      const floorRow = await measure(`${name} (floor)`, onFloor)
      return { ...(await measure(name, onServer, extra)), floor: floorRow }
    }
    /** The GET after its floor and the stricter one (statistics as stored counters), against each. */
    const againstBothFloors = async (): Promise<Row[]> => {
      const summing = await measure('GET /webhooks/{id} (floor)', getWebhook(floor, app))
      const storedCounters = await measure('GET /webhooks/{id} (stored-counters floor)', { ...getWebhook(floor, app), url: `${floor.base}/stored-counters/api/v0/webhooks/${app.webhookIds[0] ?? ''}` })
      const get = await measure('GET /webhooks/{id}', getWebhook(server, app), { goal: FLOOR_GOALS.get })
      return [
        { ...get, floor: summing },
        { ...get, name: 'GET /webhooks/{id}, against the stored-counters floor', floor: storedCounters, goal: FLOOR_GOALS.getStoredCounters },
      ]
    }
    const rows = [
      await measure('GET /health/public (no auth, no database)', { url: `${server.base}/api/v0/health/public` }),
      ...(await againstBothFloors()),
      await againstFloor('DELETE /webhooks/{id}, existing inactive webhooks', deletePool(floor, poolApp, pool, undefined, pool), deletePool(server, poolApp, pool), {
        goal: FLOOR_GOALS.delete,
      }),
      await measure('DELETE /webhooks/{id}, missing (404)', {
        url: `${server.base}/api/v0/webhooks/00000000-0000-4000-8000-000000000000`,
        method: 'DELETE',
        headers: { 'x-client-key': poolApp.headers['x-client-key'] ?? '', 'x-client-secret': poolApp.headers['x-client-secret'] ?? '' },
      }),
      await againstFloor('POST liquidation address (its event delivered)', postAddress(floor, app, customerId), postAddress(server, app, customerId), {
        deliveriesPerWrite: 1,
        goal: FLOOR_GOALS.post,
      }),
    ]
    floor.stop()
    return rows
  })
  printTable(
    `baseline: one application, one active webhook at a local receiver (DELETE pools: ${thousands(pool)} webhooks each for the server and its floor, of another application)`,
    [helloRow, ...rows],
  )
  const shares = rows.flatMap((row) => (row.floor === undefined ? [] : [`${row.name.replace(/ \(.*$/, '').replace(/, .*$/, '')} ${ratio(row.rate, row.floor.rate)}`]))
  console.log(`Shares of the floor (${databaseName}): ${shares.join(', ')}.\n`)
  timings.push(`baseline ${seconds(Date.now() - started)}`)
}

// --- 1 vs 1,000 webhooks ----------------------------------------------------------------------------

if (only.has('webhooks')) {
  const started = Date.now()
  const rows = await onFreshDatabase(async (database) => {
    const db = await openDatabase(database.location)
    const one = await createApplication(db, 'one webhook', 1, receiverUrl)
    const oneCustomer = await createCustomer(db, one.id)
    const many = await createApplication(db, 'many webhooks', MANY_WEBHOOKS, receiverUrl)
    const manyCustomer = await createCustomer(db, many.id)
    await db.destroy()
    const server = await startServer(database)
    return [
      await measure('POST liquidation address, application with 1 active webhook', postAddress(server, one, oneCustomer), { deliveriesPerWrite: 1 }),
      await measure(`POST liquidation address, application with ${thousands(MANY_WEBHOOKS)} active webhooks`, postAddress(server, many, manyCustomer), {
        deliveriesPerWrite: MANY_WEBHOOKS,
      }),
    ]
  })
  const [first, second] = rows
  printTable(`webhooks: a write's cost against its application's active webhooks (all at the local receiver)`, rows)
  if (first !== undefined && second !== undefined) {
    printPairs('webhooks: 1,000 vs 1 active webhooks (goal: within 20 %)', [
      { name: 'POST liquidation address', first: { label: '1 webhook', row: first }, second: { label: `${thousands(MANY_WEBHOOKS)} webhooks`, row: second } },
    ])
  }
  timings.push(`webhooks ${seconds(Date.now() - started)}`)
}

// --- 10k vs 1M rows ---------------------------------------------------------------------------------

/** The claim, as Dispatcher.claimAndStart makes it, rolled back each time; see the header. */
async function measureClaims(db: Db): Promise<Row> {
  log('dispatcher claim…')
  const config = loadWebhookConfig({})
  const caps = { free: Math.min(config.concurrency, MAX_CLAIM), perApp: config.perAppConcurrency, perWebhook: config.perWebhookConcurrency }
  const leaseMs = 2 * config.timeoutMs + 1000
  const queueScan = new QueueScan(db)
  const fairShare = new FairShare()
  const idle = { countForApp: () => 0, countFor: () => 0 }
  class Rollback extends Error {}
  const claimed: number[] = []
  const claimOnce = async (): Promise<void> => {
    const nowMs = Date.now()
    const now = new Date(nowMs).toISOString()
    const queues = await queueScan.due(now, [], caps.free)
    const take = fairShare.plan(queues, caps, idle)
    try {
      await writeTransaction(db, async (tx) => {
        const repo = new DeliveriesRepository(tx)
        const due = await repo.dueOf(take, now)
        claimed.push((await repo.claim(due.map((delivery) => delivery.id), newId(), new Date(nowMs + leaseMs).toISOString())).size)
        throw new Rollback()
      })
    } catch (error) {
      if (!(error instanceof Rollback)) throw error
    }
  }
  for (let i = 0; i < 20; i++) await claimOnce()
  claimed.length = 0
  const latencies: number[] = []
  const start = performance.now()
  while (performance.now() - start < duration * 1000) {
    const began = performance.now()
    await claimOnce()
    latencies.push(performance.now() - began)
  }
  const elapsed = performance.now() - start
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0
  const expected = DUE_WEBHOOKS * DUE_PER_WEBHOOK
  const short = claimed.filter((n) => n !== expected).length
  return {
    name: `dispatcher claim (dueQueues + dueOf + claim, ${expected} due of ${DUE_WEBHOOKS} webhooks, rolled back)`,
    rate: (latencies.length / elapsed) * 1000,
    unit: 'claims/s',
    p50: at(0.5),
    p99: at(0.99),
    ...(short > 0 ? { note: `${short} claims took other than ${expected}` } : {}),
  }
}

interface SizeRun {
  rows: number
  results: Row[]
  summary: string
}

async function rowsRun(rows: number): Promise<SizeRun> {
  const started = Date.now()
  const { results, counts, seedMs } = await onFreshDatabase(async (database) => {
    const db = await openDatabase(database.location)
    const app = await createApplication(db, 'bench', 1, receiverUrl)
    const poolApp = await createApplication(db, 'deletes', 0, receiverUrl)
    const webhookId = app.webhookIds[0] ?? ''
    log(`seeding ${thousands(rows)} rows per table…`)
    const seedStart = Date.now()
    const bulk = bulkConnection(database.location, db)
    try {
      const plan = { rows, own: ownRows, appId: app.id, webhookId, poolAppId: poolApp.id, pool: ROWS_POOL, signingSecret: generateSigningSecret() }
      await seedRows(bulk.db, plan, (step, ms) => log(`  ${step}: ${seconds(ms)}`))
    } finally {
      await bulk.close()
    }
    const seedMs = Date.now() - seedStart
    const counts = await countRows(db)
    log(`seeded in ${seconds(seedMs)}: ${JSON.stringify(counts)}`)
    const claim = await measureClaims(db)
    await cancelDue(db)
    await db.destroy()
    const server = await startServer(database)
    const matches = Array.from({ length: ownRows }, (_, i) => `own${i} customer${i}`).filter((name) => name.includes(NAME_FILTER)).length
    const results = [
      await measure('GET /webhooks/{id}', getWebhook(server, app)),
      await measure(`GET /customers?name=${NAME_FILTER} (${matches} of its ${thousands(ownRows)} customers match)`, {
        url: `${server.base}/api/v0/customers?name=${NAME_FILTER}`,
        headers: app.headers,
      }),
      claim,
      await measure(`DELETE /webhooks/{id}, existing inactive (${thousands(ROWS_POOL)} requests)`, deletePool(server, poolApp, ROWS_POOL, ROWS_POOL)),
      await measure('POST liquidation address (its event delivered)', postAddress(server, app, OWN_CUSTOMER_ID), { deliveriesPerWrite: 1 }),
    ]
    return { results, counts, seedMs }
  })
  const total = Date.now() - started
  return {
    rows,
    results,
    summary: `${thousands(rows)} rows: customers ${thousands(counts.customers)}, liquidation addresses ${thousands(counts.liquidation_addresses)}, webhooks ${thousands(counts.webhooks)}, deliveries ${thousands(counts.deliveries)} (${thousands(otherAppsFor(rows))} other applications); seeded in ${seconds(seedMs)}, the whole size in ${seconds(total)}`,
  }
}

if (only.has('rows')) {
  const started = Date.now()
  const small = await rowsRun(rowsSmall)
  const large = await rowsRun(rowsLarge)
  const label = (run: SizeRun) => `${thousands(run.rows)} rows`
  for (const run of [small, large]) {
    printTable(`rows: ${label(run)} per table`, run.results)
    console.log(`${run.summary}\n`)
    for (const row of run.results) if (row.note !== undefined) console.log(`note: ${row.name}: ${row.note}\n`)
  }
  printPairs(
    `rows: ${label(large)} vs ${label(small)} (goal: within 20 %)`,
    small.results.flatMap((row, i) => {
      const other = large.results[i]
      return other === undefined ? [] : [{ name: row.name.replace(/ \(.*$/, ''), first: { label: label(small), row }, second: { label: label(large), row: other } }]
    }),
  )
  timings.push(`rows ${seconds(Date.now() - started)}`)
}

receiver.child.disconnect()
console.log(`Time: hello ${seconds(duration * 1000)}${timings.length > 0 ? `, ${timings.join(', ')}` : ''}.`)
