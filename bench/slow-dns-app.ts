/**
 * The slow-DNS memory run of bench/isolation.ts, in a process of its own so that its RSS is the
 * app's (and A's writer's), not the benchmark's: the app on the given database, its dispatcher
 * asking only a DNS server that never answers, and application A writing events for its webhooks
 * in turn. Reports its RSS once a second from when A starts writing; on 'stop', stops writing and
 * reports A's attempts and its live memory before A started and at the end (run with --expose-gc).
 */
import { Writable } from 'node:stream'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openDatabase } from '../src/modules/database.js'
import { attemptSummary, dispatcherResolverAsking, eventsInTurn, paced } from './isolation-fixtures.js'

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    'dns-server': { type: 'string' },
    app: { type: 'string' },
    'timeout-ms': { type: 'string' },
    'events-per-second': { type: 'string' },
  },
})
const send = (message: object) => process.send?.(message)
const rssBeforeApp = process.memoryUsage().rss

const config = loadConfig({ NODE_ENV: 'development', LOG_LEVEL: 'warn', DATABASE_URL: values['database-url'], WEBHOOK_TIMEOUT_MS: values['timeout-ms'] })
const db = await openDatabase(config.database)
const appId = values.app ?? ''
const webhookIds = (await db.selectFrom('webhooks').select('id').where('app_id', '=', appId).orderBy('id').execute()).map((row) => row.id)
const app = await buildApp({
  config,
  db,
  logStream: new Writable({ write: (_chunk, _encoding, done) => done() }),
  delivery: { resolveHost: dispatcherResolverAsking(values['dns-server'] ?? '', config.webhooks.timeoutMs) },
})
await app.ready()

/** The memory still in use (heap used + external, right after a full GC): kept memory, not garbage. */
function liveBytes(): number {
  globalThis.gc?.()
  const { heapUsed, external } = process.memoryUsage()
  return heapUsed + external
}
send({ kind: 'ready', rssBeforeApp, liveBeforeWriting: liveBytes() })

// Asked only once the last sample is in, so the collection does not disturb the samples.
const stop = new AbortController()
let liveAtEnd = Number.NaN
process.once('message', () => {
  liveAtEnd = liveBytes()
  stop.abort()
})
const sampleRss = () => send({ kind: 'rss', rss: process.memoryUsage().rss })
sampleRss()
const sampler = setInterval(sampleRss, 1000)
const count = await paced(Number(values['events-per-second']), stop.signal, eventsInTurn(app, { appId, webhookIds }))
clearInterval(sampler)
const attempts = await attemptSummary(db, appId)
await app.close()
send({ kind: 'stopped', events: count.sent, failedCommits: count.failed, attempts, liveAtEnd })
process.disconnect()
