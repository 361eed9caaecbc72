import { startServerProcess } from '../helpers/server-process.js'
import { spawn } from 'node:child_process'
import { ownerOfClientPort } from '../fixtures/socket-owner.mjs'
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { TEST_REDIS_URL } from '../backend.js'
import { CLI, type Exit, exitWithin, launch, type Running, track } from '../processes.js'

/**
 * What the multi-instance delivery tests share: starting servers and workers on one PostgreSQL
 * database, credentials through the CLI, an in-process recording receiver (which can tell which
 * process a request came from), and the out-of-process race receiver with its causal fences.
 */

const WORKER_STARTED = /"msg":"webhook worker started"/

export const MULTI_RACE_RECEIVER = fileURLToPath(new URL('../fixtures/multi-race-receiver.mjs', import.meta.url))

/** Epoch milliseconds with sub-millisecond precision: comparable across processes on this machine. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now()
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** The p-th percentile (0–100, nearest rank) of some numbers. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)))
  return sorted[rank - 1] ?? Number.NaN
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits
  return Math.round(value * factor) / factor
}

/** The environment every server and worker of these tests gets, plus `extra`. */
export function serviceVars(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return { HOST: '127.0.0.1', NODE_ENV: 'development', DATABASE_URL: databaseUrl, REDIS_URL: TEST_REDIS_URL, LOG_LEVEL: 'info', ...extra }
}

export interface Instance extends Running {
  name: string
  pid: number
  /** http://127.0.0.1:PORT for a server; '' for a worker */
  baseUrl: string
}

/** `node dist/server.js` on an ephemeral port; resolves once it listens. */
export async function startServer(name: string, vars: Record<string, string>): Promise<Instance> {
  const started = await startServerProcess(vars)
  return { ...started, name }
}

/** `node dist/cli/index.js worker`; resolves once it has started (LISTENing included). */
export async function startWorker(name: string, vars: Record<string, string>): Promise<Instance> {
  const running = launch(CLI, ['worker'], vars)
  await running.waitFor(WORKER_STARTED, 20_000)
  return { ...running, name, pid: running.child.pid ?? -1, baseUrl: '' }
}

/** SIGTERM, and how it exited (within `ms`). */
export async function stopGracefully(instance: Running, ms = 15_000): Promise<Exit> {
  if (instance.child.exitCode !== null || instance.child.signalCode !== null) return instance.exited
  instance.child.kill('SIGTERM')
  return exitWithin(instance, ms)
}

/** Runs the built CLI with --json and returns its one document (throws on a non-zero exit). */
export async function cliJson<T>(databaseUrl: string, ...args: string[]): Promise<T> {
  const running = launch(CLI, [...args, '--json'], { DATABASE_URL: databaseUrl })
  const exit = await exitWithin(running, 20_000)
  if (exit.code !== 0) throw new Error(`devplatform ${args.join(' ')} exited ${JSON.stringify(exit)}: ${running.stderr()}`)
  return JSON.parse(running.stdout()) as T
}

export interface Credentials {
  appId: string
  headers: Record<string, string>
}

/** A new application and an all-scopes key with a rate limit high enough for load (shared in Redis by every server). */
export async function createCredentials(databaseUrl: string, name: string): Promise<Credentials> {
  const app = await cliJson<{ id: string }>(databaseUrl, 'apps', 'create', '--name', name)
  const key = await cliJson<{ client_key: string; client_secret: string }>(databaseUrl, 'keys', 'create', '--app', app.id, '--rate-limit', '100000000')
  return { appId: app.id, headers: { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret } }
}

export interface ApiResult<T> {
  status: number
  body: T
  /** performance.now() when the request was sent and when its response had been read in full */
  sentAt: number
  receivedAt: number
  /** the same moment as receivedAt, as epoch ms (see epochNow) */
  receivedEpoch: number
}

export async function api<T = Record<string, unknown>>(baseUrl: string, credentials: Credentials, method: string, path: string, body?: unknown): Promise<ApiResult<T>> {
  const sentAt = performance.now()
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...credentials.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  const receivedAt = performance.now()
  const receivedEpoch = performance.timeOrigin + receivedAt
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, body: parsed as T, sentAt, receivedAt, receivedEpoch }
}

export async function createWebhook(baseUrl: string, credentials: Credentials, name: string, url: string): Promise<string> {
  const res = await api<{ id: string }>(baseUrl, credentials, 'POST', '/api/v0/webhooks', { name, url })
  if (res.status !== 201) throw new Error(`POST /webhooks answered ${res.status}: ${JSON.stringify(res.body)}`)
  return res.body.id
}

// ---------------------------------------------------------------------------------------------
// The in-process recording receiver

export interface Arrival {
  path: string
  /** the webhook-id header: the event id */
  webhookId: string
  /** from the (unencrypted) JSON envelope */
  eventId: string | undefined
  type: string | undefined
  /** `data.id` of the envelope: the resource the event is about */
  dataId: string | undefined
  /** performance.now() when the request's headers had been parsed */
  at: number
  /** the client's port: which process sent it, see `ownerPid` */
  remotePort: number
  /** the pid of the process whose socket this was (when it could be told from /proc) */
  ownerPid: number | undefined
}

export interface RecordingReceiver {
  port: number
  url(path: string): string
  arrivals: Arrival[]
  /** resolves once `predicate` holds for an arrival (checked at each arrival), with that arrival */
  waitForArrival(predicate: (arrival: Arrival) => boolean, timeoutMs: number): Promise<Arrival>
  close(): Promise<void>
}

/**
 * Answers 200 (after reading the body) and records every request. When `candidatePids` is given,
 * each new connection is attributed to the process among them that holds its client socket
 * (Linux /proc), read at once while the connection is certainly open.
 */
export async function startRecordingReceiver(options: { candidatePids?: () => readonly number[] } = {}): Promise<RecordingReceiver> {
  const arrivals: Arrival[] = []
  const owners = new WeakMap<Socket, number | undefined>()
  let waiters: (() => void)[] = []
  const responses = new Set<ServerResponse>()
  const sockets = new Set<Socket>()
  let port = 0

  const server: Server = createServer((request, response) => {
    const at = performance.now()
    responses.add(response)
    response.on('close', () => responses.delete(response))
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      let eventId: string | undefined
      let type: string | undefined
      let dataId: string | undefined
      try {
        const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown; type?: unknown; data?: { id?: unknown } }
        if (typeof parsed.id === 'string') eventId = parsed.id
        if (typeof parsed.type === 'string') type = parsed.type
        if (typeof parsed.data?.id === 'string') dataId = parsed.data.id
      } catch {
        // not JSON: the test notices the missing ids
      }
      const header = request.headers['webhook-id']
      const socket = request.socket
      arrivals.push({
        path: request.url ?? '',
        webhookId: typeof header === 'string' ? header : '',
        eventId,
        type,
        dataId,
        at,
        remotePort: socket.remotePort ?? -1,
        ownerPid: owners.get(socket),
      })
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
      for (const wake of waiters.splice(0)) wake()
    })
  })
  server.keepAliveTimeout = 60_000
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    if (options.candidatePids !== undefined && socket.remotePort !== undefined) {
      owners.set(socket, ownerOfClientPort(socket.remotePort, port, options.candidatePids()))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port

  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    arrivals,
    async waitForArrival(predicate, timeoutMs) {
      const deadline = performance.now() + timeoutMs
      let checked = 0
      for (;;) {
        for (; checked < arrivals.length; checked++) {
          const arrival = arrivals[checked]
          if (arrival !== undefined && predicate(arrival)) return arrival
        }
        const left = deadline - performance.now()
        if (left <= 0) throw new Error(`receiver: no matching arrival within ${timeoutMs} ms (${arrivals.length} arrivals)`)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left)
          waiters.push(() => {
            clearTimeout(timer)
            resolve()
          })
        })
      }
    },
    async close() {
      waiters = []
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

export { ownerOfClientPort }

// ---------------------------------------------------------------------------------------------
// The race receiver: its own process (test/fixtures/multi-race-receiver.mjs)

export interface RaceArrival {
  path: string
  webhookId: string | undefined
  sequence: number
  /** epoch ms (see epochNow) */
  at: number
  aborted: boolean
  closedAt: number | null
  /** its 200 was written out in full */
  answered: boolean
  /** the sender's port (see ownerOfClientPort) */
  remotePort: number
  /** 1 for the first request on its connection, 2 for the next, … */
  onSocket: number
  /** which of the processes named with setSenders() sent it (null: could not be told) */
  sender: string | null
}

export interface RaceSnapshot {
  arrivals: RaceArrival[]
  /** path -> sequence number of its fence */
  fences: Record<string, number>
  /** path -> epoch ms when its fence was handled */
  fenceTimes: Record<string, number>
}

export interface RaceReceiver {
  port: number
  url(path: string): string
  /**
   * The fence, on a connection of its own: the receiver accepts connections in arrival order, so
   * a request whose connection came first is read first (a kept-alive fence connection would be
   * read one loop turn ahead of connections still waiting to be accepted).
   */
  fence(path: string): Promise<void>
  snapshot(pathPrefix?: string): Promise<RaceSnapshot>
  /**
   * Names the processes whose requests the receiver attributes (by their client sockets): `all`
   * requests (slows the receiver down), or only those arriving after their path's fence (`late`).
   */
  setSenders(instances: readonly Instance[], mode: 'all' | 'late'): Promise<void>
  close(): void
}

export async function startRaceReceiver(): Promise<RaceReceiver> {
  const child = track(spawn(process.execPath, [MULTI_RACE_RECEIVER], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] }))
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())))
    child.once('exit', () => reject(new Error('race receiver exited')))
  })
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    fence: (path) =>
      new Promise<void>((resolve, reject) => {
        const request = httpRequest({ host: '127.0.0.1', port, path: `/__fence${path}`, method: 'POST', agent: false }, (response) => {
          response.resume()
          response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`fence: ${response.statusCode}`))))
        })
        request.on('error', reject)
        request.end()
      }),
    async snapshot(pathPrefix = '') {
      const res = await fetch(`http://127.0.0.1:${port}/__arrivals?path=${encodeURIComponent(pathPrefix)}`)
      return (await res.json()) as RaceSnapshot
    },
    async setSenders(instances, mode) {
      const query = new URLSearchParams([['mode', mode], ...instances.map((instance): [string, string] => [instance.name, String(instance.pid)])])
      const res = await fetch(`http://127.0.0.1:${port}/__senders?${query.toString()}`, { method: 'POST' })
      await res.text()
    },
    close() {
      child.kill()
    },
  }
}
