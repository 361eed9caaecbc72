/**
 * What a resource declares about its operations: each one's method, path, operationId and the
 * scope a key needs for it. The route code states none of these: they are taken from here when
 * the route is registered (src/resources/register.ts), so a route cannot be served without them.
 */

/** An operation any valid key may call, whatever its scopes (the authenticated health check). */
export const ANY_VALID_KEY = 'any valid key'
/** An operation called without credentials. */
export const PUBLIC = 'public'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

export interface Operation<ScopeName extends string = string> {
  method: HttpMethod
  /** under /api/v0, in Fastify's syntax (`/webhooks/:id`) */
  path: string
  /** the published client's method name, in its NestJS style `<resource>Controller<Action>` */
  operationId: string
  /** required: a scope of the resource, or explicitly ANY_VALID_KEY or PUBLIC */
  scope: ScopeName | typeof ANY_VALID_KEY | typeof PUBLIC
  /** a POST whose Idempotency-Key header is required (400 without it), as the published client declares; optional elsewhere */
  idempotencyKey?: 'required'
}

export interface Manifest<ScopeName extends string = string> {
  /** the resource's name: its folder under src/resources/ */
  name: string
  /** the scopes a key may be given for this resource, `<resource>:<action>` */
  scopes: readonly ScopeName[]
  /** the event types its changes emit, `<resource>.<action>` */
  eventTypes: readonly string[]
  operations: readonly Operation<ScopeName>[]
}

/** A manifest whose operations may name only its own scopes (checked by the compiler). */
export function defineManifest<const ScopeName extends `${string}:${string}`>(manifest: Manifest<ScopeName>): Manifest<ScopeName> {
  return manifest
}
