import type { FastifyPluginAsync, FastifyPluginOptions } from 'fastify'
import type { TSchema } from 'typebox'
import type { Receiving } from '../chains/receiving.js'
import type { LivePayouts } from '../ledger/money-context.js'
import type { Config } from '../config.js'
import type { DomainSubscriptions } from '../events/hooks.js'
import type { ExchangeRates } from '../ledger/rates.js'
import type { Module } from '../modules/module.js'
import type { Manifest } from './manifest.js'

/** What the health check says of Redis. */
export type RedisState = 'ok' | 'error' | 'not configured'

/**
 * What the app gives every resource to configure itself from: the configuration, and what the
 * app makes once for all of them. A resource takes what it needs (its declaration's `configure`),
 * and its plugins are given that alone.
 */
export interface Platform {
  config: Config
  /** the exchange rates every conversion and rate read uses (EXCHANGE_RATE_MAX_AGE_SECONDS), the money scheduler's too */
  exchangeRates: ExchangeRates
  /**
   * The origin every URL put into an answer, an event or a page starts with (PUBLIC_URL, or this
   * machine on the port it listens on), never the request's Host: a caller can't choose it.
   */
  publicUrl: () => string
  /** whether Redis answers */
  redisState: () => Promise<RedisState>
  /** production: why a url's host may not receive webhooks (it resolves to a private address), or undefined */
  urlAddressProblem: ((url: string) => Promise<string | undefined>) | undefined
  /** live receiving addresses on the configured chains (src/chains/receiving.ts) */
  receiving: Receiving
  /** live payouts on the configured chains (src/chains/payouts.ts): whether one can be sent */
  payouts: LivePayouts
  /** every event type of the resources being registered */
  eventTypes: readonly string[]
  /** every scope a key may be given (the resources' manifests') */
  scopes: readonly string[]
}

/** A resource's plugins, given the options it configured: what src/resources/register.ts registers. */
export interface ResourcePlugins {
  /** routes behind authentication (every operation of the manifest that is not PUBLIC); none for a resource of pages only */
  routes?: FastifyPluginAsync
  /** routes called without credentials (the manifest's PUBLIC operations) */
  publicRoutes?: FastifyPluginAsync
  /**
   * HTML pages for people (the hosted checkout), not API operations: served at the server's root,
   * outside /api/v0, without credentials, and hidden from the OpenAPI document (`schema: { hide: true }`).
   */
  pages?: FastifyPluginAsync
}

/**
 * One resource: its manifest and its plugins, registered under /api/v0 by src/resources/register.ts,
 * and what it contributes as a module (its tables).
 */
export interface Resource extends Module {
  manifest: Manifest
  /** its plugins, configured from what the app gives (made by defineResource) */
  plugins: (platform: Platform) => ResourcePlugins
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

/** The plugins of a resource as it declares them, each taking the options its resource configures. */
export type PluginsTaking<Options extends FastifyPluginOptions> = { [Name in keyof ResourcePlugins]?: FastifyPluginAsync<Options> }

/**
 * A resource as its index.ts declares it: `configure` makes the options its plugins take (their
 * own type, declared beside them) from what the app gives.
 */
export type ResourceDeclaration<Options extends FastifyPluginOptions> = Omit<Resource, 'plugins'> & PluginsTaking<Options> & { configure: (platform: Platform) => Options }

/** A resource whose plugins take no options: it needs nothing of what the app gives. */
export type ResourceWithoutOptions = Omit<Resource, 'plugins'> & PluginsTaking<Record<never, never>>

/** A resource of its declaration. Its options are made once for the app, when the first of its plugins is registered. */
export function defineResource<Options extends FastifyPluginOptions>(declaration: ResourceDeclaration<Options>): Resource
export function defineResource(declaration: ResourceWithoutOptions): Resource
export function defineResource<Options extends FastifyPluginOptions>(declaration: ResourceDeclaration<Options> | ResourceWithoutOptions): Resource {
  return 'configure' in declaration ? configured(declaration) : configured({ ...declaration, configure: () => ({}) })
}

function configured<Options extends FastifyPluginOptions>(declaration: ResourceDeclaration<Options>): Resource {
  const { configure, routes, publicRoutes, pages, ...resource } = declaration
  return {
    ...resource,
    plugins: (platform) => {
      let options: Options | undefined
      const given = (plugin: FastifyPluginAsync<Options> | undefined): FastifyPluginAsync | undefined =>
        plugin === undefined ? undefined : async (app) => plugin(app, (options ??= configure(platform)))
      return { routes: given(routes), publicRoutes: given(publicRoutes), pages: given(pages) }
    },
  }
}
