import { resolve } from 'node:path'

export type NodeEnv = 'development' | 'production' | 'test'
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export type DatabaseLocation = { kind: 'sqlite'; filename: string } // ':memory:' or an absolute path

export interface WebhookConfig {
  /** run the delivery dispatcher inside the server (off: run `devplatform worker` instead) */
  dispatcher: boolean
  timeoutMs: number
  concurrency: number
  perWebhookConcurrency: number
  pollIntervalMs: number
}

export interface Config {
  port: number
  host: string
  database: DatabaseLocation
  logLevel: LogLevel
  nodeEnv: NodeEnv
  webhooks: WebhookConfig
}

/** Thrown for a bad environment value; the message is the one line printed before exiting. */
export class ConfigError extends Error {}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
const NODE_ENVS: readonly NodeEnv[] = ['development', 'production', 'test']

export const DEFAULT_DATABASE_URL = 'sqlite:./data/devplatform.db'

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  const found = allowed.find((candidate) => candidate === value)
  if (found === undefined) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`)
  }
  return found
}

export function parseDatabaseUrl(value: string, name = 'DATABASE_URL'): DatabaseLocation {
  if (value === 'sqlite::memory:') return { kind: 'sqlite', filename: ':memory:' }
  if (value.startsWith('sqlite:') && value.length > 'sqlite:'.length) {
    return { kind: 'sqlite', filename: resolve(value.slice('sqlite:'.length)) }
  }
  throw new ConfigError(`${name} must be sqlite:PATH or sqlite::memory: (got ${JSON.stringify(value)})`)
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
    perWebhookConcurrency: integer(env, 'WEBHOOK_CONCURRENCY_PER_WEBHOOK', 16, 1, 1_000),
    pollIntervalMs: integer(env, 'WEBHOOK_POLL_MS', 250, 10, 60_000),
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
    database: parseDatabaseUrl(env.DATABASE_URL ?? DEFAULT_DATABASE_URL),
    logLevel: oneOf('LOG_LEVEL', env.LOG_LEVEL ?? 'info', LOG_LEVELS),
    nodeEnv: oneOf('NODE_ENV', env.NODE_ENV ?? 'development', NODE_ENVS),
    webhooks: loadWebhookConfig(env),
  }
}
