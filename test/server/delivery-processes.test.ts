import { type ServerProcess, startServerProcess } from '../helpers/server-process.js'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { dropFreshDatabases, freshDatabase } from '../backend.js'
import { CLI, cleanUp, exitWithin, launch, type Running, waitUntil } from '../processes.js'

/**
 * Webhook delivery across real processes: the built server killed with SIGKILL and restarted on
 * the same database, and the built `devplatform worker` delivering for a server that doesn't.
 */


interface Arrival {
  path: string
  /** the webhook-id header: the event id */
  webhookId: string
  /** the id inside the (unencrypted) payload */
  payloadId: string | undefined
  /** set once a status was written out in full */
  answered: number | undefined
  /** the sender closed the connection before an answer was sent */
  aborted: boolean
  closedAt: number | undefined
}

type Answer = number | 'hang'

interface Receiver {
  url(path: string): string
  arrivals: Arrival[]
  /** requests held open right now, unanswered */
  open(): number
  answerWith(decide: (arrival: Arrival) => Answer): void
  close(): Promise<void>
}

const receivers: Receiver[] = []

afterAll(async () => {
  cleanUp()
  await dropFreshDatabases()
  for (const receiver of receivers.splice(0)) await receiver.close()
})

async function startReceiver(decide: (arrival: Arrival) => Answer): Promise<Receiver> {
  let answer = decide
  const arrivals: Arrival[] = []
  const hanging = new Set<ServerResponse>()
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      let payloadId: string | undefined
      try {
        const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        if (typeof parsed === 'object' && parsed !== null && 'id' in parsed && typeof parsed.id === 'string') payloadId = parsed.id
      } catch {
        // not JSON: payloadId stays undefined and the test says so
      }
      const header = request.headers['webhook-id']
      const arrival: Arrival = {
        path: request.url ?? '',
        webhookId: typeof header === 'string' ? header : '',
        payloadId,
        answered: undefined,
        aborted: false,
        closedAt: undefined,
      }
      arrivals.push(arrival)
      response.on('close', () => {
        hanging.delete(response)
        if (!response.writableFinished) {
          arrival.aborted = true
          arrival.closedAt = performance.now()
        }
      })
      const decision = answer(arrival)
      if (decision === 'hang') {
        hanging.add(response)
        return
      }
      response.writeHead(decision, { 'content-type': 'text/plain' }).end('ok', () => {
        arrival.answered = decision
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const receiver: Receiver = {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    arrivals,
    open: () => hanging.size,
    answerWith(decide) {
      answer = decide
    },
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
  receivers.push(receiver)
  return receiver
}

function startServer(vars: Record<string, string>): Promise<ServerProcess> {
  return startServerProcess(vars, { timeoutMs: 8_000 })
}

async function stop(running: Running): Promise<void> {
  running.child.kill('SIGTERM')
  expect(await exitWithin(running)).toEqual({ code: 0, signal: null })
}

/** Runs the built CLI with --json and returns its one document. */
async function cliJson<T>(databaseUrl: string, ...args: string[]): Promise<T> {
  const running = launch(CLI, [...args, '--json'], { DATABASE_URL: databaseUrl })
  const exit = await exitWithin(running, 10_000)
  expect(exit, running.stderr()).toEqual({ code: 0, signal: null })
  return JSON.parse(running.stdout()) as T
}

interface Credentials {
  appId: string
  headers: Record<string, string>
}

async function createAppAndKey(databaseUrl: string): Promise<Credentials> {
  const app = await cliJson<{ id: string }>(databaseUrl, 'apps', 'create', '--name', 'Delivery processes')
  const key = await cliJson<{ client_key: string; client_secret: string }>(databaseUrl, 'keys', 'create', '--app', app.id)
  return { appId: app.id, headers: { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret } }
}

async function api<T>(server: ServerProcess, credentials: Credentials, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { ...credentials.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, body: (await res.json()) as T }
}

async function createWebhook(server: ServerProcess, credentials: Credentials, name: string, url: string): Promise<string> {
  const res = await api<{ id: string }>(server, credentials, 'POST', '/api/v0/webhooks', { name, url })
  expect(res.status).toBe(201)
  return res.body.id
}

async function createTaxes(server: ServerProcess, credentials: Credentials, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await api(server, credentials, 'POST', '/api/v0/taxes', { name: `Tax ${i}`, percentage: 10 })
    expect(res.status).toBe(201)
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

describe('a server killed with SIGKILL mid-delivery', () => {
  it('delivers every event at least once after a restart on the same database, each with its own webhook-id', async () => {
    const database = await freshDatabase()
    const url = database.url
    const credentials = await createAppAndKey(url)
    // The first ten get a 200; everything after is held open, unanswered, until the sender gives up.
    let answered = 0
    const receiver = await startReceiver(() => (answered++ < 10 ? 200 : 'hang'))
    // A claim lapses 2 × 500 + 1000 ms after it was taken; four attempts at a time to the webhook
    // keep most deliveries pending while the held-open ones time out.
    const vars = { DATABASE_URL: url, WEBHOOK_TIMEOUT_MS: '500', WEBHOOK_CONCURRENCY_PER_WEBHOOK: '4', WEBHOOK_POLL_MS: '50' }
    const first = await startServer(vars)
    await createWebhook(first, credentials, 'durable', receiver.url('/durable'))
    await createTaxes(first, credentials, 60)

    await waitUntil('ten answered deliveries and requests held open', () =>
      receiver.arrivals.filter((a) => a.answered === 200).length >= 10 && receiver.open() >= 2 ? true : undefined,
    )
    receiver.answerWith(() => 200)
    const openAtKill = receiver.open()
    first.child.kill('SIGKILL')
    expect(await exitWithin(first)).toEqual({ code: null, signal: 'SIGKILL' })
    expect(openAtKill).toBeGreaterThanOrEqual(2)

    // What the killed server left behind: claims on the wire that will lapse, and untried deliveries.
    const claimed = await database.count("select count(*) as n from deliveries where status = 'pending' and claim_token is not null")
    const untried = await database.count("select count(*) as n from deliveries where status = 'pending' and attempts = 0 and claim_token is null")
    expect(claimed).toBeGreaterThanOrEqual(1)
    expect(untried).toBeGreaterThanOrEqual(1)

    const events = (await database.query<{ id: string }>('select id from events where app_id = ?', credentials.appId)).map((e) => e.id)
    // the webhook's own webhook.created and the 60 tax.created
    expect(events).toHaveLength(61)

    const second = await startServer(vars)
    try {
      const delivered = () => new Set(receiver.arrivals.filter((a) => a.answered === 200).map((a) => a.webhookId))
      await waitUntil('every event answered 200 at the receiver', () => (events.every((id) => delivered().has(id)) ? true : undefined), 20_000)
      await waitUntil(
        'every delivery recorded succeeded',
        async () => ((await database.count("select count(*) as n from deliveries where status != 'succeeded'")) === 0 ? true : undefined),
        10_000,
      )
    } finally {
      await stop(second)
    }

    expect(await database.count('select count(*) as n from deliveries')).toBe(61)
    // Every request, first or duplicate, is the event it says it is: webhook-id is the event id.
    for (const arrival of receiver.arrivals) {
      expect(arrival.path).toBe('/durable')
      expect(arrival.webhookId).toBe(arrival.payloadId)
      expect(events).toContain(arrival.webhookId)
    }
    const byEvent = new Map<string, Set<string | undefined>>()
    for (const arrival of receiver.arrivals) {
      const ids = byEvent.get(arrival.webhookId) ?? new Set()
      ids.add(arrival.payloadId)
      byEvent.set(arrival.webhookId, ids)
    }
    for (const ids of byEvent.values()) expect(ids.size).toBe(1)
    expect(byEvent.size).toBe(61)
  }, 60_000)
})

describe('devplatform worker beside a server with WEBHOOK_DISPATCHER=off', () => {
  it('delivers what the server commits, aborts an attempt when the server deletes its webhook, and exits 0 on SIGTERM', async () => {
    const database = await freshDatabase()
    const url = database.url
    const credentials = await createAppAndKey(url)
    const receiver = await startReceiver((arrival) => (arrival.path === '/hang' ? 'hang' : 200))
    const server = await startServer({ DATABASE_URL: url, WEBHOOK_DISPATCHER: 'off' })
    let worker: Running | undefined
    try {
      const okHook = await createWebhook(server, credentials, 'answers', receiver.url('/ok'))
      await createTaxes(server, credentials, 5)
      // Nothing delivers yet: the server has no dispatcher.
      await sleep(500)
      expect(receiver.arrivals).toEqual([])
      expect(await database.count("select count(*) as n from deliveries where status = 'pending' and attempts = 0")).toBe(6)

      // The same environment as the server: the worker delivers whatever WEBHOOK_DISPATCHER says.
      worker = launch(CLI, ['worker'], { DATABASE_URL: url, WEBHOOK_DISPATCHER: 'off', WEBHOOK_POLL_MS: '50', WEBHOOK_TIMEOUT_MS: '10000' })
      await worker.waitFor(/"msg":"webhook worker started"/)
      const events = (await database.query<{ id: string }>('select id from events where app_id = ?', credentials.appId)).map((e) => e.id)
      expect(events).toHaveLength(6)
      await waitUntil('the worker to deliver every event', () => {
        const seen = new Set(receiver.arrivals.filter((a) => a.answered === 200).map((a) => a.webhookId))
        return events.every((id) => seen.has(id)) ? true : undefined
      })
      await waitUntil('the worker to record every delivery', async () =>
        (await database.count("select count(*) as n from deliveries where webhook_id = ? and status = 'succeeded'", okHook)) === 6 ? true : undefined,
      )

      // A webhook whose receiver never answers: its webhook.created goes on the wire and stays there.
      const hangHook = await createWebhook(server, credentials, 'hangs', receiver.url('/hang'))
      const onTheWire = await waitUntil('an attempt on the wire to /hang', () => receiver.arrivals.find((a) => a.path === '/hang'))
      expect(onTheWire.aborted).toBe(false)
      const deletingAt = performance.now()
      const deleted = await api(server, credentials, 'DELETE', `/api/v0/webhooks/${hangHook}`)
      expect(deleted.status).toBe(200)
      // The worker learns of the deletion from the database and aborts the request.
      await waitUntil('the /hang request to be aborted', () => (onTheWire.aborted ? true : undefined), 5_000, 10)
      expect((onTheWire.closedAt ?? Infinity) - deletingAt).toBeLessThan(1_000)

      await waitUntil('the canceled attempt to be recorded', async () =>
        (await database.count('select count(*) as n from delivery_attempts where webhook_id = ?', hangHook)) === 1 ? true : undefined,
      )
      const audit = await cliJson<{
        webhook: { deleted_at: string | null }
        deliveries: { event_id: string; status: string; attempts: number; attempt_log: { attempt: number; outcome: string; status_code: number | null; error: string | null }[] }[]
      }>(url, 'deliveries', 'list', '--webhook', hangHook)
      expect(audit.webhook.deleted_at).not.toBeNull()
      expect(audit.deliveries).toHaveLength(1)
      const [delivery] = audit.deliveries
      expect(delivery?.event_id).toBe(onTheWire.webhookId)
      expect(delivery?.status).toBe('canceled')
      expect(delivery?.attempt_log).toEqual([{ attempt: 1, outcome: 'canceled', status_code: null, error: 'aborted: webhook deleted or deactivated', started_at: expect.any(String), duration_ms: expect.any(Number), response_body: null }])
      expect(receiver.arrivals.filter((a) => a.path === '/hang')).toHaveLength(1)

      worker.child.kill('SIGTERM')
      expect(await exitWithin(worker)).toEqual({ code: 0, signal: null })
      const lines = worker.stdout().trim().split('\n')
      const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg)
      expect(messages[0]).toBe('webhook worker started')
      expect(messages.at(-1)).toBe('webhook worker stopped')
      expect(worker.stderr()).toBe('')
    } finally {
      if (worker !== undefined && worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL')
      await stop(server)
    }
  }, 30_000)

  it('a worker with nothing to do exits 0 on SIGINT too', async () => {
    const database = await freshDatabase()
    const url = database.url
    const worker = launch(CLI, ['worker'], { DATABASE_URL: url })
    await worker.waitFor(/"msg":"webhook worker started"/)
    worker.child.kill('SIGINT')
    expect(await exitWithin(worker)).toEqual({ code: 0, signal: null })
    expect(worker.stdout()).toContain('"signal":"SIGINT"')
  })
})
