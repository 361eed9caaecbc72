import type { LedgerEnvironment } from '../ledger/ledger.js'
import type { Flags } from './command.js'
import { UsageError } from './usage-error.js'

/** `deliveries list` and `rates list` show this many unless --limit says otherwise. */
const DEFAULT_LIMIT = 50
const MAX_LIMIT = 1000

/** An option the command cannot do without: given, and not blank. */
export function required(flags: Flags, name: 'name' | 'app' | 'key' | 'webhook' | 'customer' | 'address' | 'amount' | 'scopes' | 'transfer'): string {
  const value = flags[name]
  if (value === undefined || value.trim() === '') throw new UsageError(`missing required option --${name}`)
  return value
}

/** --limit: how many of the newest a list shows. */
export function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1 || Number(text) > MAX_LIMIT) {
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT} (got ${text})`)
  }
  return Number(text)
}

export const LEDGER_ENVIRONMENTS: readonly LedgerEnvironment[] = ['sandbox', 'live']

/** --environment of the ledger and rates commands: sandbox or live. */
export function parseLedgerEnvironment(text: string, command: string): LedgerEnvironment {
  const found = LEDGER_ENVIRONMENTS.find((environment) => environment === text)
  if (found === undefined) throw new UsageError(`--environment must be sandbox or live for "${command}" (got ${text})`)
  return found
}
