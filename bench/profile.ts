/**
 * Where a request's time goes: each operation of bench:api's baseline, loaded with autocannon
 * against a server of its own, reported as requests per second AND as the server's CPU time per
 * request (user + system, from /proc), beside the bare Fastify hello measured the same way in the
 * same run (`post-many`: bench:api's POST for an application with 1,000 active webhooks; `floor`,
 * `floor-delete`, `floor-post`: bench/fastify-floor.mjs, the least any server must do for the GET,
 * the DELETE and the POST on the same database, to tell the server's own cost from what the
 * request needs). CPU
 * per request is steadier than req/s on a shared 2-core machine: the client's share of the cores
 * moves the rate, much less the server's cost. With --cpu-prof, each operation's
 * server writes a V8 CPU profile (summarise it with bench/cpu-profile-summary.ts).
 *
 *   npm run bench:profile [-- --ops health,floor,get,floor-delete,delete,floor-post,post,post-many --seconds 10 --connections 50 --cpu-prof DIR]
 */
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { openDatabase } from '../src/modules/database.js'
import { generateSigningSecret } from '../src/resources/webhooks/routes.js'
import {
  type BenchApp,
  createApplication,
  createCustomer,
  deletePool,
  forkChild,
  getWebhook,
  log,
  onFreshDatabase,
  postAddress,
  processCpuMs,
  type Server,
  servicesCpuMs,
  servicesCpuSince,
  startFloor,
  startServer,
} from './api-harness.js'
import { bulkConnection, seedWebhookPool } from './api-seed.js'

const OPS = ['health', 'floor', 'get', 'floor-delete', 'delete', 'floor-post', 'post', 'post-many'] as const
const FLOOR_OPS: readonly Op[] = ['floor', 'floor-delete', 'floor-post']
type Op = (typeof OPS)[number]

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: 'get,delete,post' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    'cpu-prof': { type: 'string' },
  },
})
const seconds = Number(values.seconds)
const connections = Number(values.connections)
if (!Number.isInteger(seconds) || seconds <= 0 || !Number.isInteger(connections) || connections <= 0) throw new Error('--seconds and --connections must be positive integers')
const ops = values.ops.split(',').map((name) => {
  const op = OPS.find((known) => known === name.trim())
  if (op === undefined) throw new Error(`--ops: unknown operation ${JSON.stringify(name)} (operations: ${OPS.join(', ')})`)
  return op
})
/** The DELETE pool: more than any run can use up at this machine's rates (as many again for the floor's DELETE). */
const POOL = seconds * 25_000

interface Figures {
  rate: number
  cpuUsPerRequest: number
  /** on PostgreSQL + Redis: the CPU their processes spent meanwhile, per request */
  postgresUsPerRequest?: number
  redisUsPerRequest?: number
  non2xx: number
}

/** PostgreSQL's and Redis's CPU per request since `before` (nothing when they were not measured). */
function servicesShares(before: ReturnType<typeof servicesCpuMs> | undefined, usPerRequest: (ms: number) => number): Pick<Figures, 'postgresUsPerRequest' | 'redisUsPerRequest'> {
  if (before === undefined) return {}
  const spent = servicesCpuSince(before)
  return { postgresUsPerRequest: usPerRequest(spent.postgres), redisUsPerRequest: usPerRequest(spent.redis) }
}

/** Runs autocannon and reads the target's CPU time around it (and PostgreSQL's and Redis's, when the target uses them). */
async function load(options: autocannon.Options, cpuMs: () => number, services = false): Promise<Figures> {
  const serverBefore = cpuMs()
  const servicesBefore = services ? servicesCpuMs() : undefined
  const result = await autocannon({ connections, duration: seconds, ...options })
  const usPerRequest = (ms: number) => (ms * 1000) / result.requests.total
  return {
    rate: result.requests.total / result.duration,
    cpuUsPerRequest: usPerRequest(cpuMs() - serverBefore),
    ...servicesShares(servicesBefore, usPerRequest),
    non2xx: result.non2xx + result.errors + result.timeouts,
  }
}

const receiver = await forkChild('./webhook-receiver.mjs')
const receiverUrl = `http://127.0.0.1:${receiver.port}/hook`
// The receiver keeps what arrived until asked: ask often, so its memory stays flat.
const drain = setInterval(() => receiver.child.send('take'), 1000)

const hello = await forkChild('./fastify-hello.mjs')
log('bare Fastify hello…')
const helloFigures = await load({ url: `http://127.0.0.1:${hello.port}/` }, () => processCpuMs(hello.child.pid ?? 0))
hello.child.kill('SIGTERM')

const rows: { op: Op; figures: Figures }[] = []
await onFreshDatabase(async (database) => {
  const db = await openDatabase(database.location)
  const app = await createApplication(db, 'bench', 1, receiverUrl)
  const customerId = await createCustomer(db, app.id)
  const poolApp = await createApplication(db, 'deletes', 0, receiverUrl)
  // post-many: bench:api's 1,000-webhook write, every webhook at the receiver
  const many = ops.includes('post-many') ? await createApplication(db, 'many webhooks', 1_000, receiverUrl) : undefined
  const manyCustomerId = many === undefined ? '' : await createCustomer(db, many.id)
  if (ops.includes('delete') || ops.includes('floor-delete')) {
    const bulk = bulkConnection(database.location, db)
    await seedWebhookPool(bulk.db, poolApp.id, 2 * POOL, generateSigningSecret())
    await bulk.close()
  }
  await db.destroy()
  const scenario = (op: Op, server: Server, bench: BenchApp, pool: BenchApp): autocannon.Options => {
    if (op === 'health') return { url: `${server.base}/api/v0/health/public` }
    if (op === 'get') return getWebhook(server, bench)
    if (op === 'delete') return deletePool(server, pool, POOL)
    if (op === 'post-many' && many !== undefined) return postAddress(server, many, manyCustomerId)
    return postAddress(server, bench, customerId)
  }
  const floor = ops.some((op) => FLOOR_OPS.includes(op)) ? await startFloor(database) : undefined
  for (const op of ops) {
    if (floor !== undefined && FLOOR_OPS.includes(op)) {
      log(`${op}…`)
      const options = op === 'floor' ? getWebhook(floor, app) : op === 'floor-delete' ? deletePool(floor, poolApp, POOL, undefined, POOL) : postAddress(floor, app, customerId)
      rows.push({ op, figures: await load(options, () => processCpuMs(floor.pid), database.location.kind === 'postgres') })
      continue
    }
    const profileDir = values['cpu-prof']
    const server = await startServer(database, { nodeArgs: profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}/${op}`] })
    log(`${op}…`)
    rows.push({ op, figures: await load(scenario(op, server, app, poolApp), server.cpuMs, database.location.kind === 'postgres') })
    await server.stop()
  }
  floor?.stop()
})
clearInterval(drain)
receiver.child.disconnect()

const fixed = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const services = rows.some(({ figures }) => figures.postgresUsPerRequest !== undefined)
const lines = [
  `\n## bench:profile: ${connections} connections, ${seconds} s each\n`,
  `| operation | req/s | vs hello | server CPU µs/request | vs hello |${services ? ' PostgreSQL CPU µs/request | Redis CPU µs/request |' : ''} non-2xx |`,
  `|---|---|---|---|---|${services ? '---|---|' : ''}---|`,
  `| bare Fastify hello | ${fixed(helloFigures.rate)} | 100 % | ${fixed(helloFigures.cpuUsPerRequest, 1)} | 1.0× |${services ? ' | |' : ''} ${helloFigures.non2xx} |`,
]
for (const { op, figures } of rows) {
  const shares = figures.postgresUsPerRequest === undefined ? '' : ` ${fixed(figures.postgresUsPerRequest, 1)} | ${fixed(figures.redisUsPerRequest ?? 0, 1)} |`
  lines.push(
    `| ${op} | ${fixed(figures.rate)} | ${fixed((figures.rate / helloFigures.rate) * 100)} % | ${fixed(figures.cpuUsPerRequest, 1)} | ${fixed(figures.cpuUsPerRequest / helloFigures.cpuUsPerRequest, 1)}× |${shares} ${figures.non2xx} |`,
  )
}
console.log(lines.join('\n'))
if (values['cpu-prof'] !== undefined) console.log(`\nprofiles: ${values['cpu-prof']}/<operation>/, one per thread; the main thread's is the largest (npx tsx bench/cpu-profile-summary.ts FILE)`)
