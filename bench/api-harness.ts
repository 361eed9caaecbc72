/**
 * What bench:api and bench:profile share: the children they fork (the webhook receiver, the bare
 * Fastify hello), the built server started as a child process on a benchmark database, the
 * benchmarked applications, and the autocannon options of the scenarios.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import type autocannon from 'autocannon'
import { SCOPES } from '../src/resources/index.js'
import type { Db } from '../src/db/database.js'
import { AppsRepository } from '../src/apps/repository.js'
import { CustomersRepository } from '../src/resources/customers/repository.js'
import { WebhooksRepository } from '../src/resources/webhooks/repository.js'
import { newId } from '../src/db/time.js'
import { generateSigningSecret } from '../src/resources/webhooks/routes.js'
import { poolWebhookId } from './api-seed.js'
import { type BenchDatabase, benchDatabase } from './database.js'

export const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`)
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Forks a bench child (bench/*.mjs) that reports its port over IPC. */
export function forkChild(file: string, args: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(fileURLToPath(new URL(file, import.meta.url)), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] })
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`${file} exited (${code})`)))
    child.once('message', (message: { port: number }) => resolve({ child, port: message.port }))
  })
}

/** Servers started and not yet stopped: stopped when their database is dropped, killed if this process exits first. */
const running = new Set<Server>()
process.on('exit', () => {
  for (const server of running) server.kill()
})
export async function stopServers(): Promise<void> {
  for (const server of [...running]) await server.stop()
}

/** Runs `work` on a fresh database, dropped afterwards whatever happens (the servers on it stopped first). */
export async function onFreshDatabase<T>(work: (database: BenchDatabase) => Promise<T>): Promise<T> {
  const database = await benchDatabase()
  try {
    return await work(database)
  } finally {
    await stopServers()
    await database.drop()
  }
}

async function freePort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

export interface Server {
  base: string
  /** CPU time the server process has used so far (user + system, from /proc), in ms */
  cpuMs(): number
  /** SIGTERM, and waits for it to exit (SIGKILL after 30 s); does nothing once stopped */
  stop(): Promise<void>
  /** SIGKILL, at once */
  kill(): void
}

export interface StartOptions {
  /** node options before the script, e.g. --cpu-prof */
  nodeArgs?: string[]
}

/** Linux: a process's user + system CPU time so far, in ms (/proc/PID/stat, in clock ticks of 10 ms). */
export function processCpuMs(pid: number): number {
  return cpuMsOf(readFileSync(`/proc/${pid}/stat`, 'utf8'))
}

/** utime + stime of a /proc/PID/stat text, in ms */
function cpuMsOf(stat: string): number {
  // The command name (field 2) may hold spaces: the fields after it start after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** CPU time (ms) of each of this machine's PostgreSQL and Redis processes, by pid, at one moment (`servicesCpuSince`). */
export interface ServicesCpu {
  postgres: Map<number, number>
  redis: Map<number, number>
}

/** This machine's PostgreSQL (`postgres`) and Redis (`redis-server`) processes' CPU time, in one pass over /proc. */
export function servicesCpuMs(): ServicesCpu {
  const reading: ServicesCpu = { postgres: new Map(), redis: new Map() }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue // exited meanwhile
    }
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
    if (command === 'postgres') reading.postgres.set(Number(entry), cpuMsOf(stat))
    else if (command === 'redis-server') reading.redis.set(Number(entry), cpuMsOf(stat))
  }
  return reading
}

/**
 * The CPU time (ms) PostgreSQL and Redis spent since `before`: the share of a load that a server
 * on PostgreSQL + Redis hands to other processes. Counted per process alive now (one started
 * since, from zero), so the backends of an earlier server that exit meanwhile take away nothing;
 * a process that exits takes its own share with it.
 */
export function servicesCpuSince(before: ServicesCpu): { postgres: number; redis: number } {
  const now = servicesCpuMs()
  const since = (after: Map<number, number>, start: Map<number, number>) => [...after].reduce((sum, [pid, ms]) => sum + ms - (start.get(pid) ?? 0), 0)
  return { postgres: since(now.postgres, before.postgres), redis: since(now.redis, before.redis) }
}

export async function startServer(database: BenchDatabase, options: StartOptions = {}): Promise<Server> {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  // LOG_LEVEL=warn: per-request log lines would measure the pipe to this process, not the API.
  // development: the webhooks may point at the loopback receiver.
  const server = spawn(process.execPath, [...(options.nodeArgs ?? []), 'dist/server.js'], {
    env: { ...process.env, PORT: String(port), DATABASE_URL: database.url, LOG_LEVEL: 'warn', NODE_ENV: 'development' },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  let stopping = false
  const exited = new Promise<void>((resolve) =>
    server.once('exit', (code, signal) => {
      if (!stopping) log(`the server exited during the run (${signal ?? `exit code ${code}`}): the rows after this fail`)
      resolve()
    }),
  )
  const handle: Server = {
    base,
    cpuMs: () => processCpuMs(server.pid ?? 0),
    async stop() {
      if (!running.delete(handle)) return
      stopping = true
      server.kill('SIGTERM')
      const killed = setTimeout(() => server.kill('SIGKILL'), 30_000)
      await exited
      clearTimeout(killed)
    },
    kill: () => server.kill('SIGKILL'),
  }
  running.add(handle)
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await fetch(`${base}/api/v0/health/public`)).ok) break
    } catch {
      if (attempt > 200) throw new Error('server did not start')
      await sleep(100)
    }
  }
  return handle
}

export interface BenchApp {
  id: string
  headers: Record<string, string>
  webhookIds: string[]
}

/**
 * An application with a development (sandbox) key whose limit is far above what a run sends (the limiter runs,
 * refuses nothing), and `active` webhooks at the receiver. Sandbox: a production key's liquidation
 * address on a fiat rail is refused (no live fiat connector), so its POST would measure a 400.
 */
export async function createApplication(db: Db, name: string, active: number, receiverUrl: string): Promise<BenchApp> {
  const apps = new AppsRepository(db)
  const app = await apps.createApp(name)
  const key = await apps.createKey({ appId: app.id, environment: 'development', scopes: SCOPES, rateLimitOverride: 1_000_000_000 })
  const webhooks = new WebhooksRepository(db)
  const webhookIds: string[] = []
  for (let i = 0; i < active; i++) {
    const webhook = await webhooks.create(app.id, { name: `${name} ${i}`, url: receiverUrl, isActive: true, encrypted: false, signingSecret: generateSigningSecret() })
    webhookIds.push(webhook.id)
  }
  return { id: app.id, headers: { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret, 'content-type': 'application/json' }, webhookIds }
}

/**
 * `count` applications with one active webhook each, the i-th posting to `/w{i}` on the receiver
 * at `receiverPort` (webhooks.ts and drain.ts: events spread round-robin, one delivery each).
 */
export async function createOneWebhookApps(db: Db, count: number, receiverPort: number, label: string): Promise<{ appIds: string[]; webhookIds: string[] }> {
  const appIds: string[] = []
  const webhookIds: string[] = []
  for (let i = 0; i < count; i++) {
    const owner = await new AppsRepository(db).createApp(`${label} ${i}`)
    const webhook = await new WebhooksRepository(db).create(owner.id, {
      name: `w${i}`,
      url: `http://127.0.0.1:${receiverPort}/w${i}`,
      isActive: true,
      encrypted: false,
      signingSecret: `whsec_${Buffer.alloc(32, i).toString('base64')}`,
    })
    appIds.push(owner.id)
    webhookIds.push(webhook.id)
  }
  return { appIds, webhookIds }
}

/** The webhook benches' event data: a tax with a long description, so its envelope is 1 KB. */
export const TAX_EVENT_DATA = { id: newId(), name: 'VAT', description: 'd'.repeat(800), percentage: 20, active: true, created_at: new Date().toISOString(), updated_at: new Date().toISOString() }

/** One bare keep-alive POST of `body` to the receiver on `port` (no database, no signing): the webhook benches' baseline. */
export function barePost(agent: http.Agent, port: number, body: string, id: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, path: '/raw', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'webhook-id': id } },
      (response) => {
        response.resume()
        response.on('end', resolve)
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}

export async function createCustomer(db: Db, appId: string): Promise<string> {
  return (await new CustomersRepository(db).create(appId, { first_name: 'Bench', last_name: 'Mark', phone_number: '1' })).id
}

let addresses = 0
function nextAddress(): string {
  addresses++
  return `0x${addresses.toString(16).padStart(40, '0')}`
}

export function getWebhook(server: Pick<Server, 'base'>, app: BenchApp): autocannon.Options {
  return { url: `${server.base}/api/v0/webhooks/${app.webhookIds[0] ?? ''}`, headers: app.headers }
}

export function postAddress(server: Pick<Server, 'base'>, app: BenchApp, customerId: string): autocannon.Options {
  return {
    url: `${server.base}/api/v0/customers/${customerId}/liquidation_addresses`,
    method: 'POST',
    headers: app.headers,
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({ chain: 'ethereum', currency: 'usdc', address: nextAddress(), external_account_id: 'ext_1' }),
        }),
      },
    ],
  }
}

/**
 * DELETE of the pool's webhooks from `offset` on, each request the next one (past `pool` of them: a
 * missing one, 404, counted as non-2xx).
 */
export function deletePool(server: Pick<Server, 'base'>, app: BenchApp, pool: number, amount?: number, offset = 0): autocannon.Options {
  let next = 0
  return {
    url: `${server.base}/api/v0/webhooks/${poolWebhookId(offset)}`,
    method: 'DELETE',
    headers: { 'x-client-key': app.headers['x-client-key'] ?? '', 'x-client-secret': app.headers['x-client-secret'] ?? '' },
    ...(amount === undefined ? {} : { amount }),
    requests: [{ setupRequest: (request) => ({ ...request, path: `/api/v0/webhooks/${next < pool ? poolWebhookId(offset + next++) : '00000000-0000-4000-8000-000000000000'}` }) }],
  }
}

export interface Floor {
  base: string
  pid: number
  stop(): void
}

/** bench/fastify-floor.mjs on `database` (REDIS_URL passed on), from the build. */
export async function startFloor(database: BenchDatabase): Promise<Floor> {
  const target = database.location.kind === 'sqlite' ? database.location.filename : database.location.url
  const { child, port } = await forkChild('./fastify-floor.mjs', [target])
  return { base: `http://127.0.0.1:${port}`, pid: child.pid ?? 0, stop: () => child.kill('SIGTERM') }
}
