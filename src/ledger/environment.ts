import type { Environment } from '../keys/credentials.js'
import type { LedgerEnvironment } from './ledger.js'

/**
 * The money a key sees and moves: a development key only sandbox money, a production key only
 * live money. Every money route and the CLI take the environment from here, never from input.
 */
export function ledgerEnvironmentOf(keyEnvironment: Environment): LedgerEnvironment {
  return keyEnvironment === 'production' ? 'live' : 'sandbox'
}

/** An object's `livemode` (src/schemas/common.ts, Livemode) from the environment it belongs to. */
export function livemodeOf(environment: string): boolean {
  return environment === 'live'
}
