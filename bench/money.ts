/**
 * bench:money (issues 29 and 30): how fast money moves through the built server, each figure beside
 * a floor measured in the same run on the same backend (bench/money-floor.mjs: a bare Fastify writing
 * the same ledger rows with no API layers), so the share means something on a shared machine.
 *
 * Groups (`--only pipeline,intake,hot`; all by default), each run `--runs` times; every scenario on a
 * fresh database (SQLite file, or a PostgreSQL database made and dropped on the server of
 * DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test, with Redis at REDIS_URL, default
 * redis://127.0.0.1:6379), the floor and the project taking turns first:
 *
 *   pipeline  deposits per second taken to payment_processed with their three events
 *             (drain.created, drain.updated ×2) delivered to a local receiver (its own process):
 *             `--deposits` POST simulate_deposit (autocannon, `--connections`) spread over
 *             `--addresses` addresses of one application; the clock runs from the first request to
 *             the last of the 3 × deposits events arriving. The server runs its drain scheduler with
 *             no sandbox delay (DRAIN_DELAY_FAST_MS=0, DRAIN_POLL_MS=10), so the pipeline is measured.
 *   intake    POST simulate_deposit for `--seconds` each (the drain scheduler off in both): requests
 *             per second, spread over `--addresses` addresses, and hot (every request on one address:
 *             one clearing account). Each deposit's drain.created event is delivered as it happens.
 *             Both run at once, each on its own database, and take turns in slices of 2 s, so a
 *             change in the machine's load weighs on both alike.
 *   transfers POST /transfers/external-stablecoin-transfer (0.01 USDC from a wallet funded through the
 *             API by a test payment; a pending entry reserves it) for `--seconds` each, the money
 *             scheduler off in both, over `--wallets` applications (one wallet each) and hot (every
 *             request on one wallet); project and floor take turns in slices as the intake does.
 *   transfers-processed
 *             `--transfers` transfers taken to payment_processed, over `--wallets` wallets and on one:
 *             the server's money scheduler at DRAIN_DELAY_FAST_MS=0, DRAIN_POLL_MS=10 (the floor hands
 *             each on in memory); the clock runs from the first request to the last transfer's
 *             updated_at, and verifyLedger must pass at the end.
 *   hot       PostgreSQL only, in this process, no HTTP: do one application's drains serialise on
 *             its hot accounts (the developer-fee account every drain credits, the world accounts)?
 *             `--hot-drains` deposits by `--hot-concurrency` writers through the intake
 *             (receiveDeposit), then every drain advanced to payment_processed (advanceDrain, two
 *             steps) by as many writers; for one application with `--hot-apps` addresses vs
 *             `--hot-apps` applications with one address each, the hot accounts spread over each
 *             of `--hot-shards` rows (8, the default, and 1). Prints intake/s, drains advanced/s
 *             and the mean number of backends waiting for a lock (pg_stat_activity, every 20 ms).
 *
 *   npm run bench:money [-- --runs 3 --deposits 3000 --seconds 10 --connections 50 --addresses 100 --transfers 3000 --wallets 100
 *                        --backends sqlite,postgres --only pipeline,intake,transfers,transfers-processed,hot
 *                        --hot-drains 2000 --hot-apps 32 --hot-concurrency 4,16 --hot-shards 8,1]
 *   npm run bench:money -- --only intake --cpu-prof DIR   (the project's servers write V8 CPU profiles: bench/cpu-profile-summary.ts)
 */
import { type ChildProcess, fork, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import pg from 'pg'
import { type DatabaseLocation, parseDatabaseUrl, publicUrlOf } from '../src/config.js'
import { type Db } from '../src/db/database.js'
import { openDatabase } from '../src/modules/database.js'
import { AppsRepository } from '../src/apps/repository.js'
import { transactOn } from '../src/events/transact.js'
import { DeliveryNotifier } from '../src/delivery/notifier.js'
import { ExchangeRates } from '../src/ledger/rates.js'
import { verifyLedger } from '../src/ledger/ledger.js'
import { CustomersRepository } from '../src/resources/customers/repository.js'
import { advanceDrain, type DrainContext, receiveDeposit } from '../src/resources/drains/lifecycle.js'
import { domainHooks, SCOPES } from '../src/resources/index.js'
import { LiquidationAddressesRepository } from '../src/resources/liquidation-addresses/repository.js'
import { WebhooksRepository } from '../src/resources/webhooks/repository.js'
import { generateSigningSecret } from '../src/resources/webhooks/routes.js'
import { forkChild, log, processCpuMs, sleep } from './api-harness.js'

const GROUPS = ['pipeline', 'intake', 'transfers', 'transfers-processed', 'hot'] as const
type GroupName = (typeof GROUPS)[number]
type Backend = 'sqlite' | 'postgres'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    deposits: { type: 'string', default: '3000' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    addresses: { type: 'string', default: '100' },
    transfers: { type: 'string', default: '3000' },
    wallets: { type: 'string', default: '100' },
    backends: { type: 'string', default: 'sqlite,postgres' },
    only: { type: 'string', multiple: true },
    'hot-drains': { type: 'string', default: '2000' },
    'hot-apps': { type: 'string', default: '32' },
    'hot-concurrency': { type: 'string', multiple: true },
    'hot-shards': { type: 'string', multiple: true },
    'cpu-prof': { type: 'string' },
  },
})
function positive(name: string, text: string): number {
  const n = Number(text)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer (got ${JSON.stringify(text)})`)
  return n
}
const RUNS = positive('runs', values.runs)
const DEPOSITS = positive('deposits', values.deposits)
const SECONDS = positive('seconds', values.seconds)
const CONNECTIONS = positive('connections', values.connections)
const ADDRESSES = positive('addresses', values.addresses)
const TRANSFERS = positive('transfers', values.transfers)
const WALLETS = positive('wallets', values.wallets)
const HOT_DRAINS = positive('hot-drains', values['hot-drains'])
const HOT_APPS = positive('hot-apps', values['hot-apps'])
const HOT_CONCURRENCY = (values['hot-concurrency'] ?? ['4,16']).flatMap((value) => value.split(',')).map((value) => positive('hot-concurrency', value))
const HOT_SHARDS = (values['hot-shards'] ?? ['8,1']).flatMap((value) => value.split(',')).map((value) => positive('hot-shards', value))
const BACKENDS = values.backends.split(',').map((name) => {
  if (name !== 'sqlite' && name !== 'postgres') throw new Error(`--backends: sqlite and/or postgres (got ${JSON.stringify(name)})`)
  return name
})
const only = new Set<GroupName>()
for (const name of (values.only ?? [...GROUPS]).flatMap((value) => value.split(','))) {
  const group = GROUPS.find((known) => known === name.trim())
  if (group === undefined) throw new Error(`--only: unknown group ${JSON.stringify(name)} (groups: ${GROUPS.join(', ')})`)
  only.add(group)
}
const POSTGRES_URL = process.env.DATABASE_URL?.startsWith('postgres') === true ? process.env.DATABASE_URL : 'postgres://postgres@127.0.0.1:5432/test'
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
/** The amount of every deposit, in USDC; the addresses take a 1 % developer fee, so every drain credits the fee account. */
const DEPOSIT_AMOUNT = '25.00'
/** node options of the project's server: V8 CPU profiles with --cpu-prof DIR */
const profiling = values['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']]
/** How long the pipeline may take before the run is called failed. */
const PIPELINE_TIMEOUT_MS = 600_000

// ---- databases and processes -------------------------------------------------------------------

interface FreshDatabase {
  location: DatabaseLocation
  url: string
  /** what the floor is given: the SQLite file or the postgres:// URL */
  target: string
  name: string
  drop(): Promise<void>
}

/** A fresh database of the backend (a temporary SQLite file, or a database made on POSTGRES_URL's server). */
async function freshDatabase(backend: Backend): Promise<FreshDatabase> {
  if (backend === 'postgres') {
    const name = `devplatform_money_${randomBytes(4).toString('hex')}`
    const admin = new pg.Client({ connectionString: POSTGRES_URL })
    await admin.connect()
    await admin.query(`create database ${name}`)
    await admin.end()
    const url = new URL(POSTGRES_URL)
    url.pathname = `/${name}`
    return {
      location: parseDatabaseUrl(url.toString(), 'DATABASE_URL', 20),
      url: url.toString(),
      target: url.toString(),
      name,
      async drop() {
        const client = new pg.Client({ connectionString: POSTGRES_URL })
        await client.connect()
        await client.query(`drop database if exists ${name} with (force)`)
        await client.end()
      },
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'devplatform-money-'))
  const filename = join(dir, 'bench.db')
  return {
    location: { kind: 'sqlite', filename },
    url: `sqlite:${filename}`,
    target: filename,
    name: filename,
    async drop() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

interface Process {
  base: string
  cpuMs(): number
  stop(): Promise<void>
}

async function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  await new Promise<void>((resolve) => {
    const killed = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.once('exit', () => {
      clearTimeout(killed)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

/** The built server (dist/server.js) on the database, with `env` on top of the bench's settings. */
async function startProject(database: FreshDatabase, backend: Backend, env: Record<string, string>, nodeArgs: string[] = []): Promise<Process> {
  const port = env.PORT ?? String(20_000 + Math.floor(Math.random() * 20_000))
  const base = `http://127.0.0.1:${port}`
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    PORT: port,
    DATABASE_URL: database.url,
    REDIS_URL: backend === 'postgres' ? REDIS_URL : undefined,
    // warn: per-request log lines would measure the pipe to this process, not the API.
    LOG_LEVEL: 'warn',
    // development: the webhook may point at the loopback receiver.
    NODE_ENV: 'development',
    ...env,
  }
  if (backend === 'sqlite') delete childEnv.REDIS_URL
  const child = spawn(process.execPath, [...nodeArgs, 'dist/server.js'], { env: childEnv, stdio: ['ignore', 'inherit', 'inherit'] })
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await fetch(`${base}/api/v0/health/public`)).ok && child.exitCode === null) break
    } catch {
      if (attempt > 300 || child.exitCode !== null) throw new Error('the server did not start')
      await sleep(100)
    }
  }
  return { base, cpuMs: () => processCpuMs(child.pid ?? 0), stop: () => waitForExit(child) }
}

/** startProject on a port the system says is free, again on another if the server could not listen (the machine is shared). */
async function startProjectRetrying(database: FreshDatabase, backend: Backend, env: Record<string, string>, nodeArgs: string[] = []): Promise<Process> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    try {
      return await startProject(database, backend, { ...env, PORT: String(port) }, nodeArgs)
    } catch (error) {
      if (attempt === 3) throw error
      log(`  the server did not start on port ${port}; again on another`)
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

async function startFloor(database: FreshDatabase, backend: Backend, mode: 'intake' | 'pipeline' | 'transfer' | 'transfer-pipeline'): Promise<Process> {
  const args = [database.target, backend === 'postgres' ? REDIS_URL : '-', mode, '8']
  // With --cpu-prof the floor writes its profile too (DIR/floor), to be read beside the project's.
  const { child, port } = profiling.length === 0 ? await forkChild('./money-floor.mjs', args) : await forkProfiled(args)
  child.removeAllListeners('exit')
  return { base: `http://127.0.0.1:${port}`, cpuMs: () => processCpuMs(child.pid ?? 0), stop: () => waitForExit(child) }
}

function forkProfiled(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(fileURLToPath(new URL('./money-floor.mjs', import.meta.url)), args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: ['--cpu-prof', '--cpu-prof-dir', join(values['cpu-prof'] ?? '.', 'floor')],
  })
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`money-floor.mjs exited (${code})`)))
    child.once('message', (message: { port: number }) => resolve({ child, port: message.port }))
  })
}

// ---- the receiver ------------------------------------------------------------------------------

const { child: receiver, port: receiverPort } = await forkChild('./webhook-receiver.mjs')

/** The arrivals at the receiver since the last call: [webhook-id, epoch ms]. */
function takeArrivals(): Promise<[string, number][]> {
  return new Promise((resolve) => {
    receiver.once('message', (message: { arrivals: [string, number][] }) => resolve(message.arrivals))
    receiver.send('take')
  })
}

// ---- seeding -----------------------------------------------------------------------------------

interface Seeded {
  headers: Record<string, string>
  /** each address's simulate_deposit path */
  paths: string[]
}

function evmAddress(): string {
  return `0x${randomBytes(20).toString('hex')}`
}

/**
 * An application with a development key (its limit far above a run), one active webhook at the
 * receiver, one customer and `addresses` USDC addresses on Ethereum forwarding to an Ethereum
 * address with a 1 % developer fee (no conversion: the fee, the payout and the clearing account).
 */
async function seedApplication(db: Db, addresses: number, label: string, webhook: boolean): Promise<Seeded & { appId: string; customerId: string; addressIds: string[] }> {
  const apps = new AppsRepository(db)
  const app = await apps.createApp(label)
  const key = await apps.createKey({ appId: app.id, environment: 'development', scopes: SCOPES, rateLimitOverride: 1_000_000_000 })
  if (webhook) {
    await new WebhooksRepository(db).create(app.id, { name: label, url: `http://127.0.0.1:${receiverPort}/money`, isActive: true, encrypted: false, signingSecret: generateSigningSecret() })
  }
  const customer = await new CustomersRepository(db).create(app.id, { first_name: 'Bench', last_name: 'Money', phone_number: '1' })
  const addressIds: string[] = []
  const paths: string[] = []
  for (let i = 0; i < addresses; i++) {
    const address = await new LiquidationAddressesRepository(db).create(app.id, customer.id, {
      chain: 'ethereum',
      currency: 'usdc',
      address: evmAddress(),
      destination_payment_rail: 'ethereum',
      destination_currency: 'usdc',
      destination_address: evmAddress(),
      custom_developer_fee_percent: '1',
    })
    addressIds.push(address.id)
    paths.push(`/api/v0/customers/${customer.id}/liquidation_addresses/${address.id}/simulate_deposit`)
  }
  return {
    appId: app.id,
    customerId: customer.id,
    addressIds,
    paths,
    headers: { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret, 'content-type': 'application/json' },
  }
}

/** A fresh database of the backend, seeded (schema by the project's migrations), and `work` on it; dropped afterwards. */
async function onSeededDatabase<T>(backend: Backend, addresses: number, work: (database: FreshDatabase, seeded: Seeded) => Promise<T>): Promise<T> {
  const database = await freshDatabase(backend)
  try {
    const db = await openDatabase(database.location)
    let seeded: Seeded
    try {
      seeded = await seedApplication(db, addresses, 'money', true)
    } finally {
      await db.destroy()
    }
    return await work(database, seeded)
  } finally {
    await database.drop()
  }
}

// ---- load --------------------------------------------------------------------------------------

/** POST simulate_deposit round-robin over `paths`: `amount` requests, or for `seconds`. */
function deposits(base: string, seeded: Seeded, paths: string[], limit: { amount: number } | { duration: number }): Promise<autocannon.Result> {
  let next = 0
  const body = JSON.stringify({ amount: DEPOSIT_AMOUNT })
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${base}${paths[0] ?? ''}`,
        method: 'POST',
        headers: seeded.headers,
        connections: CONNECTIONS,
        ...limit,
        requests: [{ setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] ?? '', body }) }],
      },
      (error, result) => (error === null || error === undefined ? resolve(result) : reject(error instanceof Error ? error : new Error(String(error)))),
    )
  })
}

interface PipelineFigure {
  /** deposits per second taken to payment_processed with their events delivered */
  rate: number
  /** the intake alone: deposits answered per second while the pipeline ran */
  intakeRate: number
  /** CPU ms of the server (or floor) process per deposit */
  cpuMsPerDeposit: number
}

const epochNow = () => performance.timeOrigin + performance.now()

async function pipeline(backend: Backend, system: 'project' | 'floor'): Promise<PipelineFigure> {
  return onSeededDatabase(backend, ADDRESSES, async (database, seeded) => {
    const server =
      system === 'floor'
        ? await startFloor(database, backend, 'pipeline')
        : await startProjectRetrying(database, backend, { DRAIN_DELAY_FAST_MS: '0', DRAIN_DELAY_ACH_MS: '0', DRAIN_POLL_MS: '10' }, profiling)
    try {
      await takeArrivals()
      const cpuStart = server.cpuMs()
      const started = epochNow()
      const load = deposits(server.base, seeded, seeded.paths, { amount: DEPOSITS })
      let answeredAt = 0
      void load.then(() => (answeredAt = epochNow()))
      const result = await load
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${system}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
      const expected = 3 * DEPOSITS
      const seen = new Set<string>()
      let last = 0
      while (seen.size < expected) {
        if (epochNow() - started > PIPELINE_TIMEOUT_MS) throw new Error(`${system}: ${seen.size} of ${expected} events arrived in ${PIPELINE_TIMEOUT_MS} ms`)
        for (const [id, at] of await takeArrivals()) {
          seen.add(id)
          last = Math.max(last, at)
        }
        if (seen.size < expected) await sleep(50)
      }
      return {
        rate: (DEPOSITS * 1000) / (last - started),
        intakeRate: (DEPOSITS * 1000) / (answeredAt - started),
        cpuMsPerDeposit: (server.cpuMs() - cpuStart) / DEPOSITS,
      }
    } finally {
      await server.stop()
    }
  })
}

interface IntakeFigure {
  rate: number
  p99: number
  cpuMsPerDeposit: number
}

/** Each system's slice of the intake measurement, in seconds: the two take turns, so a drift of the machine's load weighs on both. */
const INTAKE_SLICE_SECONDS = 2

/**
 * The floor and the project loaded in turns, a slice of INTAKE_SLICE_SECONDS each (`load`), until
 * each has had SECONDS, the order alternating from slice to slice and from run to run: each one's
 * rate, median p99 and CPU per answered request.
 */
async function inTurns(run: number, servers: Record<'floor' | 'project', Process>, load: (system: 'floor' | 'project') => Promise<autocannon.Result>): Promise<{ project: IntakeFigure; floor: IntakeFigure }> {
  const totals = {
    floor: { answered: 0, seconds: 0, cpuMs: 0, p99: [] as number[] },
    project: { answered: 0, seconds: 0, cpuMs: 0, p99: [] as number[] },
  }
  const slices = Math.max(1, Math.round(SECONDS / INTAKE_SLICE_SECONDS))
  for (let slice = 0; slice < slices; slice++) {
    const order: ('floor' | 'project')[] = (slice + run) % 2 === 0 ? ['floor', 'project'] : ['project', 'floor']
    for (const system of order) {
      const server = servers[system]
      const cpuStart = server.cpuMs()
      const result = await load(system)
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${system}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
      const total = totals[system]
      total.cpuMs += server.cpuMs() - cpuStart
      total.answered += result['2xx']
      total.seconds += result.duration
      total.p99.push(result.latency.p99)
    }
  }
  const figure = (total: (typeof totals)['floor']): IntakeFigure => ({ rate: total.answered / total.seconds, p99: median(total.p99), cpuMsPerDeposit: total.cpuMs / total.answered })
  return { project: figure(totals.project), floor: figure(totals.floor) }
}

/**
 * The project's and the floor's intake, each on its own fresh database, both running, measured
 * in alternating slices of INTAKE_SLICE_SECONDS until each has had SECONDS.
 */
async function intake(backend: Backend, hot: boolean, run: number): Promise<{ project: IntakeFigure; floor: IntakeFigure }> {
  return onSeededDatabase(backend, ADDRESSES, (floorDatabase, floorSeeded) =>
    onSeededDatabase(backend, ADDRESSES, async (projectDatabase, projectSeeded) => {
      const floor = await startFloor(floorDatabase, backend, 'intake')
      const project = await startProjectRetrying(projectDatabase, backend, { DRAIN_SCHEDULER: 'off' }, profiling)
      const systems = { floor: { server: floor, seeded: floorSeeded }, project: { server: project, seeded: projectSeeded } }
      try {
        // A warm-up, so both start with their statements prepared and their accounts made.
        for (const { server, seeded } of Object.values(systems)) await deposits(server.base, seeded, seeded.paths, { amount: 2 * ADDRESSES })
        const figures = await inTurns(run, { floor, project }, (system) => {
          const { server, seeded } = systems[system]
          return deposits(server.base, seeded, hot ? seeded.paths.slice(0, 1) : seeded.paths, { duration: INTAKE_SLICE_SECONDS })
        })
        await takeArrivals()
        return figures
      } finally {
        await project.stop()
        await floor.stop()
      }
    }),
  )
}

// ---- transfers -----------------------------------------------------------------------------------

/** Every transfer moves this much USDC out of its wallet (no developer fee: the wallet and the payout are its two accounts). */
const TRANSFER_AMOUNT = '0.01'
/** What each wallet is funded with: a test payment's largest amount, far above a run's transfers. */
const FUNDING_USD = 1_000_000

interface TransferSender {
  headers: Record<string, string>
  body: string
}

/** `count` applications, each with a development key (its limit far above a run) and no webhook: a transfer's event stays in the outbox. */
async function seedTransferApps(db: Db, count: number): Promise<Record<string, string>[]> {
  const apps = new AppsRepository(db)
  const headers: Record<string, string>[] = []
  for (let i = 0; i < count; i++) {
    const app = await apps.createApp(`transfers ${i}`)
    const key = await apps.createKey({ appId: app.id, environment: 'development', scopes: SCOPES, rateLimitOverride: 1_000_000_000 })
    headers.push({ 'x-client-key': key.client_key, 'x-client-secret': key.client_secret, 'content-type': 'application/json' })
  }
  return headers
}

/** Through the project's API on the database (a server started for it and stopped): a test payment credits each application's base wallet. */
async function fundThroughApi(database: FreshDatabase, backend: Backend, apps: Record<string, string>[]): Promise<TransferSender[]> {
  const server = await startProjectRetrying(database, backend, { DRAIN_SCHEDULER: 'off' })
  try {
    const senders: TransferSender[] = []
    for (const headers of apps) {
      const paid = await fetch(`${server.base}/api/v0/test-payment`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': randomBytes(8).toString('hex') },
        body: JSON.stringify({ amount: FUNDING_USD, currency: 'USD', description: 'bench funding' }),
      })
      if (paid.status !== 201) throw new Error(`the test payment answered ${paid.status}: ${await paid.text()}`)
      const wallets = (await (await fetch(`${server.base}/api/v0/wallets`, { headers })).json()) as { data: { id: string; chain: string }[] }
      const base = wallets.data.find((wallet) => wallet.chain === 'base')
      if (base === undefined) throw new Error('no base wallet after the test payment')
      senders.push({
        headers,
        body: JSON.stringify({ sourceWalletId: base.id, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'bench_beneficiary', amount: TRANSFER_AMOUNT }),
      })
    }
    return senders
  } finally {
    await server.stop()
  }
}

/** A fresh database with `count` funded applications, and `work` on it; dropped afterwards. */
async function onFundedDatabase<T>(backend: Backend, count: number, work: (database: FreshDatabase, senders: TransferSender[]) => Promise<T>): Promise<T> {
  const database = await freshDatabase(backend)
  try {
    const db = await openDatabase(database.location)
    let apps: Record<string, string>[]
    try {
      apps = await seedTransferApps(db, count)
    } finally {
      await db.destroy()
    }
    return await work(database, await fundThroughApi(database, backend, apps))
  } finally {
    await database.drop()
  }
}

const TRANSFER_PATH = '/api/v0/transfers/external-stablecoin-transfer'

/** POST external-stablecoin-transfer round-robin over `senders` (each its own key and wallet): `amount` requests, or for `duration` seconds. */
function transfers(base: string, senders: TransferSender[], limit: { amount: number } | { duration: number }): Promise<autocannon.Result> {
  let next = 0
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${base}${TRANSFER_PATH}`,
        method: 'POST',
        connections: CONNECTIONS,
        ...limit,
        requests: [
          {
            setupRequest: (request) => {
              const sender = senders[next++ % senders.length] as TransferSender
              return { ...request, path: TRANSFER_PATH, headers: sender.headers, body: sender.body }
            },
          },
        ],
      },
      (error, result) => (error === null || error === undefined ? resolve(result) : reject(error instanceof Error ? error : new Error(String(error)))),
    )
  })
}

/**
 * Transfers created: the project (money scheduler off) and the floor, each on its own funded
 * database, both running, measured in alternating slices as the intake is.
 */
async function transfersCreated(backend: Backend, hot: boolean, run: number): Promise<{ project: IntakeFigure; floor: IntakeFigure }> {
  const count = hot ? 1 : WALLETS
  return onFundedDatabase(backend, count, (floorDatabase, floorSenders) =>
    onFundedDatabase(backend, count, async (projectDatabase, projectSenders) => {
      const floor = await startFloor(floorDatabase, backend, 'transfer')
      const project = await startProjectRetrying(projectDatabase, backend, { DRAIN_SCHEDULER: 'off' }, profiling)
      const systems = { floor: { server: floor, senders: floorSenders }, project: { server: project, senders: projectSenders } }
      try {
        for (const { server, senders } of Object.values(systems)) {
          const warm = await transfers(server.base, senders, { amount: Math.max(200, 2 * senders.length) })
          if (warm.non2xx > 0 || warm.errors > 0) throw new Error(`warm-up: ${warm.non2xx} non-2xx answers, ${warm.errors} errors`)
        }
        return await inTurns(run, { floor, project }, (system) => transfers(systems[system].server.base, systems[system].senders, { duration: INTAKE_SLICE_SECONDS }))
      } finally {
        await project.stop()
        await floor.stop()
      }
    }),
  )
}

/**
 * Transfers taken to payment_processed: TRANSFERS requests, the server's money scheduler (or the
 * floor's hand-off) advancing each through payment_submitted to payment_processed; the clock runs
 * from the first request to the last transfer's processing (its updated_at, read from the database).
 */
async function transfersProcessed(backend: Backend, hot: boolean, system: 'project' | 'floor'): Promise<PipelineFigure> {
  return onFundedDatabase(backend, hot ? 1 : WALLETS, async (database, senders) => {
    const server =
      system === 'floor'
        ? await startFloor(database, backend, 'transfer-pipeline')
        : await startProjectRetrying(database, backend, { DRAIN_DELAY_FAST_MS: '0', DRAIN_DELAY_ACH_MS: '0', DRAIN_POLL_MS: '10' }, profiling)
    const db = await openDatabase(database.location)
    try {
      const cpuStart = server.cpuMs()
      const started = epochNow()
      const load = transfers(server.base, senders, { amount: TRANSFERS })
      let answeredAt = 0
      void load.then(() => (answeredAt = epochNow()))
      const result = await load
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${system}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
      for (;;) {
        if (epochNow() - started > PIPELINE_TIMEOUT_MS) throw new Error(`${system}: the transfers were not all processed in ${PIPELINE_TIMEOUT_MS} ms`)
        const done = await db
          .selectFrom('transfers')
          .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.max('updated_at').as('last')])
          .where('state', '=', 'payment_processed')
          .executeTakeFirstOrThrow()
        if (Number(done.n) === TRANSFERS) {
          const cpuMs = server.cpuMs() - cpuStart
          const difference = await verifyLedger(db, 'sandbox')
          if (difference !== undefined) throw new Error(`${system}: the ledger does not verify: ${JSON.stringify(difference, (_, value: unknown) => (typeof value === 'bigint' ? String(value) : value))}`)
          return { rate: (TRANSFERS * 1000) / (Date.parse(String(done.last)) - started), intakeRate: (TRANSFERS * 1000) / (answeredAt - started), cpuMsPerDeposit: cpuMs / TRANSFERS }
        }
        await sleep(100)
      }
    } finally {
      await db.destroy()
      await server.stop()
    }
  })
}

// ---- hot accounts (PostgreSQL, in this process) ----------------------------------------------------

interface HotFigure {
  intakeRate: number
  advanceRate: number
  /** mean backends waiting for a lock while the drains advanced */
  lockWaiters: number
}

/** Runs `count` tasks by `concurrency` workers. */
async function inParallel(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++)
    }),
  )
}

/** Samples, every 20 ms, how many backends of the database wait for a lock; stop() gives the mean. */
function lockSampler(database: FreshDatabase): { stop(): Promise<number> } {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  const samples: number[] = []
  let running = true
  const loop = (async () => {
    await client.connect()
    while (running) {
      const { rows } = await client.query<{ n: string }>("select count(*) as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'", [database.name])
      samples.push(Number(rows[0]?.n ?? 0))
      await sleep(20)
    }
    await client.end()
  })()
  return {
    async stop() {
      running = false
      await loop
      return samples.reduce((sum, n) => sum + n, 0) / Math.max(1, samples.length)
    },
  }
}

async function hotAccounts(oneApp: boolean, shards: number, concurrency: number): Promise<HotFigure> {
  const database = await freshDatabase('postgres')
  try {
    const db = await openDatabase(database.location)
    try {
      // One application with HOT_APPS addresses, or HOT_APPS applications with one each: the same
      // number of clearing accounts, so only the application's own accounts differ.
      const targets: { appId: string; customerId: string; addressId: string }[] = []
      for (let i = 0; i < (oneApp ? 1 : HOT_APPS); i++) {
        const seeded = await seedApplication(db, oneApp ? HOT_APPS : 1, `hot ${i}`, false)
        for (const addressId of seeded.addressIds) targets.push({ appId: seeded.appId, customerId: seeded.customerId, addressId })
      }
      const context: DrainContext = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 0, achDelayMs: 0 }, now: Date.now, hotAccountShards: shards }
      const transact = transactOn(db, new DeliveryNotifier(), domainHooks({ publicUrl: () => publicUrlOf(process.env), money: context }))
      const drainIds: string[] = []
      const intakeStarted = performance.now()
      await inParallel(HOT_DRAINS, concurrency, async (i) => {
        const target = targets[i % targets.length] as (typeof targets)[number]
        const drain = await transact((tx) =>
          receiveDeposit(tx, context, { environment: 'sandbox', appId: target.appId, customerId: target.customerId, liquidationAddressId: target.addressId, amount: DEPOSIT_AMOUNT }),
        )
        drainIds.push(drain.id)
      })
      const intakeRate = (HOT_DRAINS * 1000) / (performance.now() - intakeStarted)
      const sampler = lockSampler(database)
      const advanceStarted = performance.now()
      await inParallel(drainIds.length, concurrency, async (i) => {
        const id = drainIds[i] as string
        if (!(await transact((tx) => advanceDrain(tx, context, id)))) throw new Error(`drain ${id} was not due`)
        if (!(await transact((tx) => advanceDrain(tx, context, id)))) throw new Error(`drain ${id} was not due for its second step`)
      })
      const advanceRate = (drainIds.length * 1000) / (performance.now() - advanceStarted)
      const lockWaiters = await sampler.stop()
      const processed = await db.selectFrom('drains').select((eb) => eb.fn.countAll<string>().as('n')).where('state', '=', 'payment_processed').executeTakeFirstOrThrow()
      if (Number(processed.n) !== HOT_DRAINS) throw new Error(`${processed.n} of ${HOT_DRAINS} drains processed`)
      const difference = await verifyLedger(db, 'sandbox')
      if (difference !== undefined) throw new Error(`the ledger does not verify: ${JSON.stringify(difference, (_, value: unknown) => (typeof value === 'bigint' ? String(value) : value))}`)
      return { intakeRate, advanceRate, lockWaiters }
    } finally {
      await db.destroy()
    }
  } finally {
    await database.drop()
  }
}

// ---- the runs and the tables -------------------------------------------------------------------

const range = (numbers: number[], digits = 0) => {
  const low = Math.min(...numbers)
  const high = Math.max(...numbers)
  return low.toFixed(digits) === high.toFixed(digits) ? low.toFixed(digits) : `${low.toFixed(digits)}–${high.toFixed(digits)}`
}
const median = (numbers: number[]) => {
  const sorted = [...numbers].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}
const percent = (numbers: number[]) => `${range(numbers.map((n) => n * 100))} %`

const pipelineRuns = new Map<Backend, { project: PipelineFigure; floor: PipelineFigure }[]>()
const intakeRuns = new Map<string, { project: IntakeFigure; floor: IntakeFigure }[]>()
const hotRuns = new Map<string, HotFigure[]>()
const transferRuns = new Map<string, { project: IntakeFigure; floor: IntakeFigure }[]>()
const processedRuns = new Map<string, { project: PipelineFigure; floor: PipelineFigure }[]>()

/** The floor first in even runs, the project first in odd ones: a drift of the machine's load weighs on both. */
async function pair<T>(run: number, measure: (system: 'project' | 'floor') => Promise<T>): Promise<{ project: T; floor: T }> {
  if (run % 2 === 0) {
    const floor = await measure('floor')
    return { floor, project: await measure('project') }
  }
  const project = await measure('project')
  return { project, floor: await measure('floor') }
}

try {
  for (let run = 0; run < RUNS; run++) {
    for (const backend of BACKENDS) {
      if (only.has('pipeline')) {
        log(`run ${run + 1}/${RUNS} ${backend}: pipeline, ${DEPOSITS} deposits…`)
        const figures = await pair(run, (system) => pipeline(backend, system))
        log(`  project ${figures.project.rate.toFixed(0)}/s, floor ${figures.floor.rate.toFixed(0)}/s`)
        pipelineRuns.set(backend, [...(pipelineRuns.get(backend) ?? []), figures])
      }
      if (only.has('intake')) {
        for (const hot of [false, true]) {
          log(`run ${run + 1}/${RUNS} ${backend}: intake ${hot ? 'hot (one address)' : `spread (${ADDRESSES} addresses)`}…`)
          const figures = await intake(backend, hot, run)
          log(`  project ${figures.project.rate.toFixed(0)}/s, floor ${figures.floor.rate.toFixed(0)}/s`)
          const key = `${backend} ${hot ? 'hot' : 'spread'}`
          intakeRuns.set(key, [...(intakeRuns.get(key) ?? []), figures])
        }
      }
      if (only.has('transfers')) {
        for (const hot of [false, true]) {
          log(`run ${run + 1}/${RUNS} ${backend}: transfers created, ${hot ? 'hot (one wallet)' : `spread (${WALLETS} wallets)`}…`)
          const figures = await transfersCreated(backend, hot, run).catch((error: unknown) => void log(`  failed, left out: ${String(error)}`))
          if (figures === undefined) continue
          log(`  project ${figures.project.rate.toFixed(0)}/s, floor ${figures.floor.rate.toFixed(0)}/s`)
          const key = `${backend} ${hot ? 'hot' : 'spread'}`
          transferRuns.set(key, [...(transferRuns.get(key) ?? []), figures])
        }
      }
      if (only.has('transfers-processed')) {
        for (const hot of [false, true]) {
          log(`run ${run + 1}/${RUNS} ${backend}: ${TRANSFERS} transfers to payment_processed, ${hot ? 'hot (one wallet)' : `spread (${WALLETS} wallets)`}…`)
          const figures = await pair(run, (system) => transfersProcessed(backend, hot, system)).catch((error: unknown) => void log(`  failed, left out: ${String(error)}`))
          if (figures === undefined) continue
          log(`  project ${figures.project.rate.toFixed(0)}/s, floor ${figures.floor.rate.toFixed(0)}/s`)
          const key = `${backend} ${hot ? 'hot' : 'spread'}`
          processedRuns.set(key, [...(processedRuns.get(key) ?? []), figures])
        }
      }
    }
    if (only.has('hot') && BACKENDS.includes('postgres')) {
      for (const concurrency of HOT_CONCURRENCY) {
        for (const oneApp of [true, false]) {
          for (const shards of HOT_SHARDS) {
            log(`run ${run + 1}/${RUNS} hot accounts: ${oneApp ? 'one application' : `${HOT_APPS} applications`}, ${shards} shard(s), ${concurrency} writers…`)
            const figure = await hotAccounts(oneApp, shards, concurrency)
            log(`  intake ${figure.intakeRate.toFixed(0)}/s, drains advanced ${figure.advanceRate.toFixed(0)}/s, ${figure.lockWaiters.toFixed(2)} waiting for a lock`)
            const key = `${concurrency}|${oneApp ? 'one' : 'many'}|${shards}`
            hotRuns.set(key, [...(hotRuns.get(key) ?? []), figure])
          }
        }
      }
    }
  }
} finally {
  receiver.kill()
}

const label = (backend: Backend) => (backend === 'sqlite' ? 'SQLite (file)' : 'PostgreSQL + Redis')
console.log(`\n# bench:money — ${RUNS} run(s) of each; ranges over runs (median in parentheses)\n`)
if (pipelineRuns.size > 0) {
  console.log(`## Deposits taken to payment_processed, their 3 events delivered (${DEPOSITS.toLocaleString('en')} deposits over ${ADDRESSES} addresses, ${CONNECTIONS} connections)\n`)
  console.log('| backend | project deposits/s to processed | floor/s | share | project intake/s meanwhile | server CPU ms per deposit (project / floor) |')
  console.log('|---|---|---|---|---|---|')
  for (const [backend, runs] of pipelineRuns) {
    const project = runs.map((r) => r.project.rate)
    const floor = runs.map((r) => r.floor.rate)
    console.log(
      `| ${label(backend)} | ${range(project)} (${median(project).toFixed(0)}) | ${range(floor)} (${median(floor).toFixed(0)}) | ${percent(runs.map((r) => r.project.rate / r.floor.rate))} | ${range(runs.map((r) => r.project.intakeRate))} | ${median(runs.map((r) => r.project.cpuMsPerDeposit)).toFixed(2)} / ${median(runs.map((r) => r.floor.cpuMsPerDeposit)).toFixed(2)} |`,
    )
  }
}
if (intakeRuns.size > 0) {
  console.log(`\n## Deposit intake: POST simulate_deposit, ${SECONDS} s, ${CONNECTIONS} connections (issue 30's money path; goal ≥ 60 % of the floor)\n`)
  console.log('| backend | addresses | project req/s | floor req/s | share | p99 ms (project / floor) | server CPU ms per deposit (project / floor) |')
  console.log('|---|---|---|---|---|---|---|')
  for (const [key, runs] of intakeRuns) {
    const [backend, spread] = key.split(' ') as [Backend, string]
    const project = runs.map((r) => r.project.rate)
    const floor = runs.map((r) => r.floor.rate)
    console.log(
      `| ${label(backend)} | ${spread === 'hot' ? 'one (hot)' : `${ADDRESSES} (spread)`} | ${range(project)} (${median(project).toFixed(0)}) | ${range(floor)} (${median(floor).toFixed(0)}) | ${percent(runs.map((r) => r.project.rate / r.floor.rate))} | ${median(runs.map((r) => r.project.p99)).toFixed(0)} / ${median(runs.map((r) => r.floor.p99)).toFixed(0)} | ${median(runs.map((r) => r.project.cpuMsPerDeposit)).toFixed(2)} / ${median(runs.map((r) => r.floor.cpuMsPerDeposit)).toFixed(2)} |`,
    )
  }
}
const wallets = (spread: string) => (spread === 'hot' ? 'one (hot)' : `${WALLETS} (spread)`)
if (transferRuns.size > 0) {
  console.log(`\n## Transfers created: POST external-stablecoin-transfer (${TRANSFER_AMOUNT} USDC, a pending entry reserving it), ${SECONDS} s, ${CONNECTIONS} connections (goal ≥ 60 % of the floor)\n`)
  console.log('| backend | wallets | project req/s | floor req/s | share | p99 ms (project / floor) | server CPU ms per transfer (project / floor) |')
  console.log('|---|---|---|---|---|---|---|')
  for (const [key, runs] of transferRuns) {
    const [backend, spread] = key.split(' ') as [Backend, string]
    const project = runs.map((r) => r.project.rate)
    const floor = runs.map((r) => r.floor.rate)
    console.log(
      `| ${label(backend)} | ${wallets(spread)} | ${range(project)} (${median(project).toFixed(0)}) | ${range(floor)} (${median(floor).toFixed(0)}) | ${percent(runs.map((r) => r.project.rate / r.floor.rate))} | ${median(runs.map((r) => r.project.p99)).toFixed(0)} / ${median(runs.map((r) => r.floor.p99)).toFixed(0)} | ${median(runs.map((r) => r.project.cpuMsPerDeposit)).toFixed(2)} / ${median(runs.map((r) => r.floor.cpuMsPerDeposit)).toFixed(2)} |`,
    )
  }
}
if (processedRuns.size > 0) {
  console.log(`\n## Transfers taken to payment_processed (${TRANSFERS.toLocaleString('en')} transfers, ${CONNECTIONS} connections, the money scheduler at DRAIN_DELAY_FAST_MS=0)\n`)
  console.log('| backend | wallets | project transfers/s to processed | floor/s | share | project created/s meanwhile | server CPU ms per transfer (project / floor) |')
  console.log('|---|---|---|---|---|---|---|')
  for (const [key, runs] of processedRuns) {
    const [backend, spread] = key.split(' ') as [Backend, string]
    const project = runs.map((r) => r.project.rate)
    const floor = runs.map((r) => r.floor.rate)
    console.log(
      `| ${label(backend)} | ${wallets(spread)} | ${range(project)} (${median(project).toFixed(0)}) | ${range(floor)} (${median(floor).toFixed(0)}) | ${percent(runs.map((r) => r.project.rate / r.floor.rate))} | ${range(runs.map((r) => r.project.intakeRate))} | ${median(runs.map((r) => r.project.cpuMsPerDeposit)).toFixed(2)} / ${median(runs.map((r) => r.floor.cpuMsPerDeposit)).toFixed(2)} |`,
    )
  }
}
if (hotRuns.size > 0) {
  console.log(`\n## Hot accounts on PostgreSQL: ${HOT_DRAINS.toLocaleString('en')} drains, intake then both steps, in this process\n`)
  console.log('| writers | applications | hot-account rows | intake/s | drains advanced/s | backends waiting for a lock (mean) |')
  console.log('|---|---|---|---|---|---|')
  for (const [key, runs] of hotRuns) {
    const [concurrency, apps, shards] = key.split('|') as [string, string, string]
    console.log(
      `| ${concurrency} | ${apps === 'one' ? `one (${HOT_APPS} addresses)` : `${HOT_APPS} (one address each)`} | ${shards} | ${range(runs.map((r) => r.intakeRate))} | ${range(runs.map((r) => r.advanceRate))} | ${range(
        runs.map((r) => r.lockWaiters),
        2,
      )} |`,
    )
  }
}
