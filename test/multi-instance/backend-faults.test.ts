import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_REDIS_URL } from '../backend.js'
import { PrivatePostgres } from '../helpers/private-postgres.js'
import { cleanUp, waitUntil } from '../processes.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import {
  api,
  type Credentials,
  createCredentials,
  createWebhook,
  type Instance,
  type RecordingReceiver,
  serviceVars,
  sleep,
  startRecordingReceiver,
  startServer,
  stopGracefully,
} from './delivery-helpers.js'

/**
 * Backend faults under write load, on a PostgreSQL server of this file's own (so killing it
 * touches nothing else) reached through a TCP proxy, and Redis through another: the server
 * process must live through each fault, answer 503 (or succeed) while it lasts, lose no
 * acknowledged write, deliver every event exactly once, and serve again once the backend is back.
 */

const UNAVAILABLE = { statusCode: 503, error: 'Service Unavailable', message: 'The database is unavailable', details: 'Retry the request shortly' }

let postgres: PrivatePostgres
let postgresProxy: TcpProxy
let redisProxy: TcpProxy
let receiver: RecordingReceiver
let server: Instance
let credentials: Credentials
/** every customer a writer was told was created, by id */
const acknowledged = new Set<string>()

beforeAll(async () => {
  postgres = await PrivatePostgres.create()
  postgresProxy = await TcpProxy.start('127.0.0.1', postgres.port)
  const redis = new URL(TEST_REDIS_URL)
  redisProxy = await TcpProxy.start(redis.hostname, Number(redis.port || 6379))
  receiver = await startRecordingReceiver()
  const databaseUrl = postgresProxy.urlFor(postgres.url)
  server = await startServer('server', serviceVars(databaseUrl, { REDIS_URL: redisProxy.urlFor(TEST_REDIS_URL) }))
  credentials = await createCredentials(postgres.url, 'faults')
  await createWebhook(server.baseUrl, credentials, 'all events', receiver.url('/hook'))
}, 60_000)

afterAll(async () => {
  if (server !== undefined) await stopGracefully(server).catch(() => undefined)
  await receiver?.close()
  await postgresProxy?.close()
  await redisProxy?.close()
  await postgres?.stop()
  cleanUp()
})

interface Load {
  /** statuses seen, by status (0: the request failed without an answer) */
  statuses: Map<number, number>
  /** bodies of answers that were neither a success nor the documented 503 */
  unexpected: string[]
  stop(): Promise<void>
}

let sequence = 0

/** Four writers creating customers and two readers listing them, in loops, until stop(). */
function startLoad(): Load {
  const statuses = new Map<number, number>()
  const unexpected: string[] = []
  let running = true
  const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1)
  const check = (status: number, body: unknown, retryAfter: string | null) => {
    count(status)
    if (status === 503) {
      if (JSON.stringify(body) !== JSON.stringify(UNAVAILABLE) || retryAfter === null) unexpected.push(`503 ${JSON.stringify(body)} retry-after=${retryAfter}`)
    } else if (status !== 200 && status !== 201) {
      unexpected.push(`${status} ${JSON.stringify(body)}`)
    }
  }
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { ...credentials.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // kept as text
    }
    check(res.status, parsed, res.headers.get('retry-after'))
    return { status: res.status, body: parsed }
  }
  const guarded = async (work: () => Promise<void>) => {
    while (running) {
      try {
        await work()
      } catch (error) {
        count(0)
        unexpected.push(`no answer: ${error instanceof Error ? error.message : String(error)}`)
        await sleep(20)
      }
    }
  }
  const writer = () =>
    guarded(async () => {
      const n = sequence++
      const res = await call('POST', '/api/v0/customers', { first_name: 'Fault', last_name: `Writer ${n}`, phone_number: '+15555550100', email: `writer-${n}@example.com` })
      if (res.status === 201) acknowledged.add((res.body as { id: string }).id)
      else await sleep(10)
    })
  const reader = () =>
    guarded(async () => {
      const res = await call('GET', '/api/v0/customers?limit=10')
      if (res.status !== 200) await sleep(10)
    })
  const loops = [writer(), writer(), writer(), writer(), reader(), reader()]
  return {
    statuses,
    unexpected,
    async stop() {
      running = false
      await Promise.all(loops)
    },
  }
}

/** Runs load through `fault` (which returns how to restore the backend), then asserts what the issue asks. */
const marks: number[] = []
async function survives(fault: () => Promise<() => Promise<void>>): Promise<Load> {
  marks.push(Math.round(performance.now()))
  const load = startLoad()
  await sleep(500)
  const restore = await fault()
  await sleep(1_500)
  await restore()
  // Within 2 s of the backend being back, a request succeeds (the first one, once the backend answers connections).
  const back = Date.now()
  let last = ''
  const first = await waitUntil('a write after recovery', async () => {
    const res = await api(server.baseUrl, credentials, 'POST', '/api/v0/customers', { first_name: 'After', last_name: 'Recovery', phone_number: '+15555550100', email: `after-${sequence++}@example.com` })
    last = `${res.status} ${JSON.stringify(res.body)}`
    if (res.status === 201) acknowledged.add((res.body as { id: string }).id)
    return res.status === 201 ? res : undefined
  }, 2_000).catch((error: unknown) => {
    throw new Error(`${String(error)}; last answer: ${last}; server log: ${server.stdout().slice(-3000)}`)
  })
  expect(first.status).toBe(201)
  expect(Date.now() - back).toBeLessThan(2_000)
  await sleep(300)
  await load.stop()
  expect(server.child.exitCode, server.stderr()).toBeNull()
  expect(load.unexpected.slice(0, 5)).toEqual([])
  return load
}

describe('the server lives through PostgreSQL faults under write load', () => {
  it('kill -9 of the postmaster', async () => {
    const load = await survives(async () => {
      await postgres.killPostmaster()
      return () => postgres.start()
    })
    expect(load.statuses.get(503) ?? 0).toBeGreaterThan(0)
  })

  it('a terminated backend (pg_terminate_backend of every devplatform connection)', async () => {
    const load = await survives(async () => {
      for (let i = 0; i < 5; i++) {
        await postgres.terminate('devplatform')
        await sleep(100)
      }
      return async () => undefined
    })
    expect(load.statuses.get(201) ?? 0).toBeGreaterThan(0)
  })

  it('a fast shutdown', async () => {
    const load = await survives(async () => {
      await postgres.fastShutdown()
      return () => postgres.start()
    })
    expect(load.statuses.get(503) ?? 0).toBeGreaterThan(0)
  })

  it('a proxy that closes every connection', async () => {
    const load = await survives(async () => {
      postgresProxy.setMode('refuse')
      return async () => postgresProxy.setMode('pass')
    })
    expect(load.statuses.get(503) ?? 0).toBeGreaterThan(0)
  })

  it('a proxy that stalls (connections open, nothing answers)', async () => {
    await survives(async () => {
      postgresProxy.setMode('stall')
      return async () => postgresProxy.setMode('pass')
    })
  })
})

describe('/health through an outage', () => {
  it('answers 503 in its own shape at every probe, and the outage is logged once, not per probe', async () => {
    const health = () => api(server.baseUrl, credentials, 'GET', '/api/v0/health')
    await waitUntil('health ok', async () => ((await health()).status === 200 ? true : undefined), 5_000)
    const logged = () => server.stdout().split('\n').filter((line) => line.includes('health: database unavailable')).length
    const before = logged()
    postgresProxy.setMode('refuse')
    try {
      for (let i = 0; i < 10; i++) {
        const res = await health()
        expect(res.status).toBe(503)
        expect(res.body).toMatchObject({ status: 'error', database: 'error', message: 'The database is unavailable' })
      }
    } finally {
      postgresProxy.setMode('pass')
    }
    await waitUntil('health ok again', async () => ((await health()).status === 200 ? true : undefined), 5_000)
    expect(logged() - before).toBe(1)
    await waitUntil('the end of the outage logged', () => (server.stdout().includes('health: database answers again') ? true : undefined), 2_000)
  })
})

describe('Redis faults', () => {
  it('a Redis cut: requests go on', async () => {
    const load = await survives(async () => {
      redisProxy.setMode('refuse')
      return async () => redisProxy.setMode('pass')
    })
    expect(load.statuses.get(503) ?? 0).toBe(0)
  })

  it('a Redis stall: requests go on', async () => {
    const load = await survives(async () => {
      redisProxy.setMode('stall')
      return async () => redisProxy.setMode('pass')
    })
    expect(load.statuses.get(503) ?? 0).toBe(0)
  })
})

describe('after every fault', () => {
  it('every acknowledged write is present and every event was delivered exactly once', async () => {
    expect(acknowledged.size).toBeGreaterThan(0)
    for (const id of acknowledged) {
      const res = await api(server.baseUrl, credentials, 'GET', `/api/v0/customers/${id}`)
      expect(res.status, id).toBe(200)
    }
    // Each acknowledged customer's customer.created event arrives; no event arrives twice.
    await waitUntil('every acknowledged customer delivered', () => {
      const delivered = new Set(receiver.arrivals.filter((arrival) => arrival.type === 'customer.created').map((arrival) => arrival.dataId))
      return [...acknowledged].every((id) => delivered.has(id)) ? true : undefined
    }, 60_000, 200)
    const perEvent = new Map<string, number>()
    for (const arrival of receiver.arrivals) perEvent.set(arrival.webhookId, (perEvent.get(arrival.webhookId) ?? 0) + 1)
    const doubled = [...perEvent].filter(([, times]) => times > 1)
    if (doubled.length > 0) console.log(JSON.stringify({ marks, doubled: doubled.map(([id]) => receiver.arrivals.filter((a) => a.webhookId === id).map((a) => Math.round(a.at))) }))
    expect(doubled).toEqual([])
  }, 90_000)
})
