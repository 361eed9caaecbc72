/**
 * API benchmark: runs the built server (dist/server.js) as a child process on a fresh database
 * (SQLite, or PostgreSQL when DATABASE_URL names one; REDIS_URL is passed on) and loads it with autocannon from this process, on the same machine. Every figure is
 * printed beside a baseline measured in the same run (GET /health/public: no auth, no database),
 * so the ratios mean something on any machine.
 *
 *   npm run bench:api [-- --seconds 10 --connections 50]
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379 npm run bench:api
 */
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { SCOPES } from '../src/auth/scopes.js'
import { openDatabase } from '../src/db/database.js'
import { AppsRepository } from '../src/db/repositories/apps.js'
import { benchDatabase } from './database.js'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '50' } } })
const duration = Number(values.seconds)
const connections = Number(values.connections)

const database = await benchDatabase()

// A production key with a limit far above what the run can send, so the limiter is exercised
// (every request goes through it) without refusing anything.
const db = await openDatabase(database.location)
const apps = new AppsRepository(db)
const app = await apps.createApp('bench')
const key = await apps.createKey({ appId: app.id, environment: 'production', scopes: SCOPES, rateLimitOverride: 1_000_000_000 })
await db.destroy()
const headers = { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret, 'content-type': 'application/json' }

// A free port, found by binding port 0 and letting it go.
const port = await new Promise<number>((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const address = probe.address()
    probe.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
  })
})
const base = `http://127.0.0.1:${port}`
// LOG_LEVEL=warn: per-request log lines would measure the pipe to this process, not the API.
const server = spawn(process.execPath, ['dist/server.js'], {
  // development: the inactive webhook below may point at loopback (it never receives anything,
  // so events are written to the outbox without deliveries; bench:webhooks measures delivery).
  env: { ...process.env, PORT: String(port), DATABASE_URL: database.url, LOG_LEVEL: 'warn', NODE_ENV: 'development' },
  stdio: ['ignore', 'inherit', 'inherit'],
})
for (let attempt = 0; ; attempt++) {
  try {
    if ((await fetch(`${base}/api/v0/health/public`)).ok) break
  } catch {
    if (attempt > 100) throw new Error('server did not start')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function post(path: string, body: unknown): Promise<{ id: string }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as { id: string }
}
const webhook = await post('/api/v0/webhooks', { name: 'bench', url: 'http://127.0.0.1:9/hook', isActive: false })
const customer = await post('/api/v0/customers', { first_name: 'Bench', last_name: 'Mark', phone_number: '1' })

let counter = 0
function nextAddress(): string {
  counter++
  return `0x${counter.toString(16).padStart(40, '0')}`
}

interface Scenario {
  name: string
  options: autocannon.Options
}
const scenarios: Scenario[] = [
  { name: 'GET /health/public (baseline: no auth, no db)', options: { url: `${base}/api/v0/health/public` } },
  { name: 'GET /webhooks/{id} (auth + rate limit + read)', options: { url: `${base}/api/v0/webhooks/${webhook.id}`, headers } },
  { name: 'DELETE /webhooks/{id} missing (auth + 404)', options: { url: `${base}/api/v0/webhooks/00000000-0000-4000-8000-000000000000`, method: 'DELETE', headers } },
  {
    name: 'POST liquidation_addresses (auth + validation + insert)',
    options: {
      url: `${base}/api/v0/customers/${customer.id}/liquidation_addresses`,
      method: 'POST',
      headers,
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({ chain: 'ethereum', currency: 'usdc', address: nextAddress(), external_account_id: 'ext_1' }),
          }),
        },
      ],
    },
  },
]

const rows: { name: string; rps: number; p50: number; p99: number; non2xx: number }[] = []
for (const scenario of scenarios) {
  const result = await autocannon({ connections, duration, ...scenario.options })
  rows.push({ name: scenario.name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx })
}
server.kill('SIGTERM')
await new Promise((resolve) => server.on('exit', resolve))
await database.drop()

const baseline = rows[0]?.rps ?? 1
console.log(`\n${database.label}: ${connections} connections, ${duration} s each, client and server on this machine (${process.version})\n`)
console.log('scenario'.padEnd(58), 'req/s'.padStart(9), 'vs baseline'.padStart(12), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'non-2xx'.padStart(8))
for (const row of rows) {
  console.log(
    row.name.padEnd(58),
    row.rps.toFixed(0).padStart(9),
    `${((row.rps / baseline) * 100).toFixed(0)} %`.padStart(12),
    String(row.p50).padStart(8),
    String(row.p99).padStart(8),
    String(row.non2xx).padStart(8),
  )
}
