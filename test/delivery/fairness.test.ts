import { WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../helper.js'
import { waitUntil } from '../processes.js'
import { type Receiver, startReceiver } from '../receiver.js'
import { CachingDnsResolver } from '../../src/delivery/dns-resolver.js'
import { FairShare } from '../../src/delivery/fair-share.js'
import { CIRCUIT_THRESHOLD } from '../../src/db/circuit.js'

const data = { id: 'tax', name: 'VAT', percentage: 20 }

/** One event for every active webhook of the application, committed as a route commits it. */
async function emit(server: TestServer, appId: string, count = 1): Promise<void> {
  for (let i = 0; i < count; i++) await server.app.transact((tx) => tx.events.emit(appId, 'tax.updated', data))
}

async function newApp(server: TestServer, name: string): Promise<string> {
  return (await server.app.repos.apps.createApp(name)).id
}

/** Webhooks written through the repository: their hosts need not resolve at creation. */
async function addWebhooks(server: TestServer, appId: string, urls: string[]): Promise<string[]> {
  const ids: string[] = []
  for (const [i, url] of urls.entries()) {
    const webhook = await new WebhooksRepository(server.app.db).create(appId, { name: `w${i}`, url, isActive: true, encrypted: false, signingSecret: `whsec_${Buffer.alloc(32, i).toString('base64')}` })
    ids.push(webhook.id)
  }
  return ids
}

/** A port with nothing listening: connections to it are refused. */
async function refusingPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('FairShare: how free slots are shared', () => {
  const idle = { countForApp: () => 0, countFor: () => 0 }
  const queue = (appId: string, webhookId: string, circuitOpen = false) => ({ appId, webhookId, circuitOpen })

  it('one slot per application per turn: a busy application with many webhooks gets no more turns than one with a single webhook', () => {
    const queues = [...Array.from({ length: 50 }, (_, i) => queue('a', `a${i}`)), queue('b', 'b0')]
    const plan = new FairShare().plan(queues, { free: 2, perApp: 64, perWebhook: 16 }, idle)
    expect(plan.get('b0')).toBe(1)
    expect([...plan.values()].reduce((sum, n) => sum + n, 0)).toBe(2)
  })

  it('within an application, one slot per webhook per turn; then the per-webhook cap', () => {
    const plan = new FairShare().plan([queue('a', 'a0'), queue('a', 'a1'), queue('a', 'a2')], { free: 100, perApp: 7, perWebhook: 2 }, idle)
    expect([...plan.entries()].sort()).toEqual([
      ['a0', 2],
      ['a1', 2],
      ['a2', 2],
    ])
    const capped = new FairShare().plan([queue('a', 'a0'), queue('a', 'a1'), queue('a', 'a2')], { free: 100, perApp: 4, perWebhook: 16 }, idle)
    expect([...capped.values()].sort()).toEqual([1, 1, 2])
  })

  it('counts what is already in flight against the caps, and gives an open circuit one attempt at a time', () => {
    const inFlight = { countForApp: (appId: string) => (appId === 'a' ? 3 : 0), countFor: (webhookId: string) => (webhookId === 'b1' ? 1 : 0) }
    const plan = new FairShare().plan([queue('a', 'a0'), queue('b', 'b0', true), queue('b', 'b1', true), queue('b', 'b2')], { free: 100, perApp: 4, perWebhook: 5 }, inFlight)
    expect(plan.get('a0')).toBe(1)
    expect(plan.get('b0')).toBe(1)
    expect(plan.has('b1')).toBe(false)
    expect(plan.get('b2')).toBe(3)
  })

  it('when slots are short, those served least recently go first: every application gets its turn across claims', () => {
    const share = new FairShare()
    const queues = ['a', 'b', 'c'].map((appId) => queue(appId, `${appId}0`))
    const served = [0, 1, 2].map(() => [...share.plan(queues, { free: 1, perApp: 64, perWebhook: 16 }, idle).keys()][0])
    expect(new Set(served)).toEqual(new Set(['a0', 'b0', 'c0']))
  })
})

describe('fair delivery: one application’s broken webhooks never hold up another’s', () => {
  let healthy: Receiver
  beforeAll(async () => {
    healthy = await startReceiver((arrival) => (arrival.path.startsWith('/hang') ? 'hang' : { status: 200, body: 'ok' }))
  })
  afterAll(async () => {
    await healthy.close()
  })

  it("hanging receivers: A holds at most its per-application share; B's delivery goes out while all of A's attempts still hang", async () => {
    const server = await startTestServer({ webhooks: { dispatcher: true, timeoutMs: 8_000, pollIntervalMs: 20, concurrency: 8, perAppConcurrency: 4 } })
    try {
      const a = await newApp(server, 'A')
      const b = await newApp(server, 'B')
      await addWebhooks(
        server,
        a,
        Array.from({ length: 10 }, (_, i) => healthy.url(`/hang/${i}`)),
      )
      await addWebhooks(server, b, [healthy.url('/b')])
      await emit(server, a, 10)
      await waitUntil("A's attempts up to its cap", () => (healthy.arrivals.filter((x) => x.path.startsWith('/hang')).length >= 4 ? true : undefined))
      await emit(server, b)
      await healthy.waitFor(1, { path: '/b', timeoutMs: 6_000 })
      const hanging = healthy.arrivals.filter((x) => x.path.startsWith('/hang'))
      // Without the per-application cap, A's attempts would have taken all 8 slots until they timed out.
      expect(hanging).toHaveLength(4)
      expect(hanging.every((x) => x.closedAt === undefined)).toBe(true)
    } finally {
      await server.close()
    }
  })

  it("refused connections with a backlog: B's new delivery, and a new webhook of A's, go out before A's backlog drains", async () => {
    const port = await refusingPort()
    const server = await startTestServer({
      webhooks: { dispatcher: true, timeoutMs: 2_000, pollIntervalMs: 20, concurrency: 8, perAppConcurrency: 2, perWebhookConcurrency: 2 },
      delivery: { retrySchedule: [3_600_000] },
    })
    try {
      const a = await newApp(server, 'A')
      const b = await newApp(server, 'B')
      const refusing = await addWebhooks(
        server,
        a,
        Array.from({ length: 20 }, (_, i) => `http://127.0.0.1:${port}/r${i}`),
      )
      await addWebhooks(server, b, [healthy.url('/b-refusing')])
      // 2,000 deliveries due at once, written before B's event
      await server.app.transact(async (tx) => {
        for (let i = 0; i < 100; i++) await tx.events.emit(a, 'tax.updated', data)
      })
      await emit(server, b)
      await healthy.waitFor(1, { path: '/b-refusing', timeoutMs: 8_000 })
      const unattempted = await server.database.count("select count(*) from deliveries where app_id = ? and status = 'pending' and attempts = 0", a)
      expect(unattempted).toBeGreaterThan(0)

      // Within A: a webhook added now is served before the other webhooks' backlog drains.
      const [fresh] = await addWebhooks(server, a, [healthy.url('/a-fresh')])
      await emit(server, a)
      await healthy.waitFor(1, { path: '/a-fresh', timeoutMs: 8_000 })
      const stillQueued = await server.database.count(
        `select count(*) from deliveries where webhook_id in (${refusing.map(() => '?').join(', ')}) and status = 'pending' and attempts = 0`,
        ...refusing,
      )
      expect(stillQueued).toBeGreaterThan(0)
      expect(fresh).toBeDefined()
    } finally {
      await server.close()
    }
  }, 30_000)

  describe('hosts that never resolve', () => {
    let dns: UdpSocket
    let dnsPort = 0
    let queries = 0
    beforeAll(async () => {
      // A DNS server that reads every query and never answers.
      dns = createSocket('udp4')
      dns.on('message', () => {
        queries++
      })
      await new Promise<void>((resolve) => dns.bind(0, '127.0.0.1', resolve))
      dnsPort = dns.address().port
    })
    afterAll(() => {
      dns.close()
    })

    it("B's delivery goes out while A's lookups are still waiting for an answer", async () => {
      const resolver = new CachingDnsResolver({ timeoutMs: 4_000, servers: [`127.0.0.1:${dnsPort}`] })
      const server = await startTestServer({
        webhooks: { dispatcher: true, timeoutMs: 4_000, pollIntervalMs: 20, concurrency: 8, perAppConcurrency: 4 },
        delivery: { resolveHost: resolver.resolve },
      })
      try {
        const a = await newApp(server, 'A')
        const b = await newApp(server, 'B')
        await addWebhooks(
          server,
          a,
          Array.from({ length: 10 }, (_, i) => `http://a${i}.never-answers.test/`),
        )
        await addWebhooks(server, b, [healthy.url('/b-dns')])
        await emit(server, a, 5)
        await waitUntil("A's lookups", () => (queries >= 4 ? true : undefined))
        await emit(server, b)
        await healthy.waitFor(1, { path: '/b-dns', timeoutMs: 3_000 })
        // None of A's attempts has ended: B did not wait for A's lookups to time out.
        expect(await server.database.count('select count(*) from delivery_attempts da join deliveries d on d.id = da.delivery_id where d.app_id = ?', a)).toBe(0)
      } finally {
        await server.close()
      }
    })
  })
})

describe('circuit breaker', () => {
  let receiver: Server
  let base = ''
  let status = 500
  let inFlight = 0
  /** [arrival time (performance.now()), requests in flight including this one] */
  const arrivals: [number, number][] = []
  const open = new Set<ServerResponse>()

  beforeAll(async () => {
    // Answers after 40 ms, with `status`; counts the requests it holds at once.
    receiver = createServer((request, response) => {
      request.resume()
      inFlight++
      arrivals.push([performance.now(), inFlight])
      open.add(response)
      setTimeout(() => {
        inFlight--
        open.delete(response)
        response.writeHead(status).end()
      }, 40)
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    receiver.closeAllConnections()
    await new Promise((resolve) => receiver.close(resolve))
  })

  it(`${CIRCUIT_THRESHOLD} failures in a row: one attempt at a time, spaced by the retry schedule, shown in the log and the CLI view; a 2xx closes it`, async () => {
    const schedule = [150, 150, 150, 150, 150, 150, 150, 150, 150, 150]
    const server = await startTestServer({ webhooks: { dispatcher: true, timeoutMs: 2_000, pollIntervalMs: 20 }, delivery: { retrySchedule: schedule, random: () => 0.5 } })
    try {
      const key = await server.createKey()
      const [webhookId = ''] = await addWebhooks(server, key.appId, [`${base}/flaky`])
      await emit(server, key.appId, 10)
      const circuit = () => server.database.query<{ consecutive_failures: number; circuit_retry_at: string | null }>('select consecutive_failures, circuit_retry_at from webhooks where id = ?', webhookId)
      await waitUntil('the circuit to open', async () => ((await circuit())[0]?.consecutive_failures ?? 0) >= CIRCUIT_THRESHOLD || undefined)
      // The first wave went out together (up to the per-webhook cap of 16).
      expect(Math.max(...arrivals.map(([, n]) => n))).toBeGreaterThan(1)
      // Under load an attempt claimed before the circuit opened can still be arriving when the
      // poll above sees it open (fresh-clone CI: one 45 ms after the previous): wait for the
      // first wave to end before counting attempts made while open.
      await waitUntil('the first wave to end', () => (inFlight === 0 ? true : undefined))
      const openedAt = arrivals.length

      // While open: each failure moves the next attempt out by the schedule; visible to the owner and the operator.
      // Attempts claimed before the circuit opened but still connecting are not in flight at the
      // receiver yet (the whole PostgreSQL half under load: two such, 48 ms apart, after the
      // wave): the spacing is read on the attempts after the first four.
      await waitUntil('8 attempts while open', () => (arrivals.length >= openedAt + 8 ? true : undefined), 10_000)
      const whileOpen = arrivals.slice(openedAt + 4, openedAt + 8)
      expect(whileOpen.every(([, n]) => n === 1)).toBe(true)
      for (let i = 1; i < whileOpen.length; i++) expect((whileOpen[i]?.[0] ?? 0) - (whileOpen[i - 1]?.[0] ?? 0)).toBeGreaterThanOrEqual(150)
      const log = await server.request<{ status: string; held_back_until: string | null }[]>('GET', `/api/v0/webhooks/${webhookId}/deliveries?status=pending`, { key })
      expect(log.status).toBe(200)
      expect(log.body.length).toBeGreaterThan(0)
      expect(log.body.some((delivery) => delivery.held_back_until !== null)).toBe(true)
      const { findWebhookForAudit } = await import('../../src/cli/deliveries.js')
      const audit = await findWebhookForAudit(server.app.db, webhookId)
      expect(audit?.circuit.state).toBe('open')
      expect(audit?.circuit.consecutive_failures).toBeGreaterThanOrEqual(CIRCUIT_THRESHOLD)

      // The receiver recovers: the next attempt succeeds, the circuit closes, the backlog goes out together again.
      status = 200
      const recoveredAt = arrivals.length
      await waitUntil('every delivery to succeed', async () => (await server.database.count("select count(*) from deliveries where webhook_id = ? and status = 'succeeded'", webhookId)) === 10 || undefined, 10_000)
      expect((await circuit())[0]).toEqual({ consecutive_failures: 0, circuit_retry_at: null })
      expect(Math.max(...arrivals.slice(recoveredAt).map(([, n]) => n))).toBeGreaterThan(1)
      const after = await server.request<{ held_back_until: string | null }[]>('GET', `/api/v0/webhooks/${webhookId}/deliveries`, { key })
      expect(after.body.every((delivery) => delivery.held_back_until === null)).toBe(true)
    } finally {
      for (const response of open) response.destroy()
      await server.close()
    }
  }, 30_000)

  it("an owner's test event is attempted at once, though the open circuit's next attempt was an hour away; a PATCH of the url closes the circuit", async () => {
    status = 500
    const server = await startTestServer({ webhooks: { dispatcher: true, timeoutMs: 2_000, pollIntervalMs: 20 }, delivery: { retrySchedule: [3_600_000] } })
    try {
      const key = await server.createKey()
      const [webhookId = ''] = await addWebhooks(server, key.appId, [`${base}/owner`])
      await emit(server, key.appId, CIRCUIT_THRESHOLD)
      const circuit = async () => (await server.database.query<{ consecutive_failures: number; circuit_retry_at: string | null }>('select consecutive_failures, circuit_retry_at from webhooks where id = ?', webhookId))[0]
      await waitUntil('the circuit to open', async () => ((await circuit())?.consecutive_failures === CIRCUIT_THRESHOLD ? true : undefined))
      expect(Date.parse((await circuit())?.circuit_retry_at ?? '')).toBeGreaterThan(Date.now() + 40 * 60_000)
      const before = arrivals.length
      const test = await server.request<{ id: string }>('POST', `/api/v0/webhooks/${webhookId}/test`, { key })
      expect(test.status).toBe(202)
      await waitUntil('the test event on the wire', () => (arrivals.length > before ? true : undefined))
      await waitUntil('its failure counted', async () => ((await circuit())?.consecutive_failures === CIRCUIT_THRESHOLD + 1 ? true : undefined))

      const patched = await server.request('PATCH', `/api/v0/webhooks/${webhookId}`, { key, body: { url: `${base}/owner-fixed` } })
      expect(patched.status).toBe(200)
      expect(await circuit()).toEqual({ consecutive_failures: 0, circuit_retry_at: null })
    } finally {
      await server.close()
    }
  }, 30_000)
})
