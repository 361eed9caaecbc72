import { Writable } from 'node:stream'
import type { Redis } from 'ioredis'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import type { Environment } from '../src/keys/credentials.js'
import type { RateLimiter } from '../src/auth/rate-limiter.js'
import { SCOPES } from '../src/resources/index.js'
import { connectRedis } from '../src/auth/redis-rate-limiter.js'
import { type Config, loadConfig, parseDatabaseUrl, type WebhookConfig } from '../src/config.js'
import { openDatabase } from '../src/modules/database.js'
import type { DispatcherOverrides } from '../src/delivery/dispatcher.js'
import { inject } from 'vitest'
import { copyOfTemplate, type FreshDatabase, freshDatabase, TEST_BACKEND, TEST_REDIS_URL } from './backend.js'

export interface TestKey {
  id: string
  appId: string
  clientKey: string
  clientSecret: string
  headers: Record<string, string>
}

export interface ApiResponse<T = unknown> {
  status: number
  headers: Headers
  body: T
  text: string
}

export interface RequestOptions {
  /** JSON-encoded unless a string is given (sent as is) */
  body?: unknown
  key?: TestKey | null
  headers?: Record<string, string>
}

export interface TestServer {
  app: FastifyInstance
  baseUrl: string
  /** the server's database (SQLite file or PostgreSQL database of this run's backend), to inspect */
  database: FreshDatabase
  /** every log line the server wrote, parsed */
  logs: () => string
  /** a new application with one key (all scopes, high limit unless given) */
  createKey(options?: { appId?: string; scopes?: readonly string[]; environment?: Environment; rateLimit?: number | null }): Promise<TestKey>
  deactivate(key: TestKey): Promise<void>
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>
  close(): Promise<void>
}

/**
 * A fresh database of the run's backend at the newest schema: a copy of the run's migrated
 * template (test/global-setup.ts), or, in a run without one, an empty database openDatabase migrates.
 */
export async function migratedDatabase(): Promise<FreshDatabase> {
  // Outside vitest (scripts/docs-examples.ts) there is no run to inject from.
  const template = process.env.VITEST === undefined ? undefined : inject('migratedTemplate')
  return template === undefined ? await freshDatabase() : await copyOfTemplate(template)
}

/**
 * Builds the real app on a fresh database of the run's backend (a SQLite file, or a PostgreSQL
 * database with the Redis rate limiter) and listens on an ephemeral loopback port, so tests
 * speak real HTTP. Call close() in afterAll.
 */
export async function startTestServer(
  options: {
    config?: Partial<Config>
    webhooks?: Partial<WebhookConfig>
    rateLimiter?: RateLimiter
    delivery?: DispatcherOverrides
    /** SQLite: how long a statement waits for another process's lock (default SQLITE_LOCK_WAIT_MS) */
    sqliteLockWaitMs?: number
  } = {},
): Promise<TestServer> {
  const database = await migratedDatabase()
  const defaults = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'info' })
  const config: Config = {
    ...defaults,
    database: parseDatabaseUrl(database.url, 'DATABASE_URL', 5),
    // The suite sends many deliberate 401s from 127.0.0.1; test/auth/failure-throttle.test.ts turns the throttle on.
    authFailures: { perAddress: 0, perKey: 0, windowSeconds: 60 },
    // A loaded test machine can hold a Redis answer past the production budget; the tests of the
    // budget itself set their own (test/auth/redis-circuit.test.ts, backend-faults).
    redisTimeoutMs: 2_000,
    ...options.config,
    // Route tests don't deliver (their webhooks point at example.com); delivery tests turn it on.
    webhooks: { ...defaults.webhooks, dispatcher: false, ...options.webhooks },
  }
  const db = await openDatabase(config.database, { sqliteLockWaitMs: options.sqliteLockWaitMs })
  let redis: Redis | undefined
  if (TEST_BACKEND === 'postgres' && options.rateLimiter === undefined) redis = await connectRedis(TEST_REDIS_URL)
  let logText = ''
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logText += chunk.toString()
      done()
    },
  })
  const app = await buildApp({
    config,
    db,
    logStream,
    ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
    ...(redis === undefined ? {} : { redis }),
    ...(options.delivery === undefined ? {} : { delivery: options.delivery }),
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const baseUrl = `http://127.0.0.1:${address.port}`

  const server: TestServer = {
    app,
    baseUrl,
    database,
    logs: () => logText,
    async createKey(keyOptions = {}) {
      const appId = keyOptions.appId ?? (await app.repos.apps.createApp('test app')).id
      const key = await app.repos.apps.createKey({
        appId,
        environment: keyOptions.environment ?? 'production',
        scopes: keyOptions.scopes ?? SCOPES,
        rateLimitOverride: keyOptions.rateLimit === undefined ? 1_000_000 : keyOptions.rateLimit,
      })
      return {
        id: key.id,
        appId,
        clientKey: key.client_key,
        clientSecret: key.client_secret,
        headers: { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret },
      }
    },
    async deactivate(key) {
      await app.repos.apps.deactivateKey(key.clientKey)
    },
    async request<T>(method: string, path: string, requestOptions: RequestOptions = {}) {
      const headers: Record<string, string> = { ...(requestOptions.key ? requestOptions.key.headers : {}) }
      let body: string | undefined
      if (requestOptions.body !== undefined) {
        body = typeof requestOptions.body === 'string' ? requestOptions.body : JSON.stringify(requestOptions.body)
        headers['content-type'] = 'application/json'
      }
      Object.assign(headers, requestOptions.headers)
      const response = await fetch(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
      const text = await response.text()
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {
        // not JSON (e.g. the /docs page)
      }
      return { status: response.status, headers: response.headers, body: parsed as T, text }
    },
    async close() {
      await app.close()
      await database.drop()
    },
  }
  return server
}

export const VALID = {
  ethereum: '0x4d0280da2f2fDA5103914bCc5aad114743152A9c',
  solana: 'So11111111111111111111111111111111111111112',
  stellar: 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7',
  tron: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
} as const

export const MISSING_UUID = '00000000-0000-4000-8000-000000000000'

/** A fresh, random, valid EVM address (all lower case), so tests never collide on uniqueness. */
export function randomEvmAddress(): string {
  return `0x${Array.from(crypto.getRandomValues(new Uint8Array(20)), (b) => b.toString(16).padStart(2, '0')).join('')}`
}
