import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net'
import { CLI, exitWithin, launch, type Running, SERVER } from '../processes.js'

/**
 * Helpers of limits-and-races.test.ts: real `node dist/server.js` children, a TCP proxy that can
 * be cut and restored (to take PostgreSQL or Redis away from a running server), the CLI, and an
 * HTTP client that never hangs.
 */

const LISTENING = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/
const BANNER_END = /API reference: \S+\n/
const KEY_LINE = /x-client-key:\s+(\S+)/
const SECRET_LINE = /x-client-secret:\s+(\S+)/

export interface ApiKey {
  'x-client-key': string
  'x-client-secret': string
}

export interface StartedServer extends Running {
  port: number
  baseUrl: string
  /** the development key this start printed (only the first start on an empty database prints one) */
  devKey: ApiKey | undefined
}

/**
 * Starts `node dist/server.js` on a free port with the given variables (on top of the defaults
 * below) and waits until it listens. `expectDevKey`: wait for the development key banner too.
 */
export async function startServer(vars: Record<string, string>, expectDevKey: boolean): Promise<StartedServer> {
  const running = launch(SERVER, [], {
    PORT: '0',
    HOST: '127.0.0.1',
    NODE_ENV: 'development',
    // info: the "Server listening at" line is an info log line.
    LOG_LEVEL: 'info',
    WEBHOOK_DISPATCHER: 'off',
    ...vars,
  })
  const match = await running.waitFor(LISTENING, 20_000)
  const port = Number(match[1])
  let devKey: ApiKey | undefined
  if (expectDevKey) {
    // The banner is one write after listening; its last line says it is complete.
    await running.waitFor(BANNER_END, 10_000)
    const out = running.stdout()
    const clientKey = out.match(KEY_LINE)?.[1]
    const clientSecret = out.match(SECRET_LINE)?.[1]
    if (clientKey === undefined || clientSecret === undefined) throw new Error(`no development key printed; stdout=${out}`)
    devKey = { 'x-client-key': clientKey, 'x-client-secret': clientSecret }
  }
  return { ...running, port, baseUrl: `http://127.0.0.1:${port}`, devKey }
}

/** SIGKILLs a server if it still runs (tests end with it; afterAll's cleanUp() is the safety net). */
export async function kill(server: Running): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return
  server.child.kill('SIGKILL')
  await server.exited
}

export interface Reply {
  status: number
  headers: Headers
  body: unknown
  /** wall time of the request, in ms */
  ms: number
}

/** One request with a hard deadline (AbortSignal.timeout), so a hang fails the test instead of blocking it. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: ApiKey; body?: unknown; timeoutMs?: number } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.key ?? {}) }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const started = performance.now()
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 12_000),
  })
  const text = await res.text()
  const ms = performance.now() - started
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body, ms }
}

/** A string property of a JSON object, or an error naming what was there. */
export function stringField(value: unknown, name: string): string {
  const field = typeof value === 'object' && value !== null ? Reflect.get(value, name) : undefined
  if (typeof field !== 'string') throw new Error(`expected a string "${name}" in ${JSON.stringify(value)}`)
  return field
}

/** `devplatform <args> --json` on `databaseUrl`; the one JSON document it prints. */
export async function cliJson(databaseUrl: string, args: string[]): Promise<unknown> {
  const run = launch(CLI, [...args, '--json'], { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' })
  const exit = await exitWithin(run, 20_000)
  if (exit.code !== 0) throw new Error(`devplatform ${args.join(' ')} exited ${JSON.stringify(exit)}; stderr=${run.stderr()}`)
  const parsed: unknown = JSON.parse(run.stdout())
  return parsed
}

/** A new application and a production key with every scope and the given hourly limit. */
export async function createKey(databaseUrl: string, name: string, rateLimit: number): Promise<ApiKey & { id: string }> {
  const app = await cliJson(databaseUrl, ['apps', 'create', '--name', name])
  const key = await cliJson(databaseUrl, ['keys', 'create', '--app', stringField(app, 'id'), '--rate-limit', String(rateLimit)])
  return { id: stringField(key, 'id'), 'x-client-key': stringField(key, 'client_key'), 'x-client-secret': stringField(key, 'client_secret') }
}

/** A port nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/**
 * A TCP proxy on 127.0.0.1 to `target`. stop() closes the listener and destroys every
 * connection (both sides), as if the server behind it went away; start() again on the same port
 * brings it back.
 */
export class TcpProxy {
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  port = 0

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Listens on `port` (the previous one after a stop, or a free one the first time). */
  async start(): Promise<number> {
    if (this.server !== undefined) throw new Error('proxy already started')
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost)
      this.sockets.add(client)
      this.sockets.add(upstream)
      const end = () => {
        client.destroy()
        upstream.destroy()
        this.sockets.delete(client)
        this.sockets.delete(upstream)
      }
      client.on('error', end).on('close', end)
      upstream.on('error', end).on('close', end)
      client.pipe(upstream)
      upstream.pipe(client)
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject)
        resolve()
      })
    })
    this.server = server
    this.port = (server.address() as AddressInfo).port
    return this.port
  }

  /** Stops listening and cuts every connection through it. */
  async stop(): Promise<void> {
    const server = this.server
    if (server === undefined) return
    this.server = undefined
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    for (const socket of this.sockets) socket.destroy()
    this.sockets.clear()
    await closed
  }
}
