import { createServer, type AddressInfo } from 'node:net'
import { type DevelopmentKey, type ServerProcess, startServerProcess } from '../helpers/server-process.js'
import { CLI, exitWithin, launch, type Running } from '../processes.js'

/**
 * Helpers of limits-and-races.test.ts: real `node dist/server.js` children, the CLI, and an HTTP
 * client that never hangs.
 */

/** These tests' servers: development, loopback, no dispatcher, on top of `vars`. */
export function startServer(vars: Record<string, string>, expectDevKey: boolean): Promise<ServerProcess> {
  // REDIS_TIMEOUT_MS: these tests count exact limits, which a Redis call made late by a loaded machine would not be.
  return startServerProcess({ HOST: '127.0.0.1', NODE_ENV: 'development', LOG_LEVEL: 'info', WEBHOOK_DISPATCHER: 'off', REDIS_TIMEOUT_MS: '2000', ...vars }, { expectDevKey })
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
  options: { key?: DevelopmentKey; body?: unknown; timeoutMs?: number } = {},
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
export async function createKey(databaseUrl: string, name: string, rateLimit: number, environment: 'production' | 'development' = 'production'): Promise<DevelopmentKey & { id: string }> {
  const app = await cliJson(databaseUrl, ['apps', 'create', '--name', name])
  const key = await cliJson(databaseUrl, ['keys', 'create', '--app', stringField(app, 'id'), '--rate-limit', String(rateLimit), '--environment', environment])
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
