/**
 * What the metrics cost the authenticated read: GET /api/v0/webhooks/{id} on the built server,
 * started anew for each run, without METRICS_PORT and with it, alternately (A B B A …, so drift
 * in the machine's load falls on both alike), each run after a warm-up of its own. Prints
 * each run's req/s, each side's mean and median, and the share the metrics take; the goal is
 * under 3 %. A scrape follows each run with metrics, and its time is printed too.
 *
 *   npm run bench:metrics [-- --seconds 5 --rounds 4 --connections 10]
 *
 * DATABASE_URL (postgres://…) and REDIS_URL run it on PostgreSQL + Redis, as bench/api.ts does.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { createServer } from 'node:net'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { openDatabase } from '../src/modules/database.js'
import { createApplication, getWebhook, log, onFreshDatabase, type Server, startServer } from './api-harness.js'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '10' },
  },
})
function positive(name: string, text: string): number {
  const n = Number(text)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer (got ${JSON.stringify(text)})`)
  return n
}
const seconds = positive('seconds', values.seconds)
const rounds = positive('rounds', values.rounds)
const connections = positive('connections', values.connections)
/** Each start's first seconds, not counted: the JIT and the caches warm up. */
const WARM_UP_SECONDS = 2

/**
 * With two CPUs or more, this process (autocannon) runs on CPU 0 and each server on CPU 1: left to
 * the scheduler, a run landed at random in a fast or a slow mode (server CPU per request 58 or
 * 78 µs, on either side), which swamped the few per cent being measured.
 */
const pin = availableParallelism() >= 2 && spawnSync('taskset', ['-V']).status === 0
function pinTo(pid: number, cpu: number): void {
  if (pin) spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' })
}
/** The pids of this process's children (Linux). */
function children(): number[] {
  return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
}
pinTo(process.pid, 0)

async function freePort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

interface Run {
  rps: number
  /** the server process's CPU time per answered request, in µs (less moved by other load on the machine than req/s) */
  cpuUs: number
  p50: number
  p99: number
  non2xx: number
}

async function run(server: Server, options: autocannon.Options, duration: number): Promise<Run> {
  const cpuBefore = server.cpuMs()
  const result = await autocannon({ connections, duration, ...options })
  const cpuUs = ((server.cpuMs() - cpuBefore) * 1000) / result.requests.total
  return { rps: result.requests.total / result.duration, cpuUs, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx + result.errors + result.timeouts }
}

const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length
function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}
const rate = (n: number) => Math.round(n).toLocaleString('en-US')
const share = (without: number, withMetrics: number) => `${(((without - withMetrics) / without) * 100).toFixed(1)} %`
const extra = (base: number, measured: number) => `${measured >= base ? '+' : ''}${(((measured - base) / base) * 100).toFixed(1)} %`

await onFreshDatabase(async (database) => {
  const db = await openDatabase(database.location)
  // GET reads the webhook; nothing is delivered, so its URL is never called.
  const app = await createApplication(db, 'metrics cost', 1, 'http://127.0.0.1:9/never')
  await db.destroy()

  /** The built server, with METRICS_PORT (a free port) when `metrics`. */
  async function start(metrics: boolean): Promise<{ server: Server; metricsUrl: string | undefined }> {
    if (!metrics) return { server: await startServer(database), metricsUrl: undefined }
    const port = await freePort()
    // startServer passes this process's environment to the server it starts.
    process.env.METRICS_PORT = String(port)
    try {
      const server = await startServer(database)
      const metricsUrl = `http://127.0.0.1:${port}/metrics`
      if ((await fetch(metricsUrl)).status !== 200) throw new Error('the server with METRICS_PORT serves no metrics')
      return { server, metricsUrl }
    } finally {
      delete process.env.METRICS_PORT
    }
  }

  const sides = [
    { label: 'without metrics', metrics: false, runs: [] as Run[] },
    { label: 'with metrics', metrics: true, runs: [] as Run[] },
  ] as const
  const scrapes: number[] = []
  for (let round = 0; round < rounds; round++) {
    // A B, then B A: each side goes first as often as the other. One server at a time: two
    // identical servers running side by side measured up to 25 % apart on a 2-core machine.
    const order = round % 2 === 0 ? sides : ([sides[1], sides[0]] as const)
    for (const side of order) {
      log(`round ${round + 1}/${rounds}: ${side.label}…`)
      const { server, metricsUrl } = await start(side.metrics)
      for (const pid of children()) pinTo(pid, 1)
      await run(server, getWebhook(server, app), WARM_UP_SECONDS)
      side.runs.push(await run(server, getWebhook(server, app), seconds))
      if (metricsUrl !== undefined) {
        const started = performance.now()
        await (await fetch(metricsUrl)).text()
        scrapes.push(performance.now() - started)
      }
      await server.stop()
    }
  }

  const lines = [
    `### GET /api/v0/webhooks/{id}: the metrics' cost (${database.label}; ${connections} connections, ${rounds} rounds of ${seconds} s per side; ${pin ? 'autocannon on CPU 0, the server on CPU 1' : 'not pinned to CPUs'})`,
    '',
    '| run | without metrics req/s | with metrics req/s | CPU µs/request without | CPU µs/request with | p50 / p99 ms without | p50 / p99 ms with |',
    '|---|---|---|---|---|---|---|',
  ]
  for (let i = 0; i < rounds; i++) {
    const a = sides[0].runs[i]
    const b = sides[1].runs[i]
    if (a === undefined || b === undefined) continue
    lines.push(`| ${i + 1} | ${rate(a.rps)} | ${rate(b.rps)} | ${a.cpuUs.toFixed(1)} | ${b.cpuUs.toFixed(1)} | ${a.p50} / ${a.p99} | ${b.p50} / ${b.p99} |`)
  }
  const without = sides[0].runs.map((r) => r.rps)
  const withMetrics = sides[1].runs.map((r) => r.rps)
  const cpuWithout = sides[0].runs.map((r) => r.cpuUs)
  const cpuWith = sides[1].runs.map((r) => r.cpuUs)
  lines.push(`| mean | ${rate(mean(without))} | ${rate(mean(withMetrics))} | ${mean(cpuWithout).toFixed(1)} | ${mean(cpuWith).toFixed(1)} | | |`)
  lines.push(`| median | ${rate(median(without))} | ${rate(median(withMetrics))} | ${median(cpuWithout).toFixed(1)} | ${median(cpuWith).toFixed(1)} | | |`)
  lines.push('')
  lines.push(`Share of req/s taken by the metrics (goal under 3 %): ${share(mean(without), mean(withMetrics))} of the mean, ${share(median(without), median(withMetrics))} of the median.`)
  lines.push(`The server's CPU per request with metrics: ${extra(median(cpuWithout), median(cpuWith))} (medians).`)
  const failed = [...sides[0].runs, ...sides[1].runs].reduce((sum, r) => sum + r.non2xx, 0)
  if (failed > 0) lines.push(`Non-2xx answers or errors: ${failed} (the figures above are not comparable).`)
  lines.push(`A scrape after each run with metrics: ${scrapes.map((ms) => ms.toFixed(1)).join(', ')} ms.`)
  console.log(`${lines.join('\n')}\n`)
})
