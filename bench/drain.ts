/**
 * Where a delivery's time goes: a backlog of events committed while no server runs, then the
 * built server (dist/server.js) started on it, delivering to a local receiver until every
 * delivery has succeeded. Reports deliveries/s and the server's CPU time per delivery (user +
 * system, from /proc), beside a bare keep-alive client POSTing the same bodies to the same
 * receiver in the same run (its rate and this process's CPU per request). No producer shares the
 * server's process, so the figure is the delivery path alone: claim, sign, send, record the
 * outcome. On PostgreSQL it also prints the CPU of this machine's `postgres` processes per
 * delivery over the drain. With --cpu-prof DIR the server writes V8 CPU profiles (bench/cpu-profile-summary.ts).
 *
 *   npm run bench:drain [-- --events 20000 --webhooks 100 --cpu-prof DIR]
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379 npm run bench:drain
 */
import http from 'node:http'
import { parseArgs } from 'node:util'
import { sql } from 'kysely'
import { loadConfig } from '../src/config.js'
import { openDatabase } from '../src/modules/database.js'
import { EventsRepository } from '../src/events/events-repository.js'
import { newId } from '../src/db/time.js'
import { runUnitOfWork } from '../src/db/unit-of-work.js'
import { DeliveryNotifier } from '../src/delivery/notifier.js'
import { barePost, createOneWebhookApps, forkChild, log, onFreshDatabase, servicesCpuMs, servicesCpuSince, sleep, startServer, TAX_EVENT_DATA } from './api-harness.js'

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    webhooks: { type: 'string', default: '100' },
    'cpu-prof': { type: 'string' },
  },
})
const EVENTS = Number(values.events)
const WEBHOOKS = Number(values.webhooks)
if (!Number.isInteger(EVENTS) || EVENTS <= 0 || !Number.isInteger(WEBHOOKS) || WEBHOOKS <= 0) throw new Error('--events and --webhooks must be positive integers')

const { child: receiver, port: receiverPort } = await forkChild('./webhook-receiver.mjs')
const data = TAX_EVENT_DATA
const body = JSON.stringify({ id: newId(), type: 'tax.updated', created_at: new Date().toISOString(), data })
const concurrency = loadConfig({ NODE_ENV: 'development' }).webhooks.concurrency

/** The bare client: as many keep-alive POSTs at once as the dispatcher's concurrency, for `ms`. */
async function bareClient(ms: number): Promise<{ rate: number; cpuUs: number }> {
  const agent = new http.Agent({ keepAlive: true })
  let done = 0
  let running = true
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  const workers = Array.from({ length: concurrency }, async () => {
    while (running) {
      await barePost(agent, receiverPort, body, 'raw')
      done++
    }
  })
  await sleep(ms)
  running = false
  await Promise.all(workers)
  const cpu = process.cpuUsage(cpuBefore)
  const elapsed = performance.now() - started
  agent.destroy()
  return { rate: (done * 1000) / elapsed, cpuUs: (cpu.user + cpu.system) / done }
}

const result = await onFreshDatabase(async (database) => {
  const config = { ...loadConfig({ NODE_ENV: 'development', LOG_LEVEL: 'warn' }), database: database.location }
  const db = await openDatabase(config.database)
  try {
    const { appIds } = await createOneWebhookApps(db, WEBHOOKS, receiverPort, 'drain')
    log(`committing ${EVENTS.toLocaleString('en')} events…`)
    const signals = new DeliveryNotifier()
    for (let done = 0; done < EVENTS; done += 1000) {
      await runUnitOfWork(db, signals, async (unit) => {
        const events = new EventsRepository(unit.tx, unit)
        for (let i = done; i < Math.min(EVENTS, done + 1000); i++) await events.emit(appIds[i % WEBHOOKS] ?? '', 'tax.updated', data)
      })
    }
    const succeeded = async () => Number((await sql<{ n: number | null }>`select sum(successful_deliveries) as n from webhooks`.execute(db)).rows[0]?.n ?? 0)

    log('bare client…')
    const bare = await bareClient(5000)
    log('draining…')
    const server = await startServer(database, { nodeArgs: values['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] })
    const cpuStart = server.cpuMs()
    const servicesStart = servicesCpuMs()
    const started = performance.now()
    let delivered = await succeeded()
    while (delivered < EVENTS && performance.now() - started < 600_000) {
      await sleep(20)
      delivered = await succeeded()
    }
    const elapsed = performance.now() - started
    const cpuMs = server.cpuMs() - cpuStart
    const postgresMs = servicesCpuSince(servicesStart).postgres
    await server.stop()
    const postgresUs = database.location.kind === 'postgres' ? (postgresMs * 1000) / delivered : undefined
    return { bare, rate: (delivered * 1000) / elapsed, cpuUs: (cpuMs * 1000) / delivered, postgresUs, delivered, label: database.label }
  } finally {
    await db.destroy()
  }
})
receiver.kill()

console.log(`\n## drain: ${EVENTS.toLocaleString('en')} events to ${WEBHOOKS} webhooks (${result.label}), concurrency ${concurrency}\n`)
console.log('| sender | per second | vs bare client | CPU µs per request |')
console.log('|---|---|---|---|')
console.log(`| bare keep-alive client | ${result.bare.rate.toFixed(0)} | 100 % | ${result.bare.cpuUs.toFixed(1)} |`)
console.log(`| server delivering its backlog (${result.delivered.toLocaleString('en')}) | ${result.rate.toFixed(0)} | ${((100 * result.rate) / result.bare.rate).toFixed(0)} % | ${result.cpuUs.toFixed(1)} |`)
if (result.postgresUs !== undefined) console.log(`\nPostgreSQL's CPU (its processes on this machine) per delivery: ${result.postgresUs.toFixed(1)} µs`)
if (values['cpu-prof'] !== undefined) console.log(`\nprofiles: ${values['cpu-prof']} (npx tsx bench/cpu-profile-summary.ts FILE)`)
