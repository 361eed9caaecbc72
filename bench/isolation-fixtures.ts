/**
 * The parts of the isolation benchmark (bench/isolation.ts) that its slow-DNS memory run
 * (bench/slow-dns-app.ts, a child process) shares with it: the misbehaving receivers, the
 * applications, the paced writers and the dispatcher's resolver pointed at a silent DNS server.
 */
import { createSocket } from 'node:dgram'
import { createServer, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Db } from '../src/db/database.js'
import { AppsRepository } from '../src/apps/repository.js'
import { WebhooksRepository } from '../src/resources/webhooks/repository.js'
import { newId } from '../src/db/time.js'
import type { ResolveHost } from '../src/delivery/address-guard.js'
import { CachingDnsResolver } from '../src/delivery/dns-resolver.js'

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
/** Epoch milliseconds, sub-millisecond: comparable with the receiver process's stamps. */
export const epochNow = () => performance.timeOrigin + performance.now()

/** A tax with a long description: the envelope is 1 KB, as in bench/webhooks.ts. */
export const EVENT_DATA = {
  id: newId(),
  name: 'VAT',
  description: 'd'.repeat(800),
  percentage: 20,
  active: true,
  created_at: new Date().toISOString(),
  updated_at: new Date().toISOString(),
}

/** The dispatcher's own lookup deadline: 5 s or the attempt's timeout, whichever is shorter (DNS_TIMEOUT_MS in src/delivery/dispatcher.ts, not exported). */
export const dispatcherDnsTimeoutMs = (attemptTimeoutMs: number) => Math.min(5000, attemptTimeoutMs)

/** The resolver the dispatcher builds for itself, asking only `server`: injected through buildApp's `delivery.resolveHost`. */
export function dispatcherResolverAsking(server: string, attemptTimeoutMs: number): ResolveHost {
  return new CachingDnsResolver({ timeoutMs: dispatcherDnsTimeoutMs(attemptTimeoutMs), servers: [server] }).resolve
}

export interface SilentDnsServer {
  /** `127.0.0.1:port`, as CachingDnsResolver's `servers` takes it */
  address: string
  /** queries received so far (none is ever answered) */
  queries(): number
  close(): Promise<void>
}

/** A DNS server on loopback UDP that receives every query and never answers one. */
export async function silentDnsServer(): Promise<SilentDnsServer> {
  const socket = createSocket('udp4')
  let queries = 0
  socket.on('message', () => {
    queries++
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries: () => queries,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  }
}

export interface HangingServer {
  port: number
  /** connections open now */
  held(): number
  close(): Promise<void>
}

/** Accepts connections, reads what arrives and never answers: each attempt waits for its timeout. */
export async function hangingServer(): Promise<HangingServer> {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
    socket.resume()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    held: () => sockets.size,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

/** A loopback port with nothing listening: a server is bound to find a free one, then closed. */
export async function refusingPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return typeof address === 'object' && address !== null ? address.port : 0
}

export interface BenchApplication {
  appId: string
  webhookIds: string[]
}

/** An application with one active, unencrypted webhook per url. */
export async function createApplication(db: Db, name: string, urls: readonly string[]): Promise<BenchApplication> {
  const owner = await new AppsRepository(db).createApp(name)
  const webhooks = new WebhooksRepository(db)
  const webhookIds: string[] = []
  for (const [i, url] of urls.entries()) {
    const webhook = await webhooks.create(owner.id, {
      name: `${name} ${i}`,
      url,
      isActive: true,
      encrypted: false,
      signingSecret: `whsec_${Buffer.alloc(32, i).toString('base64')}`,
    })
    webhookIds.push(webhook.id)
  }
  return { appId: owner.id, webhookIds }
}

/**
 * A writer of events for one webhook each, taking the application's webhooks in turn, through the
 * same outbox as `POST /webhooks/{id}/test` (one delivery per event): the application's load is
 * spread over its webhooks rather than multiplied by them.
 */
export function eventsInTurn(app: FastifyInstance, application: BenchApplication): () => Promise<void> {
  let next = 0
  return async () => {
    const webhookId = application.webhookIds[next++ % application.webhookIds.length] ?? ''
    await app.transact(async (tx) => {
      await new WebhooksRepository(tx.db, tx.unit).lockForDelivery(application.appId, webhookId)
      await tx.events.emitTo(application.appId, webhookId, 'tax.updated', EVENT_DATA)
    })
  }
}

export interface PacedCount {
  sent: number
  /** commits that failed (e.g. no pooled PostgreSQL connection in time): counted, not retried */
  failed: number
}

/** Calls `send` `perSecond` times a second, without waiting for earlier calls, until `stop` is aborted. */
export async function paced(perSecond: number, stop: AbortSignal, send: () => Promise<void>): Promise<PacedCount> {
  const count: PacedCount = { sent: 0, failed: 0 }
  const inFlight = new Set<Promise<void>>()
  const start = performance.now()
  while (!stop.aborted) {
    const due = Math.floor(((performance.now() - start) / 1000) * perSecond)
    while (count.sent < due) {
      const sending: Promise<void> = send()
        .catch(() => {
          count.failed++
        })
        .finally(() => inFlight.delete(sending))
      inFlight.add(sending)
      count.sent++
    }
    await sleep(5)
  }
  await Promise.all(inFlight)
  return count
}

/** Counts of A's ended attempts by cause, and its deliveries still pending. */
export interface AttemptSummary {
  ended: number
  timedOut: number
  refused: number
  unresolved: number
  pending: number
}

export async function attemptSummary(db: Db, appId: string): Promise<AttemptSummary> {
  const errors = await db
    .selectFrom('delivery_attempts as attempt')
    .innerJoin('deliveries as delivery', 'delivery.id', 'attempt.delivery_id')
    .where('delivery.app_id', '=', appId)
    .select(['attempt.error', (eb) => eb.fn.countAll().as('n')])
    .groupBy('attempt.error')
    .execute()
  const summary: AttemptSummary = { ended: 0, timedOut: 0, refused: 0, unresolved: 0, pending: 0 }
  for (const { error, n } of errors) {
    const count = Number(n)
    summary.ended += count
    if (error === null) continue
    if (/timed out/.test(error)) summary.timedOut += count
    else if (/ECONNREFUSED/.test(error)) summary.refused += count
    else if (/resolve/.test(error)) summary.unresolved += count
  }
  const pending = await db
    .selectFrom('deliveries')
    .where('app_id', '=', appId)
    .where('status', '=', 'pending')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst()
  summary.pending = Number(pending?.n ?? 0)
  return summary
}

export const thousands = (n: number) => Math.round(n).toLocaleString('en')

export function describeAttempts(summary: AttemptSummary): string {
  const causes = [
    [summary.timedOut, 'timed out'],
    [summary.refused, 'refused'],
    [summary.unresolved, 'not resolved'],
  ] as const
  const named = causes.filter(([count]) => count > 0).map(([count, cause]) => `${thousands(count)} ${cause}`)
  return `${thousands(summary.ended)} attempts ended${named.length > 0 ? ` (${named.join(', ')})` : ''}, ${thousands(summary.pending)} deliveries pending at the end`
}
