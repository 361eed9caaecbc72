/**
 * What the JSON body checks cost (src/validation/json-shape.ts): the duplicate-key scan on a
 * typical create body, timed beside the parse alone, and the event loop's worst delay while
 * bodies of 60,000 unknown keys arrive at a running server.
 *
 *   npx tsx bench/json-duplicates.ts [--iterations 200000] [--rounds 5]
 *
 * Part 1 times, on one ~300-byte customer body: Fastify's JSON parser alone (secure-json-parse),
 * and the scan followed by that parser, as the app runs them; it prints µs per body and the
 * scan's share of the parse and of a whole POST (REQUEST_CPU_US of server CPU on this machine).
 *
 * Part 2 builds the app in this process (in-memory SQLite) and, from a worker thread (its own
 * event loop, so the client's work is not counted), posts eight 1 MiB bodies of 60,000 unknown
 * keys at once, `rounds` times, while polling /health/public. It prints the largest event-loop
 * delay seen (perf_hooks.monitorEventLoopDelay) and the slowest /health/public answer.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { Worker } from 'node:worker_threads'
import Fastify, { type FastifyRequest } from 'fastify'
import { buildApp } from '../src/app.js'
import { SCOPES } from '../src/resources/index.js'
import { loadConfig, parseDatabaseUrl } from '../src/config.js'
import { openDatabase } from '../src/modules/database.js'
// With buildApp's modules loaded, as in the server: some of them make string operations slower
// process-wide, so the parse and the scan are timed under the server's conditions.
import { scanJson } from '../src/validation/json-shape.js'

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '5' },
  },
})
const ITERATIONS = Number(values.iterations)
const ROUNDS = Number(values.rounds)
if (!Number.isInteger(ITERATIONS) || ITERATIONS <= 0 || !Number.isInteger(ROUNDS) || ROUNDS <= 0) throw new Error('--iterations and --rounds must be positive integers')

/** Server CPU of one POST on this machine (bench:profile), the whole the scan is a share of. */
const REQUEST_CPU_US = 250
const CONCURRENT_BODIES = 8
const UNKNOWN_KEYS = 60_000

async function parseCost(): Promise<void> {
  const text = JSON.stringify({
    first_name: 'Ada',
    last_name: 'Lovelace',
    phone_number: '+15555550123',
    email: 'ada.lovelace@example.com',
    customer_type: 'Individual',
    status: 'ACTIVE',
    address: { line1: '12 Analytical Engine Street', city: 'London', postal_code: 'W1 1AA', country: 'GB' },
    external_reference: 'crm-000123456',
  })
  const body = Buffer.from(text)
  const parse = Fastify().getDefaultJsonParser('error', 'error')
  const request = {} as FastifyRequest
  let parsed = 0
  const done = (error: Error | null) => {
    if (error === null) parsed++
  }
  let problems = 0
  // As the app's content-type parser runs them (src/http/error-handler.ts), less the UTF-8 decoding both share.
  const parseOnly = () => parse(request, text, done)
  const scanOnly = () => {
    if (scanJson(body) !== undefined) problems++
  }
  const scanAndParse = () => {
    if (scanJson(body) !== undefined) problems++
    else parse(request, text, done)
  }
  const time = (run: () => void, iterations = ITERATIONS): number => {
    const started = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) run()
    return Number(process.hrtime.bigint() - started) / 1000 / iterations
  }
  // Warmed up, then alternated, keeping each one's best of five.
  const best = { parse: Infinity, scan: Infinity, both: Infinity }
  for (let round = 0; round < 6; round++) {
    const times = { parse: time(parseOnly), scan: time(scanOnly), both: time(scanAndParse) }
    if (round === 0) continue
    best.parse = Math.min(best.parse, times.parse)
    best.scan = Math.min(best.scan, times.scan)
    best.both = Math.min(best.both, times.both)
  }
  if (problems > 0 || parsed === 0) throw new Error('the typical body should scan clean and parse')
  const cost = best.both - best.parse
  console.log(`part 1: a ${body.length}-byte customer body (${Object.keys(JSON.parse(text)).length} fields, one nested object), ${ITERATIONS} iterations, best of 5`)
  console.log(`  parse alone (Fastify's JSON parser)   ${best.parse.toFixed(2)} µs per body`)
  console.log(`  scan alone                            ${best.scan.toFixed(2)} µs per body`)
  console.log(`  scan + parse                          ${best.both.toFixed(2)} µs per body`)
  console.log(`  the check's cost                      ${cost.toFixed(2)} µs per body: ${((cost / best.parse) * 100).toFixed(0)} % of the parse, ${((cost / REQUEST_CPU_US) * 100).toFixed(2)} % of a ${REQUEST_CPU_US} µs POST`)

  // The largest bodies: what one scan can cost at most, and what it saves.
  const members = (count: number, width: number) => Array.from({ length: count }, (_, i) => `"k${String(i).padStart(width, '0')}":1`).join(',')
  const large: Array<[string, Buffer]> = [
    [`${UNKNOWN_KEYS} keys in one object (refused at key 1001)`, Buffer.from(`{${members(UNKNOWN_KEYS, 11)}}`)],
    ['one 1 MiB string (read whole)', Buffer.from(JSON.stringify({ name: 'a'.repeat(1024 * 1024 - 20) }))],
    ['10 objects of 999 keys (read whole, at the limit)', Buffer.from(`{"a":[${Array.from({ length: 10 }, () => `{${members(999, 11)}}`).join(',')}]}`)],
  ]
  for (const [label, sample] of large) {
    const scan = time(() => scanJson(sample), 50)
    const parseTime = time(() => JSON.parse(sample.toString()), 20)
    console.log(`  ${label.padEnd(52)} ${(sample.length / 1024).toFixed(0).padStart(5)} KiB: scan ${(scan / 1000).toFixed(2)} ms, JSON.parse ${(parseTime / 1000).toFixed(2)} ms`)
  }
}

/** The worker's code: plain JavaScript, so it needs no loader. */
const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads')
const { baseUrl, headers, body, concurrent, rounds } = workerData
const next = () => new Promise((resolve) => parentPort.once('message', resolve))
async function main() {
  // One request of each kind first, so connections are open and the server warm before the measure.
  await (await fetch(baseUrl + '/api/v0/health/public')).arrayBuffer()
  await (await fetch(baseUrl + '/api/v0/taxes', { method: 'POST', headers, body })).arrayBuffer()
  for (let round = 0; round < rounds; round++) {
    parentPort.postMessage({ ready: true })
    await next()
    let polling = true
    let slowestHealth = 0
    const poll = (async () => {
      while (polling) {
        const started = performance.now()
        await (await fetch(baseUrl + '/api/v0/health/public')).arrayBuffer()
        slowestHealth = Math.max(slowestHealth, performance.now() - started)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    })()
    const answers = await Promise.all(Array.from({ length: concurrent }, async () => {
      const res = await fetch(baseUrl + '/api/v0/taxes', { method: 'POST', headers, body })
      const answer = await res.json()
      return res.status + ' ' + answer.message.slice(0, 70)
    }))
    polling = false
    await poll
    parentPort.postMessage({ answers, slowestHealth })
  }
}
main().catch((error) => { throw error })
`

async function loopDelay(): Promise<void> {
  const config = { ...loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'warn' }), database: parseDatabaseUrl('sqlite::memory:') }
  const db = await openDatabase(config.database)
  const app = await buildApp({ config: { ...config, webhooks: { ...config.webhooks, dispatcher: false } }, db })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const appId = (await app.repos.apps.createApp('bench')).id
  const key = await app.repos.apps.createKey({ appId, environment: 'production', scopes: SCOPES, rateLimitOverride: 1_000_000 })
  const members: string[] = []
  for (let i = 0; i < UNKNOWN_KEYS; i++) members.push(`"k${String(i).padStart(11, '0')}":1`)
  const body = Buffer.from(`{${members.join(',')}}`)
  if (body.length > 1024 * 1024) throw new Error('the body is over 1 MiB')

  const worker = new Worker(CLIENT, {
    eval: true,
    workerData: {
      baseUrl: `http://127.0.0.1:${address.port}`,
      headers: { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret, 'content-type': 'application/json' },
      body,
      concurrent: CONCURRENT_BODIES,
      rounds: ROUNDS,
    },
  })
  const failed = new Promise<never>((_resolve, reject) => worker.once('error', reject))
  const message = <T>() => Promise.race([new Promise<T>((resolve) => worker.once('message', resolve)), failed])
  console.log(`part 2: ${CONCURRENT_BODIES} concurrent ${(body.length / 1024).toFixed(0)} KiB bodies of ${UNKNOWN_KEYS} unknown keys, ${ROUNDS} rounds`)
  const answers = new Map<string, number>()
  let worst = 0
  let slowestHealth = 0
  for (let round = 0; round < ROUNDS; round++) {
    await message<{ ready: true }>()
    const histogram = monitorEventLoopDelay({ resolution: 1 })
    histogram.enable()
    worker.postMessage('go')
    const report = await message<{ answers: string[]; slowestHealth: number }>()
    histogram.disable()
    for (const answer of report.answers) answers.set(answer, (answers.get(answer) ?? 0) + 1)
    worst = Math.max(worst, histogram.max)
    slowestHealth = Math.max(slowestHealth, report.slowestHealth)
    console.log(`  round ${round + 1}: event-loop delay max ${(histogram.max / 1e6).toFixed(1)} ms, p99 ${(histogram.percentile(99) / 1e6).toFixed(1)} ms; slowest /health/public ${report.slowestHealth.toFixed(1)} ms`)
  }
  await worker.terminate()
  await app.close()
  for (const [answer, count] of answers) console.log(`  answered ${count} × ${answer}`)
  console.log(`  event-loop delay      max ${(worst / 1e6).toFixed(1)} ms over the ${ROUNDS} rounds`)
  console.log(`  /health/public        slowest answer ${slowestHealth.toFixed(1)} ms`)
}

await parseCost()
await loopDelay()
