import { balances } from './balances/index.js'
import { balanceTransactions } from './balance-transactions/index.js'
import { branding } from './branding/index.js'
import { checkout } from './checkout/index.js'
import { consoleResource } from './console/index.js'
import { customers } from './customers/index.js'
import { deposits } from './deposits/index.js'
import { DomainHooks, type HookSettings } from '../events/hooks.js'
import { drains } from './drains/index.js'
import { events } from './events/index.js'
import { exchangeRates } from './exchange-rates/index.js'
import { health } from './health/index.js'
import { held } from './held/index.js'
import { invoices } from './invoices/index.js'
import { liquidationAddresses } from './liquidation-addresses/index.js'
import type { Operation } from './manifest.js'
import { paymentLinks } from './payment-links/index.js'
import { paymentIntents } from './payment-intents/index.js'
import { products } from './products/index.js'
import { receivingAddresses } from './receiving-addresses/index.js'
import type { Resource } from './resource.js'
import { taxes } from './taxes/index.js'
import { transfers } from './transfers/index.js'
import { testPayments } from './test-payments/index.js'
import { wallets } from './wallets/index.js'
import { webhooks } from './webhooks/index.js'

/**
 * Every resource of the API: the one place one is registered. The routes, the scopes, the
 * operationIds and the event types are all derived from this list.
 */
export const RESOURCES: readonly Resource[] = [health, webhooks, customers, receivingAddresses, liquidationAddresses, drains, deposits, taxes, wallets, exchangeRates, balances, balanceTransactions, transfers, paymentIntents, products, invoices, paymentLinks, testPayments, events, branding, checkout, consoleResource, held]

/** Every scope a key may be given, resource by resource. */
export const SCOPES: readonly string[] = RESOURCES.flatMap((resource) => resource.manifest.scopes)

/** The scopes a key is given when none are named: every scope but the opt-in ones (a manifest's optInScopes). */
export const DEFAULT_SCOPES: readonly string[] = RESOURCES.flatMap((resource) => resource.manifest.scopes.filter((scope) => !(resource.manifest.optInScopes ?? []).includes(scope)))

export function isScope(value: string): boolean {
  return SCOPES.includes(value)
}

/** Every event type the API emits. */
export const EVENT_TYPES: readonly string[] = RESOURCES.flatMap((resource) => resource.manifest.eventTypes)

/**
 * Every module's subscribers of domain events, in RESOURCES' order, with the settings their
 * handlers run with: what each transactOn is given.
 */
export function domainHooks(settings: HookSettings): DomainHooks {
  return new DomainHooks(
    RESOURCES.flatMap((resource) => (resource.subscriptions === undefined ? [] : [resource.subscriptions])),
    settings,
  )
}

/** Every operation, by "METHOD /api/v0/path" as its route is registered. */
export const OPERATIONS: ReadonlyMap<string, Operation> = new Map(
  RESOURCES.flatMap((resource) => resource.manifest.operations.map((operation): [string, Operation] => [`${operation.method} /api/v0${operation.path}`, operation])),
)
