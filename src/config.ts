import { REDIS_CALL_BUDGET_MS } from './auth/redis-circuit.js'
import { resolve } from 'node:path'
import { type ChainsConfig, ChainsConfigError, loadChainsConfig } from './chains/config.js'

export type NodeEnv = 'development' | 'production' | 'test'
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export type DatabaseLocation =
  | { kind: 'sqlite'; filename: string } // ':memory:' or an absolute path
  | { kind: 'postgres'; url: string; poolSize: number }

export interface WebhookConfig {
  /** run the delivery dispatcher inside the server (off: run `devplatform worker` instead) */
  dispatcher: boolean
  timeoutMs: number
  concurrency: number
  /** attempts on the wire at once for one application, so one tenant can't take every slot */
  perAppConcurrency: number
  perWebhookConcurrency: number
  pollIntervalMs: number
}

export interface Config {
  port: number
  host: string
  database: DatabaseLocation
  /**
   * redis://host:port[/db], or redis+sentinel://host:port[,host:port…]/master[/db] (the master
   * Redis Sentinel names): the shared rate limiter; undefined keeps it in this process
   */
  redisUrl: string | undefined
  logLevel: LogLevel
  nodeEnv: NodeEnv
  webhooks: WebhookConfig
  /** a request's line, headers and body must all have arrived within this, or it is answered 408 */
  requestTimeoutMs: number
  /** how long one Redis call may take before the request goes on without Redis (the circuit's budget) */
  redisTimeoutMs: number
  /** failed authentications allowed per client address and per client key in a sliding window */
  authFailures: AuthFailureConfig
  /** METRICS_PORT: the port of the Prometheus listener (GET /metrics, on HOST); undefined: no listener */
  metricsPort: number | undefined
  /** PRODUCT_IMAGES_DIR: the directory product images are stored in (absolute path) */
  productImagesDir: string
  drains: DrainConfig
  /** EXCHANGE_RATE_MAX_AGE_SECONDS: no conversion or rate read uses a rate older than this */
  exchangeRateMaxAgeMs: number
  /** EXCHANGE_RATES_FILE: rates loaded at start and again when the file changes (absolute path); undefined: none */
  exchangeRatesFile: string | undefined
  /**
   * PUBLIC_URL: the origin payers and webhook receivers reach this server at ("https://pay.example.com"),
   * the one base of every URL put into answers, events and pages; never a request's Host.
   * Required in production; undefined elsewhere: http://127.0.0.1:<the port the server listens on>.
   */
  publicUrl: string | undefined
  /** CHAINS_FILE: the EVM chains live money is received on (src/chains/config.ts); undefined: every chain is off */
  chains: ChainsConfig | undefined
}

/** The money scheduler (src/scheduler/money-scheduler.ts: drains and transfers) and its sandbox timings. */
export interface DrainConfig {
  /** advance drains inside the server (off: run `devplatform worker` instead) */
  scheduler: boolean
  /** each step on chains, a wallet, wire, SEPA, SWIFT and SPEI */
  fastDelayMs: number
  /** each step on ACH */
  achDelayMs: number
  pollIntervalMs: number
  /** drains advanced at once by one scheduler */
  concurrency: number
}

export interface AuthFailureConfig {
  /** 0: no per-address limit */
  perAddress: number
  /** 0: no per-key limit */
  perKey: number
  windowSeconds: number
}

/** Thrown for a bad environment value; the message is the one line printed before exiting. */
export class ConfigError extends Error {}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
const NODE_ENVS: readonly NodeEnv[] = ['development', 'production', 'test']

export const DEFAULT_DATABASE_URL = 'sqlite:./data/devplatform.db'
export const DEFAULT_PRODUCT_IMAGES_DIR = './data/product-images'

/** PRODUCT_IMAGES_DIR as an absolute path (the server's and `devplatform apps delete`'s). */
export function productImagesDirOf(env: NodeJS.ProcessEnv): string {
  return resolve(env.PRODUCT_IMAGES_DIR === undefined || env.PRODUCT_IMAGES_DIR === '' ? DEFAULT_PRODUCT_IMAGES_DIR : env.PRODUCT_IMAGES_DIR)
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  const found = allowed.find((candidate) => candidate === value)
  if (found === undefined) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`)
  }
  return found
}

/** A URL with its password hidden, for messages. */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value)
    if (url.password === '') return value
    url.password = '***'
    return url.toString()
  } catch {
    return value.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@')
  }
}

export function parseDatabaseUrl(value: string, name = 'DATABASE_URL', poolSize = 10): DatabaseLocation {
  if (value === 'sqlite::memory:') return { kind: 'sqlite', filename: ':memory:' }
  if (value.startsWith('sqlite:') && value.length > 'sqlite:'.length) {
    return { kind: 'sqlite', filename: resolve(value.slice('sqlite:'.length)) }
  }
  if (/^postgres(ql)?:\/\//.test(value)) {
    postgresHostUrls(value, name)
    return { kind: 'postgres', url: value, poolSize }
  }
  throw new ConfigError(
    `${name} must be sqlite:PATH, sqlite::memory: or postgres://user@host:port/database (got ${JSON.stringify(redactUrl(value))})`,
  )
}

// scheme, user info, the host list, and the rest (path, query); user info is percent-encoded, so '@' ends it.
const POSTGRES_URL_PARTS = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(\?[^#]*)?$/
const POSTGRES_HOST = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/
// libpq's session attributes that mean "a server that takes writes"; the server only ever writes.
const WRITABLE_SESSION_ATTRS = new Set(['read-write', 'primary'])

/**
 * The single-host URLs of a PostgreSQL URL that may list several hosts, in libpq's syntax
 * (postgres://user@h1:5432,h2:5433/db?target_session_attrs=read-write, as pg_auto_failover's
 * formation URI is): node-postgres connects to one host, so src/db/postgres/primary.ts tries them
 * in turn and keeps the one that takes writes. Each keeps the user, password, database and
 * parameters; target_session_attrs is libpq's, and only a writable server is ever wanted.
 */
export function postgresHostUrls(value: string, name = 'DATABASE_URL'): string[] {
  const expected = () => new ConfigError(`${name} must be postgres://user@host:port[,host:port…]/database (got ${JSON.stringify(redactUrl(value))})`)
  const parts = POSTGRES_URL_PARTS.exec(value)
  if (parts === null) throw expected()
  const [, scheme = '', userInfo, hostList = '', path = '', query = ''] = parts
  const parameters = query.replace(/^\?/, '').split('&').filter((parameter) => parameter !== '')
  const kept: string[] = []
  for (const parameter of parameters) {
    const [key = '', setting = ''] = parameter.split('=', 2)
    if (decodeURIComponent(key) !== 'target_session_attrs') {
      kept.push(parameter)
      continue
    }
    if (!WRITABLE_SESSION_ATTRS.has(decodeURIComponent(setting))) {
      throw new ConfigError(`${name}: target_session_attrs must be read-write or primary, the server writes (got ${JSON.stringify(decodeURIComponent(setting))})`)
    }
  }
  const rest = `${path}${kept.length > 0 ? `?${kept.join('&')}` : ''}`
  return hostList.split(',').map((host) => {
    const found = POSTGRES_HOST.exec(host)
    const port = found?.[2] === undefined ? undefined : Number(found[2])
    if (found === null || (port !== undefined && (port < 1 || port > 65_535))) throw expected()
    const url = `${scheme}${userInfo === undefined ? '' : `${userInfo}@`}${host}${rest}`
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      throw new ConfigError(`${name} is not a valid URL (got ${JSON.stringify(redactUrl(value))})`)
    }
    if (parsed.hostname === '' || parsed.pathname.length <= 1) throw expected()
    return url
  })
}

/** Where the data is, for log lines: the file, or the PostgreSQL URL without its password. */
export function describeDatabase(location: DatabaseLocation): string {
  return location.kind === 'sqlite' ? location.filename : redactUrl(location.url)
}

/**
 * For start-up: rethrows an error opening the database (or Redis) as one line naming the
 * variable, e.g. "DATABASE_URL: cannot connect to postgres://…: connect ECONNREFUSED".
 */
export function startError(variable: string): (error: unknown) => never {
  return (error: unknown) => {
    throw new Error(`${variable}: ${error instanceof Error ? error.message : String(error)}`)
  }
}

const REDIS_URL_FORMS = 'redis://host:port[/db] or redis+sentinel://host:port[,host:port…]/master_name[/db]'

export function parseRedisUrl(value: string, name = 'REDIS_URL'): string {
  if (value.startsWith('redis+sentinel:')) {
    parseRedisSentinelUrl(value, name)
    return value
  }
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {
    url = undefined
  }
  if (url === undefined || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '' || !/^(\/\d{0,2})?$/.test(url.pathname)) {
    throw new ConfigError(`${name} must be ${REDIS_URL_FORMS} (got ${JSON.stringify(redactUrl(value))})`)
  }
  return value
}

/** Where Redis Sentinel is asked for the master: what ioredis's sentinel options take. */
export interface RedisSentinelTarget {
  sentinels: { host: string; port: number }[]
  /** the master's name in the sentinels' `sentinel monitor` line */
  name: string
  db: number
  /** the Redis nodes' credentials (AUTH), not the sentinels' */
  username: string | undefined
  password: string | undefined
}

// user info, the sentinels, the master's name, the database; user info is percent-encoded, so '@' ends it.
const SENTINEL_URL_PARTS = /^redis\+sentinel:\/\/(?:([^@/?#]*)@)?([^/?#]*)\/([A-Za-z0-9._-]+)(?:\/(\d{1,2}))?$/
const SENTINEL_HOST = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/

/**
 * redis+sentinel://[[user]:password@]host:port[,host:port…]/master_name[/db]: the sentinels
 * (port 26379 when left out) and the master they watch. Every instance's client asks them where
 * the master is, and again after each failover.
 */
export function parseRedisSentinelUrl(value: string, name = 'REDIS_URL'): RedisSentinelTarget {
  const expected = (why: string) => new ConfigError(`${name}: ${why}; expected redis+sentinel://host:port[,host:port…]/master_name[/db] (got ${JSON.stringify(redactUrl(value))})`)
  const parts = SENTINEL_URL_PARTS.exec(value)
  if (parts === null) throw expected('not a sentinel list and a master name')
  const [, userInfo, hostList = '', master = '', dbText] = parts
  const sentinels = hostList.split(',').map((entry) => {
    const found = SENTINEL_HOST.exec(entry)
    const port = found?.[2] === undefined ? 26_379 : Number(found[2])
    if (found === null || port < 1 || port > 65_535) throw expected(`${JSON.stringify(entry)} is not host[:port]`)
    return { host: (found[1] ?? '').replace(/^\[(.*)\]$/, '$1'), port }
  })
  const db = dbText === undefined ? 0 : Number(dbText)
  let username: string | undefined
  let password: string | undefined
  if (userInfo !== undefined) {
    const colon = userInfo.indexOf(':')
    try {
      username = decodeURIComponent(colon === -1 ? userInfo : userInfo.slice(0, colon))
      password = colon === -1 ? undefined : decodeURIComponent(userInfo.slice(colon + 1))
    } catch {
      throw expected('the user or password is not percent-encoded')
    }
  }
  return { sentinels, name: master, db, username: username === '' ? undefined : username, password: password === '' ? undefined : password }
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const text = env[name]
  if (text === undefined) return fallback
  if (!/^\d{1,9}$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(text)})`)
  }
  return Number(text)
}

export function loadWebhookConfig(env: NodeJS.ProcessEnv = process.env): WebhookConfig {
  return {
    dispatcher: oneOf('WEBHOOK_DISPATCHER', env.WEBHOOK_DISPATCHER ?? 'on', ['on', 'off']) === 'on',
    timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 120_000),
    concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 256, 1, 10_000),
    perAppConcurrency: integer(env, 'WEBHOOK_CONCURRENCY_PER_APP', 64, 1, 10_000),
    perWebhookConcurrency: integer(env, 'WEBHOOK_CONCURRENCY_PER_WEBHOOK', 16, 1, 1_000),
    pollIntervalMs: integer(env, 'WEBHOOK_POLL_MS', 250, 10, 60_000),
  }
}

export function loadDrainConfig(env: NodeJS.ProcessEnv = process.env): DrainConfig {
  return {
    scheduler: oneOf('DRAIN_SCHEDULER', env.DRAIN_SCHEDULER ?? 'on', ['on', 'off']) === 'on',
    fastDelayMs: integer(env, 'DRAIN_DELAY_FAST_MS', 1_000, 0, 86_400_000),
    achDelayMs: integer(env, 'DRAIN_DELAY_ACH_MS', 3_000, 0, 86_400_000),
    pollIntervalMs: integer(env, 'DRAIN_POLL_MS', 250, 10, 60_000),
    concurrency: integer(env, 'DRAIN_CONCURRENCY', 4, 1, 256),
  }
}

/** The failed-authentication throttle: the same defaults in every environment (0 turns a limit off). */
export function loadAuthFailureConfig(env: NodeJS.ProcessEnv = process.env): AuthFailureConfig {
  return {
    perAddress: integer(env, 'AUTH_FAILURES_PER_ADDRESS', 20, 0, 1_000_000),
    perKey: integer(env, 'AUTH_FAILURES_PER_KEY', 20, 0, 1_000_000),
    windowSeconds: integer(env, 'AUTH_FAILURE_WINDOW_SECONDS', 60, 1, 86_400),
  }
}

/** Reads the configuration from an environment; every variable is optional and validated. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const portText = env.PORT ?? '3000'
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535 (got ${JSON.stringify(portText)})`)
  }
  const host = env.HOST ?? '127.0.0.1'
  if (host.trim() === '' || /\s/.test(host)) {
    throw new ConfigError(`HOST must be a host name or IP address (got ${JSON.stringify(host)})`)
  }
  return {
    port: Number(portText),
    host,
    database: parseDatabaseUrl(env.DATABASE_URL ?? DEFAULT_DATABASE_URL, 'DATABASE_URL', integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1_000)),
    redisUrl: env.REDIS_URL === undefined || env.REDIS_URL === '' ? undefined : parseRedisUrl(env.REDIS_URL),
    logLevel: oneOf('LOG_LEVEL', env.LOG_LEVEL ?? 'info', LOG_LEVELS),
    nodeEnv: oneOf('NODE_ENV', env.NODE_ENV ?? 'development', NODE_ENVS),
    webhooks: loadWebhookConfig(env),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000),
    redisTimeoutMs: integer(env, 'REDIS_TIMEOUT_MS', REDIS_CALL_BUDGET_MS, 10, 10_000),
    authFailures: loadAuthFailureConfig(env),
    metricsPort: loadMetricsPort(env, Number(portText)),
    productImagesDir: productImagesDirOf(env),
    drains: loadDrainConfig(env),
    exchangeRateMaxAgeMs: integer(env, 'EXCHANGE_RATE_MAX_AGE_SECONDS', 3_600, 1, 31_536_000) * 1000,
    exchangeRatesFile: env.EXCHANGE_RATES_FILE === undefined || env.EXCHANGE_RATES_FILE === '' ? undefined : resolve(env.EXCHANGE_RATES_FILE),
    publicUrl: loadPublicUrl(env),
    chains: loadChains(env),
  }
}

function loadChains(env: NodeJS.ProcessEnv): ChainsConfig | undefined {
  try {
    return loadChainsConfig(env)
  } catch (error) {
    if (error instanceof ChainsConfigError) throw new ConfigError(error.message)
    throw error
  }
}

/**
 * PUBLIC_URL as an origin ("https://host[:port]"), or undefined when it is unset outside production.
 * Production requires it, over https. Also refuses CHECKOUT_ENVIRONMENT, which set one money for
 * every hosted payment: left set, an operator would believe it still decides.
 */
export function loadPublicUrl(env: NodeJS.ProcessEnv): string | undefined {
  if (env.CHECKOUT_ENVIRONMENT !== undefined && env.CHECKOUT_ENVIRONMENT !== '') {
    throw new ConfigError(
      `CHECKOUT_ENVIRONMENT is no longer read (got ${JSON.stringify(env.CHECKOUT_ENVIRONMENT)}): a hosted payment takes the money of the key that created its invoice or payment link (a production key: live, a development key: sandbox), so one setting can no longer mix them; unset it (docs/checkout.md)`,
    )
  }
  const production = env.NODE_ENV === 'production'
  const text = env.PUBLIC_URL
  if (text === undefined || text === '') {
    if (production) throw new ConfigError('PUBLIC_URL must be set in production: the https origin payers and webhook receivers reach this server at (e.g. https://pay.example.com), which every checkout_url, page and image URL is built from')
    return undefined
  }
  let url: URL | undefined
  try {
    url = new URL(text)
  } catch {
    url = undefined
  }
  const isOrigin =
    url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === ''
  if (url === undefined || !isOrigin) throw new ConfigError(`PUBLIC_URL must be an origin, http(s)://host[:port] with no path (got ${JSON.stringify(redactUrl(text))})`)
  if (production && url.protocol !== 'https:') throw new ConfigError(`PUBLIC_URL must be https in production: the pages' addresses let their holder pay (got ${JSON.stringify(text)})`)
  return url.origin
}

/** The public URL when PUBLIC_URL is unset (development and tests): this machine, on the port the server listens on. */
export function defaultPublicUrl(port: number): string {
  return `http://127.0.0.1:${port}`
}

/** The public URL of a command that serves nothing (the CLI's): PUBLIC_URL, or this machine on PORT (3000 unset). */
export function publicUrlOf(env: NodeJS.ProcessEnv): string {
  return loadPublicUrl(env) ?? defaultPublicUrl(/^\d{1,5}$/.test(env.PORT ?? '') ? Number(env.PORT) : 3000)
}

/** METRICS_PORT: unset or empty for no metrics listener; never the API's own port. */
export function loadMetricsPort(env: NodeJS.ProcessEnv, apiPort: number): number | undefined {
  if (env.METRICS_PORT === undefined || env.METRICS_PORT === '') return undefined
  const port = integer(env, 'METRICS_PORT', 0, 1, 65_535)
  if (port === apiPort) throw new ConfigError(`METRICS_PORT must differ from PORT (both are ${port})`)
  return port
}
