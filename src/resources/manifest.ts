/**
 * What a resource declares about its operations: each one's method, path, operationId and the
 * scope a key needs for it, written here only. A route is registered from its operation
 * (`app.route({ ...operation(manifest, operationId), schema, handler })`), and
 * src/resources/register.ts gives it its scope and operationId from it, so a route cannot be
 * served without them.
 */

/** An operation any valid key may call, whatever its scopes (the authenticated health check). */
export const ANY_VALID_KEY = 'any valid key'
/** An operation called without credentials. */
export const PUBLIC = 'public'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

export interface Operation<ScopeName extends string = string, OperationId extends string = string> {
  method: HttpMethod
  /** under /api/v0, in Fastify's syntax (`/webhooks/:id`) */
  path: string
  /** the published client's method name, in its NestJS style `<resource>Controller<Action>` */
  operationId: OperationId
  /** required: a scope of the resource, or explicitly ANY_VALID_KEY or PUBLIC */
  scope: ScopeName | typeof ANY_VALID_KEY | typeof PUBLIC
  /** a POST whose Idempotency-Key header is required (400 without it), as the published client declares; optional elsewhere */
  idempotencyKey?: 'required'
}

/**
 * A row of docs/webhook-delivery.md's event table, which `npm run docs:catalogues` writes from
 * every manifest's rows (Markdown in each cell).
 */
export interface EventRow<EventType extends string = string> {
  /** the event types the row describes, in the manifest's order */
  types: readonly EventType[]
  /** what emits them */
  emittedBy: string
  /** what their `data` holds */
  data: string
}

export interface Manifest<ScopeName extends string = string, OperationId extends string = string, EventType extends string = string> {
  /** the resource's name: its folder under src/resources/ */
  name: string
  /** the scopes a key may be given for this resource, `<resource>:<action>` */
  scopes: readonly ScopeName[]
  /**
   * Its scopes a key has only when they are named (`keys create --scopes`), never by default: the
   * development key and a key created without --scopes have every other scope (DEFAULT_SCOPES).
   */
  optInScopes?: readonly NoInfer<ScopeName>[]
  /** the event types its changes emit, `<resource>.<action>` */
  eventTypes: readonly EventType[]
  /** the docs' rows of its event types: each type in exactly one (test/docs/catalogues.test.ts) */
  eventRows?: readonly EventRow<NoInfer<EventType>>[]
  operations: readonly Operation<ScopeName, OperationId>[]
}

/**
 * A manifest whose operations may name only its own scopes (checked by the compiler), and whose
 * operationIds `operation` accepts.
 */
export function defineManifest<const ScopeName extends `${string}:${string}`, const OperationId extends string, const EventType extends string>(
  manifest: Manifest<ScopeName, OperationId, EventType>,
): Manifest<ScopeName, OperationId, EventType> {
  return manifest
}

/** What a route is registered with, from its operation: spread into `app.route`. */
export interface OperationRoute {
  method: HttpMethod
  url: string
  config: { operation: Operation }
}

/**
 * The method and path of the manifest's operation `operationId`, and the operation itself for
 * the onRoute hook (src/resources/register.ts) to take its scope and operationId from.
 */
export function operation<OperationId extends string>(manifest: Manifest<string, OperationId>, operationId: NoInfer<OperationId>): OperationRoute {
  const declared = manifest.operations.find((candidate) => candidate.operationId === operationId)
  if (declared === undefined) throw new Error(`${manifest.name}'s manifest has no operation ${operationId}`)
  return { method: declared.method, url: declared.path, config: { operation: declared } }
}
