/**
 * Isolation benchmark: does one application's misbehaving webhooks delay another's deliveries?
 *
 * Application B (one webhook, the healthy receiver of bench/webhooks.ts in a child process)
 * commits 100 events/s while application A's 200 webhooks misbehave, and we measure B's
 * commit → receiver's first byte. A keeps writing 50 events/s (one webhook each, in turn), from
 * 5 s before B starts, so its backlog is there when B starts and keeps growing. A's webhooks:
 *
 *   hanging     accept the connection and never answer (each attempt holds its slot for
 *               WEBHOOK_TIMEOUT_MS, the default 15 s);
 *   refusing    a loopback port with nothing listening, with 10,000 deliveries queued for A when
 *               B starts;
 *   unresolvable  hosts asked of a DNS server that never answers (the dispatcher's resolver,
 *               injected through buildApp's `delivery.resolveHost`, asks only that server).
 *
 * Each scenario, and the clean run (B alone, same rate, same length), runs the real app
 * in-process on a fresh database (SQLite, or PostgreSQL with DATABASE_URL; see bench/database.ts).
 * B's events that have not arrived 5 s after B's last commit count as undelivered, and the
 * percentiles then are lower bounds (`>=`).
 *
 * Then memory: the unresolvable scenario at WEBHOOK_TIMEOUT_MS=1000, with A writing all along, in
 * a child process that runs only the app and A's writer (bench/slow-dns-app.ts); its RSS is sampled
 * every second for --rss-seconds after a 5 s warm-up (0 skips it).
 *
 *   npm run bench:webhooks -- --only isolation [--isolation-seconds 20] [--rss-seconds 60]
 *   tsx bench/isolation.ts [--seconds 20] [--rss-seconds 60]
 */
import { fork } from 'node:child_process'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { Writable } from 'node:stream'
import { parseArgs } from 'node:util'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openDatabase } from '../src/modules/database.js'
import type { ResolveHost } from '../src/delivery/address-guard.js'
import { benchDatabase } from './database.js'
import {
  type AttemptSummary,
  attemptSummary,
  createApplication,
  describeAttempts,
  dispatcherDnsTimeoutMs,
  dispatcherResolverAsking,
  EVENT_DATA,
  epochNow,
  eventsInTurn,
  hangingServer,
  paced,
  refusingPort,
  silentDnsServer,
  sleep,
  thousands,
} from './isolation-fixtures.js'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '20' }, 'rss-seconds': { type: 'string', default: '60' } } })
const seconds = Number(values.seconds)
const rssSeconds = Number(values['rss-seconds'])

const B_EVENTS_PER_SECOND = 100
const A_EVENTS_PER_SECOND = 50
const A_WEBHOOKS = 200
const QUEUED_FOR_REFUSING = 10_000
/** A writes alone this long first, so B meets a backlog rather than an idle dispatcher. */
const A_HEAD_START_MS = 5_000
/** How long B's last events may take to arrive before they count as undelivered. */
const STRAGGLER_WAIT_MS = 5_000
const GOAL_P99_MS = 100
const RSS_WARM_UP_S = 5
const RSS_TIMEOUT_MS = 1000

const config = loadConfig({ NODE_ENV: 'development', LOG_LEVEL: 'warn' })
const discardLogs = () => new Writable({ write: (_chunk, _encoding, done) => done() })

// --- B's receiver: the healthy one of bench/webhooks.ts, in its own process ---
type Arrivals = [string, number][]
const receiver = fork(fileURLToPath(new URL('./webhook-receiver.mjs', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] })
const receiverPort = await new Promise<number>((resolve) => receiver.once('message', (m: { port: number }) => resolve(m.port)))
function takeArrivals(): Promise<Arrivals> {
  return new Promise((resolve) => {
    receiver.once('message', (m: { arrivals: Arrivals }) => resolve(m.arrivals))
    receiver.send('take')
  })
}

interface Scenario {
  label: string
  /** A's webhook urls, by index; absent: B alone (the clean run) */
  urlOfA?: (index: number) => string
  /** deliveries queued for A (due now) when B starts */
  queuedForA?: number
  resolveHost?: ResolveHost
}

interface ScenarioResult {
  label: string
  /** which database it ran on, for the printed header */
  database: string
  /** commit → first byte of B's delivered events, ms, ascending */
  latencies: number[]
  /** for each undelivered event, how long it had waited when the run gave up, ms */
  undeliveredWaits: number[]
  failedCommitsOfB: number
  /** A's side, when A ran */
  a?: { events: number; failedCommits: number; attempts: AttemptSummary }
}

async function runScenario(scenario: Scenario): Promise<ScenarioResult> {
  const database = await benchDatabase()
  const db = await openDatabase(database.location)
  const b = await createApplication(db, 'B', [`http://127.0.0.1:${receiverPort}/b`])
  const urlOfA = scenario.urlOfA
  const a = urlOfA === undefined ? undefined : await createApplication(db, 'A', Array.from({ length: A_WEBHOOKS }, (_, i) => urlOfA(i)))
  const app = await buildApp({ config, db, logStream: discardLogs(), delivery: scenario.resolveHost === undefined ? {} : { resolveHost: scenario.resolveHost } })
  await app.ready()
  await takeArrivals()

  const stopA = new AbortController()
  const writingA = a === undefined ? undefined : paced(A_EVENTS_PER_SECOND, stopA.signal, eventsInTurn(app, a))
  if (a !== undefined) {
    await sleep(A_HEAD_START_MS)
    if (scenario.queuedForA !== undefined) await queueFor(app, a.appId, scenario.queuedForA / A_WEBHOOKS)
  }

  // B: one event per transaction, as a route writes it; stamped when its commit returns.
  const committedAt = new Map<string, number>()
  const writingB = await paced(B_EVENTS_PER_SECOND, AbortSignal.timeout(seconds * 1000), async () => {
    const eventId = await app.transact((tx) => tx.events.emit(b.appId, 'tax.updated', EVENT_DATA))
    committedAt.set(eventId, epochNow())
  })
  stopA.abort()
  const countA = await writingA

  // B's stragglers: until all have arrived, or the wait is over.
  const firstByteAt = new Map<string, number>()
  const giveUpAt = epochNow() + STRAGGLER_WAIT_MS
  for (;;) {
    for (const [eventId, at] of await takeArrivals()) if (committedAt.has(eventId) && !firstByteAt.has(eventId)) firstByteAt.set(eventId, at)
    if (firstByteAt.size >= committedAt.size || epochNow() >= giveUpAt) break
    await sleep(100)
  }
  const gaveUpAt = epochNow()
  const latencies: number[] = []
  const undeliveredWaits: number[] = []
  for (const [eventId, committed] of committedAt) {
    const arrived = firstByteAt.get(eventId)
    if (arrived === undefined) undeliveredWaits.push(gaveUpAt - committed)
    else latencies.push(arrived - committed)
  }
  latencies.sort((x, y) => x - y)

  const result: ScenarioResult = { label: scenario.label, database: database.label, latencies, undeliveredWaits, failedCommitsOfB: writingB.failed }
  if (a !== undefined && countA !== undefined) result.a = { events: countA.sent, failedCommits: countA.failed, attempts: await attemptSummary(db, a.appId) }
  // Closing gives attempts on the wire min(5 s, the timeout), then aborts them; it closes db too.
  await app.close()
  await database.drop()
  return result
}

/** `events` events for every one of A's webhooks, written through the outbox (due now), 10 to a transaction. */
async function queueFor(app: FastifyInstance, appId: string, events: number): Promise<void> {
  for (let done = 0; done < events; done += 10) {
    await app.transact(async (tx) => {
      for (let i = done; i < Math.min(events, done + 10); i++) await tx.events.emit(appId, 'tax.updated', EVENT_DATA)
    })
  }
}

/**
 * The p-th percentile of B's latencies, counting each undelivered event at the time it had waited:
 * a lower bound of its latency, so when the percentile reaches an undelivered event (or lies above
 * the shortest such wait) it is only a lower bound, printed `>=`.
 */
function percentile(result: ScenarioResult, p: number): string {
  const all = [...result.latencies, ...result.undeliveredWaits].sort((x, y) => x - y)
  if (all.length === 0) return 'n/a'
  const value = all[Math.min(all.length - 1, Math.floor((p / 100) * all.length))] ?? Number.NaN
  const exact = result.undeliveredWaits.length === 0 || value < Math.min(...result.undeliveredWaits)
  const shown = value >= 100 ? thousands(value) : value.toFixed(2)
  return exact ? shown : `>= ${shown}`
}

const latencyCell = (result: ScenarioResult) => `${percentile(result, 50)} / ${percentile(result, 99)}`

function deliveredCell(result: ScenarioResult): string {
  const committed = result.latencies.length + result.undeliveredWaits.length
  const failed = result.failedCommitsOfB > 0 ? `; ${thousands(result.failedCommitsOfB)} commits failed` : ''
  const missing = result.undeliveredWaits.length > 0 ? ` (${thousands(result.undeliveredWaits.length)} undelivered ${STRAGGLER_WAIT_MS / 1000} s after the last commit)` : ''
  return `${thousands(result.latencies.length)} of ${thousands(committed)}${missing}${failed}`
}

function aCell(result: ScenarioResult): string {
  if (result.a === undefined) return '(no A)'
  const failed = result.a.failedCommits > 0 ? ` (${thousands(result.a.failedCommits)} commits failed)` : ''
  return `${thousands(result.a.events)} events${failed}; ${describeAttempts(result.a.attempts)}`
}

// --- memory: the unresolvable scenario at a 1 s timeout, in a process of its own ---

interface MemoryResult {
  /** which database it ran on, for the printed header */
  database: string
  rssBeforeApp: number
  start: number
  max: number
  end: number
  /** heap used + external right after a full garbage collection: before A started writing, and at the end */
  liveBeforeWriting: number
  liveAtEnd: number
  /** one sample a second, from the end of the warm-up */
  measured: number[]
  dnsQueries: number
  events: number
  failedCommits: number
  attempts: AttemptSummary
}

type SlowDnsMessage =
  | { kind: 'ready'; rssBeforeApp: number; liveBeforeWriting: number }
  | { kind: 'rss'; rss: number }
  | { kind: 'stopped'; events: number; failedCommits: number; attempts: AttemptSummary; liveAtEnd: number }

async function slowDnsMemory(): Promise<MemoryResult> {
  const database = await benchDatabase()
  const db = await openDatabase(database.location)
  const a = await createApplication(db, 'A', Array.from({ length: A_WEBHOOKS }, (_, i) => `http://a${i}.unresolvable.test/`))
  await db.destroy()
  const dns = await silentDnsServer()
  const child = fork(
    fileURLToPath(new URL('./slow-dns-app.ts', import.meta.url)),
    ['--database-url', database.url, '--dns-server', dns.address, '--app', a.appId, '--timeout-ms', String(RSS_TIMEOUT_MS), '--events-per-second', String(A_EVENTS_PER_SECOND)],
    // --expose-gc: a full collection, before A starts and at the end, tells memory kept from garbage not yet collected.
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [...process.execArgv, '--expose-gc'] },
  )
  // One sample a second from when A starts writing: the warm-up's, then the measured run's.
  const wanted = RSS_WARM_UP_S + rssSeconds + 1
  const rss: number[] = []
  let ready: Extract<SlowDnsMessage, { kind: 'ready' }> = { kind: 'ready', rssBeforeApp: Number.NaN, liveBeforeWriting: Number.NaN }
  const report = await new Promise<Extract<SlowDnsMessage, { kind: 'stopped' }>>((resolve, reject) => {
    child.on('message', (message: SlowDnsMessage) => {
      if (message.kind === 'ready') ready = message
      else if (message.kind === 'stopped') resolve(message)
      else if (rss.push(message.rss) === wanted) child.send('stop')
    })
    child.once('exit', (code) => reject(new Error(`bench/slow-dns-app.ts exited (${code ?? 'signal'}) before reporting`)))
  })
  await dns.close()
  await database.drop()
  const measured = rss.slice(RSS_WARM_UP_S, wanted)
  const start = measured[0] ?? Number.NaN
  return {
    database: database.label,
    rssBeforeApp: ready.rssBeforeApp,
    start,
    max: Math.max(...measured),
    end: measured[measured.length - 1] ?? Number.NaN,
    liveBeforeWriting: ready.liveBeforeWriting,
    liveAtEnd: report.liveAtEnd,
    measured,
    dnsQueries: dns.queries(),
    events: report.events,
    failedCommits: report.failedCommits,
    attempts: report.attempts,
  }
}

// --- the run ---
const startedAt = performance.now()
console.log(
  `isolation: B ${B_EVENTS_PER_SECOND} events/s for ${seconds} s; A ${A_WEBHOOKS} webhooks, ${A_EVENTS_PER_SECOND} events/s (one webhook each, in turn) from ${A_HEAD_START_MS / 1000} s before B; ` +
    `WEBHOOK_TIMEOUT_MS ${config.webhooks.timeoutMs}, concurrency ${config.webhooks.concurrency}, ${config.webhooks.perWebhookConcurrency} per webhook; ` +
    // Other work on the machine shows in every latency here: say how busy it was.
    `load average ${loadavg()[0]?.toFixed(2)}`,
)

const clean = await runScenario({ label: 'clean run: B alone' })
const hanging = await hangingServer()
const hangingRun = await runScenario({
  label: `${A_WEBHOOKS} hanging webhooks (accept, never answer; ${config.webhooks.timeoutMs / 1000} s timeout)`,
  urlOfA: (i) => `http://127.0.0.1:${hanging.port}/a${i}`,
})
await hanging.close()
const closedPort = await refusingPort()
const refusingRun = await runScenario({
  label: `${A_WEBHOOKS} refusing webhooks (nothing listening), ${thousands(QUEUED_FOR_REFUSING)} deliveries queued`,
  urlOfA: (i) => `http://127.0.0.1:${closedPort}/a${i}`,
  queuedForA: QUEUED_FOR_REFUSING,
})
const dns = await silentDnsServer()
const unresolvableRun = await runScenario({
  label: `${A_WEBHOOKS} unresolvable hosts (DNS never answers; lookups give up after ${dispatcherDnsTimeoutMs(config.webhooks.timeoutMs) / 1000} s)`,
  urlOfA: (i) => `http://a${i}.unresolvable.test/`,
  resolveHost: dispatcherResolverAsking(dns.address, config.webhooks.timeoutMs),
})
const unresolvableQueries = dns.queries()
await dns.close()
const isolationSeconds = (performance.now() - startedAt) / 1000

const memoryStartedAt = performance.now()
const memory = rssSeconds > 0 ? await slowDnsMemory() : undefined
const memorySeconds = (performance.now() - memoryStartedAt) / 1000

receiver.kill()

console.log('')
console.log(`${clean.database}; ${isolationSeconds.toFixed(0)} s; load average at the end ${loadavg()[0]?.toFixed(2)}`)
console.log('| scenario: application A | B: commit -> receiver first byte p50 / p99 (ms) | B delivered | A meanwhile | clean run, same run | goal |')
console.log('|---|---|---|---|---|---|')
console.log(`| ${clean.label} | ${latencyCell(clean)} | ${deliveredCell(clean)} | ${aCell(clean)} | | p99 <= ${GOAL_P99_MS} ms |`)
for (const run of [hangingRun, refusingRun, unresolvableRun]) {
  const extra = run === unresolvableRun ? `; the DNS server got ${thousands(unresolvableQueries)} queries` : ''
  console.log(`| ${run.label} | ${latencyCell(run)} | ${deliveredCell(run)} | ${aCell(run)}${extra} | ${latencyCell(clean)} | p99 <= ${GOAL_P99_MS} ms |`)
}

if (memory !== undefined) {
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`
  const growth = (bytes: number) => `${bytes >= memory.start ? '+' : ''}${((100 * (bytes - memory.start)) / memory.start).toFixed(1)} %`
  const failed = memory.failedCommits > 0 ? ` (${thousands(memory.failedCommits)} commits failed)` : ''
  console.log('')
  console.log(`${memory.database}; ${memorySeconds.toFixed(0)} s; load average at the end ${loadavg()[0]?.toFixed(2)}`)
  console.log('| measurement | figure | baseline, same run | goal |')
  console.log('|---|---|---|---|')
  console.log(
    `| RSS of a process running the app and A's writer: A's ${A_WEBHOOKS} hosts never resolve, ${A_EVENTS_PER_SECOND} events/s, WEBHOOK_TIMEOUT_MS=${RSS_TIMEOUT_MS}, ` +
      `${memory.measured.length - 1} s after a ${RSS_WARM_UP_S} s warm-up (sampled every second) | start ${mb(memory.start)}, max ${mb(memory.max)} (${growth(memory.max)}), end ${mb(memory.end)} (${growth(memory.end)}) ` +
      `| the same process before building the app ${mb(memory.rssBeforeApp)}; live memory (heap used + external after a full GC) before A started ${mb(memory.liveBeforeWriting)}, at the end ${mb(memory.liveAtEnd)}; A: ${thousands(memory.events)} events${failed}, ${describeAttempts(memory.attempts)}; ${thousands(memory.dnsQueries)} DNS queries unanswered | within 20 % |`,
  )
  // The path, not only its ends: a steady climb and a one-off step read differently.
  const step = Math.max(1, Math.round(rssSeconds / 6))
  const path = memory.measured.filter((_, second) => second % step === 0).map((bytes) => (bytes / 1024 / 1024).toFixed(0))
  console.log(`RSS every ${step} s from the end of the warm-up (MB): ${path.join(', ')}`)
}
