/**
 * What a Redis fault costs a request: authenticated reads and /health, timed while Redis answers,
 * while it stalls (connections open, nothing answers) and while it is cut (connections refused),
 * through a TCP proxy between the server and Redis. The goal: during a stall an authenticated
 * request costs at most 100 ms more at p99 than normal, and /health answers within the same bound.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379 npm run bench:redis-faults
 */
import { TcpProxy } from '../test/helpers/tcp-proxy.js'
import { log, onFreshDatabase, sleep, startServer } from './api-harness.js'

const PHASE_MS = Number(process.env.PHASE_MS ?? 5_000)
const CONCURRENCY = 8

interface Phase {
  name: string
  api: number[]
  health: number[]
  statuses: Map<number, number>
  healthMessages: Set<string>
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
}

async function timed(url: string, headers: Record<string, string>): Promise<{ ms: number; status: number; body: string }> {
  const started = performance.now()
  const res = await fetch(url, { headers })
  const body = await res.text()
  return { ms: performance.now() - started, status: res.status, body }
}

async function measure(name: string, base: string, headers: Record<string, string>): Promise<Phase> {
  const phase: Phase = { name, api: [], health: [], statuses: new Map(), healthMessages: new Set() }
  const until = performance.now() + PHASE_MS
  const reader = async () => {
    while (performance.now() < until) {
      const answer = await timed(`${base}/api/v0/customers?limit=10`, headers)
      phase.api.push(answer.ms)
      phase.statuses.set(answer.status, (phase.statuses.get(answer.status) ?? 0) + 1)
    }
  }
  const prober = async () => {
    while (performance.now() < until) {
      const answer = await timed(`${base}/api/v0/health`, headers)
      phase.health.push(answer.ms)
      phase.healthMessages.add(String((JSON.parse(answer.body) as { message?: string }).message))
      await sleep(100)
    }
  }
  await Promise.all([...Array.from({ length: CONCURRENCY }, reader), prober()])
  return phase
}

async function main(): Promise<void> {
  const redisUrl = process.env.REDIS_URL
  if (redisUrl === undefined || !/^postgres/.test(process.env.DATABASE_URL ?? '')) throw new Error('set DATABASE_URL (PostgreSQL) and REDIS_URL')
  const target = new URL(redisUrl)
  const proxy = await TcpProxy.start(target.hostname, Number(target.port || 6379))
  process.env.REDIS_URL = proxy.urlFor(redisUrl)
  try {
    await onFreshDatabase(async (database) => {
      const server = await startServer(database)
      const { AppsRepository } = await import('../src/apps/repository.js')
      const { openDatabase } = await import('../src/modules/database.js')
      const { SCOPES } = await import('../src/resources/index.js')
      const db = await openDatabase(database.location)
      const apps = new AppsRepository(db)
      const app = await apps.createApp('redis faults')
      const key = await apps.createKey({ appId: app.id, environment: 'production', scopes: SCOPES, rateLimitOverride: 100_000_000 })
      await db.destroy()
      const headers = { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret }
      const phases: Phase[] = []
      log(`${CONCURRENCY} readers and a /health probe every 100 ms, ${PHASE_MS} ms per phase, on ${database.label}`)
      await measure('warm-up', server.base, headers)
      phases.push(await measure('Redis answers', server.base, headers))
      proxy.setMode('stall')
      phases.push(await measure('Redis stalls', server.base, headers))
      proxy.setMode('pass')
      await sleep(1_000)
      phases.push(await measure('Redis answers again', server.base, headers))
      proxy.setMode('refuse')
      phases.push(await measure('Redis cut', server.base, headers))
      proxy.setMode('pass')
      const normalP99 = percentile(phases[0]?.api ?? [], 99)
      const rows = phases.map((phase) => ({
        phase: phase.name,
        requests: phase.api.length,
        statuses: [...phase.statuses].map(([status, count]) => `${status}×${count}`).join(' '),
        'p50 ms': percentile(phase.api, 50).toFixed(1),
        'p99 ms': percentile(phase.api, 99).toFixed(1),
        'p99 over normal ms': (percentile(phase.api, 99) - normalP99).toFixed(1),
        'max ms': Math.max(...phase.api).toFixed(1),
        '/health p99 ms': percentile(phase.health, 99).toFixed(1),
        '/health max ms': Math.max(...phase.health).toFixed(1),
        '/health says': [...phase.healthMessages].join(' | '),
      }))
      console.table(rows)
    })
  } finally {
    await proxy.close()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
