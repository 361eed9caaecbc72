import { ConfigError, DEFAULT_DATABASE_URL, parseDatabaseUrl, publicUrlOf, startError } from '../config.js'
import type { Db } from '../db/database.js'
import { type Printed, print } from './render.js'
import { UsageError } from './usage-error.js'

/** Every option of every command, as node:util's parseArgs reads them. */
export const OPTIONS = {
  json: { type: 'boolean', default: false },
  name: { type: 'string' },
  app: { type: 'string' },
  environment: { type: 'string' },
  scopes: { type: 'string' },
  'rate-limit': { type: 'string' },
  key: { type: 'string' },
  webhook: { type: 'string' },
  limit: { type: 'string' },
  customer: { type: 'string' },
  address: { type: 'string' },
  amount: { type: 'string' },
  'tx-hash': { type: 'string' },
  from: { type: 'string' },
  transfer: { type: 'string' },
  grace: { type: 'string' },
  at: { type: 'string' },
  in: { type: 'string' },
  never: { type: 'boolean' },
  confirm: { type: 'string' },
  'display-name': { type: 'string' },
  color: { type: 'string' },
  'support-email': { type: 'string' },
  logo: { type: 'string' },
  'no-logo': { type: 'boolean' },
  payout: { type: 'string' },
  by: { type: 'string' },
  reason: { type: 'string' },
  status: { type: 'string' },
  chain: { type: 'string' },
  currency: { type: 'string' },
  role: { type: 'string' },
  ttl: { type: 'string' },
  drain: { type: 'string' },
  wallet: { type: 'string' },
  'return-address': { type: 'string' },
  'idempotency-key': { type: 'string' },
} as const

export interface Flags {
  json: boolean
  name?: string
  app?: string
  environment?: string
  scopes?: string
  'rate-limit'?: string
  key?: string
  webhook?: string
  limit?: string
  customer?: string
  address?: string
  amount?: string
  'tx-hash'?: string
  from?: string
  transfer?: string
  grace?: string
  at?: string
  in?: string
  never?: boolean
  confirm?: string
  'display-name'?: string
  color?: string
  'support-email'?: string
  logo?: string
  'no-logo'?: boolean
  payout?: string
  by?: string
  reason?: string
  status?: string
  chain?: string
  currency?: string
  role?: string
  ttl?: string
  drain?: string
  wallet?: string
  'return-address'?: string
  'idempotency-key'?: string
}

/** An option a command may take; --json is every command's unless it refuses it. */
export type OptionName = Exclude<keyof Flags, 'json'>

/** How a command was called. */
export interface CommandCall {
  flags: Flags
  /** what followed the command's name: its FILE, or the words of help's TOPIC ('' for none) */
  operand: string
  env: NodeJS.ProcessEnv
}

/** One entry of the command table: what `devplatform` reads, lists in its usage and runs. */
export interface Command {
  /** the words that name it */
  name: string
  /** its part of the usage, which `help COMMAND` prints */
  usage: string
  /** the options it takes besides --json */
  options: readonly OptionName[]
  /** what follows its name: nothing unless said, exactly one FILE, or any words of a TOPIC */
  operand?: 'FILE' | 'TOPIC'
  /** --json is refused, with why when the refusal says it */
  refusesJson?: { why?: string }
  /** runs it; resolves with the exit code */
  run(call: CommandCall): Promise<number>
}

/** A configuration read whose refusal is the command's usage error. */
export function configOrUsage<T>(read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message)
    throw error
  }
}

/** The origin of the URLs a command puts into events (a payment link's checkout_url): the server's. */
export function cliPublicUrl(env: NodeJS.ProcessEnv): string {
  return configOrUsage(() => publicUrlOf(env))
}

/**
 * The run of a command that answers from the database DATABASE_URL names (default
 * DEFAULT_DATABASE_URL): it opens the database, answers, and prints the answer.
 */
export function answer(respond: (db: Db, call: CommandCall) => Promise<Printed>): Command['run'] {
  return async (call) => {
    const location = configOrUsage(() => parseDatabaseUrl(call.env.DATABASE_URL ?? DEFAULT_DATABASE_URL))
    // Loaded here, not at the top: the database brings every module's migrations, which a usage
    // error or another command's start need not load.
    const [{ pino }, { handleUncaughtErrors }, { openDatabase }] = await Promise.all([import('pino'), import('../uncaught.js'), import('../modules/database.js')])
    // A command's stdout is its answer: its last-resort lines go to stderr.
    handleUncaughtErrors(pino({ level: 'info' }, pino.destination({ fd: 2, sync: true })))
    const db = await openDatabase(location).catch(startError('DATABASE_URL'))
    try {
      const printed = await respond(db, call)
      print(printed, call.flags.json)
      return printed.exitCode ?? 0
    } finally {
      await db.destroy()
    }
  }
}
