import type { FastifyPluginAsync } from 'fastify'
import type { TSchema } from 'typebox'
import type { DomainSubscriptions } from '../events/hooks.js'
import type { ExchangeRates } from '../ledger/rates.js'
import type { DrainTimings } from './drains/lifecycle.js'
import type { ImageStore } from './products/image-store.js'
import type { Module } from '../modules/module.js'
import type { Manifest } from './manifest.js'

/** What the health check says of Redis. */
export type RedisState = 'ok' | 'error' | 'not configured'

/** What the app hands every resource's routes: the parts that depend on configuration. */
export interface ResourceOptions {
  /** production: why a url's host may not receive webhooks (it resolves to a private address), or undefined */
  urlAddressProblem: ((url: string) => Promise<string | undefined>) | undefined
  /** whether Redis answers, for the health check */
  redisState: () => Promise<RedisState>
  /** every event type of the resources being registered (a webhook's event_types choose among them) */
  eventTypes: readonly string[]
  /** where product images are stored (PRODUCT_IMAGES_DIR) */
  productImages: ImageStore
  /** the exchange rates every conversion and rate read uses (EXCHANGE_RATE_MAX_AGE_SECONDS) */
  exchangeRates: ExchangeRates
  /** how long each step of a drain waits, by rail (DRAIN_DELAY_*_MS) */
  drainTimings: DrainTimings
  /**
   * The origin every URL put into an answer, an event or a page starts with (PUBLIC_URL, or this
   * machine on the port it listens on), never the request's Host: a caller can't choose it.
   */
  publicUrl: () => string
}

/**
 * One resource: its manifest and its routes, registered under /api/v0 by src/resources/register.ts,
 * and what it contributes as a module (its tables).
 */
export interface Resource extends Module {
  manifest: Manifest
  /** routes behind authentication (every operation of the manifest that is not PUBLIC); none for a resource of pages only */
  routes?: FastifyPluginAsync<ResourceOptions>
  /** routes called without credentials (the manifest's PUBLIC operations) */
  publicRoutes?: FastifyPluginAsync<ResourceOptions>
  /**
   * HTML pages for people (the hosted checkout), not API operations: served at the server's root,
   * outside /api/v0, without credentials, and hidden from the OpenAPI document (`schema: { hide: true }`).
   */
  pages?: FastifyPluginAsync<ResourceOptions>
  /**
   * The schema of each emitted event's `data`, by event type: one entry for every type of the
   * manifest's eventTypes, usually the resource's response schema (`{ 'tax.created': TaxSchema }`).
   * The OpenAPI document's `webhooks` section is built from it; test/openapi/events.test.ts fails
   * for an event type without one.
   */
  events?: Readonly<Record<string, TSchema>>
  /**
   * The domain events of other modules this one acts on, with its handler of each
   * (`{ 'transfer.funds_arrived': settleCheckoutPayment }`): run inside the publisher's
   * transaction, so a module changes another's data without the other importing it.
   */
  subscriptions?: DomainSubscriptions
}
