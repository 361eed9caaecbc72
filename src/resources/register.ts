import type { FastifyInstance, RouteOptions } from 'fastify'
import { OPERATIONS, RESOURCES } from './index.js'
import { PUBLIC } from './manifest.js'
import type { Platform, Resource } from './resource.js'

function methodAndPath(route: RouteOptions): string {
  return `${Array.isArray(route.method) ? route.method.join(',') : route.method} ${route.url}`
}

/**
 * The onRoute hook that gives a route what its manifest says: its operationId in the document,
 * and the scope the authentication hook checks. A route the document shows must be registered
 * from an operation of a manifest of RESOURCES (`operation(manifest, operationId)`), at the
 * method and path the manifest gives it, or start-up stops. Hidden routes (the document itself,
 * /docs) need none; Fastify's automatic HEAD twins, and a hidden trailing-slash twin registered
 * from an operation, take its scope.
 */
export function applyManifest(route: RouteOptions): void {
  const schema = route.schema ?? {}
  const operation = route.config?.operation
  if (operation === undefined) {
    if (schema.hide === true || route.method === 'HEAD') return
    throw new Error(
      `route "${methodAndPath(route)}" is not an operation of any resource: add it to its resource's manifest.ts (src/resources/<name>/) and register it with app.route({ ...operation(manifest, operationId), schema, handler })`,
    )
  }
  // A HEAD twin answers as its GET; a trailing-slash twin as its path without the slash.
  const twinOf = { ...route, method: route.method === 'HEAD' ? 'GET' : route.method, url: route.url.replace(/(.)\/$/, '$1') }
  const declared = `${operation.method} /api/v0${operation.path}`
  if (OPERATIONS.get(declared) !== operation) {
    throw new Error(`route "${methodAndPath(route)}" is registered from ${operation.operationId}, which is not an operation of any resource of RESOURCES (src/resources/index.ts)`)
  }
  if (methodAndPath(route) !== declared && methodAndPath(twinOf) !== declared) {
    throw new Error(`route "${methodAndPath(route)}" is registered from ${operation.operationId}, which its manifest serves at "${declared}"`)
  }
  if (schema.operationId !== undefined && schema.operationId !== operation.operationId) {
    throw new Error(`route "${methodAndPath(route)}" sets its own operationId "${schema.operationId}": operationIds come from the manifests`)
  }
  route.config = { ...route.config, scope: operation.scope, ...(operation.idempotencyKey === 'required' ? { idempotencyKeyRequired: true } : {}) }
  // A copy: a schema object may be shared by several routes.
  if (schema.hide !== true && route.method !== 'HEAD') route.schema = { ...schema, operationId: operation.operationId, ...(operation.scope === PUBLIC ? { security: [] } : {}) }
}

/** What the app gives resources: what it made of the configuration, and every event type and scope of `resources`. */
function withEventTypes(given: Omit<Platform, 'eventTypes' | 'scopes'>, resources: readonly Resource[]): Platform {
  return { ...given, eventTypes: resources.flatMap((resource) => resource.manifest.eventTypes), scopes: resources.flatMap((resource) => resource.manifest.scopes) }
}

/** Refuses, in a context, routes whose operation is (or is not) public: a scoped route can't be served without authentication. */
function onlyRoutes(app: FastifyInstance, publicOnes: boolean): void {
  app.addHook('onRoute', (route) => {
    const scope = route.config?.scope
    if (scope === undefined) return
    if ((scope === PUBLIC) !== publicOnes) {
      throw new Error(`route "${methodAndPath(route)}" is registered ${publicOnes ? 'without' : 'with'} authentication, but its manifest says ${scope}`)
    }
  })
}

/**
 * Registers every resource of RESOURCES: its public routes as they are, the others behind
 * `authenticated` (the context that authenticates every request before it is routed on).
 */
export async function registerResources(
  api: FastifyInstance,
  authenticated: (register: (app: FastifyInstance) => Promise<void>) => Promise<void>,
  given: Omit<Platform, 'eventTypes' | 'scopes'>,
  resources: readonly Resource[] = RESOURCES,
): Promise<void> {
  const platform = withEventTypes(given, resources)
  const plugins = resources.map((resource) => resource.plugins(platform))
  await api.register(async (open) => {
    onlyRoutes(open, true)
    for (const { publicRoutes } of plugins) if (publicRoutes !== undefined) await open.register(publicRoutes)
  })
  await authenticated(async (app) => {
    onlyRoutes(app, false)
    for (const { routes } of plugins) if (routes !== undefined) await app.register(routes)
  })
}

/**
 * Registers every resource's pages at `app`'s root (outside /api/v0): pages are for people, not
 * API operations, so each must be hidden from the document; one that is not stops start-up.
 */
export async function registerPages(app: FastifyInstance, given: Omit<Platform, 'eventTypes' | 'scopes'>, resources: readonly Resource[] = RESOURCES): Promise<void> {
  const platform = withEventTypes(given, resources)
  await app.register(async (pages) => {
    pages.addHook('onRoute', (route) => {
      if (route.schema?.hide !== true) throw new Error(`page "${methodAndPath(route)}" must be hidden from the API document (schema: { hide: true })`)
    })
    for (const resource of resources) {
      const page = resource.plugins(platform).pages
      if (page !== undefined) await pages.register(page)
    }
  })
}
