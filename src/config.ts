import { resolve } from 'node:path'

export type NodeEnv = 'development' | 'production' | 'test'
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export type DatabaseLocation = { kind: 'sqlite'; filename: string } // ':memory:' or an absolute path

export interface Config {
  port: number
  host: string
  database: DatabaseLocation
  logLevel: LogLevel
  nodeEnv: NodeEnv
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
  }
}
