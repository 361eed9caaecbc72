import type { DomainHooks } from '../events/hooks.js'
import type { MoneyContext } from '../ledger/money-context.js'
import { ExchangeRates } from '../ledger/rates.js'
import { loadDrainConfig } from '../config.js'
import { domainHooks } from '../resources/index.js'
import { cliPublicUrl, configOrUsage } from './command.js'

/**
 * What a command that moves money runs it with: the sandbox timings DRAIN_DELAY_* set, and no
 * exchange rate (a command's intake converts nothing; the scheduler does, when it submits).
 */
export function cliMoneyContext(env: NodeJS.ProcessEnv): MoneyContext {
  return { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: configOrUsage(() => loadDrainConfig(env)), now: Date.now }
}

/** The subscribers of a command's domain events; PUBLIC_URL is read only if one puts a URL into an event. */
export function cliHooks(env: NodeJS.ProcessEnv, money: MoneyContext): DomainHooks {
  return domainHooks({ publicUrl: () => cliPublicUrl(env), money })
}
