import { createHash } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib'
import swagger from '@fastify/swagger'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Type, type TSchema } from 'typebox'
import { KEY_IN_PROGRESS, KEY_REUSED } from '../idempotency/plugin.js'
import { DATABASE_UNAVAILABLE } from './error-handler.js'
import { OPERATIONS, RESOURCES } from '../resources/index.js'
import { ANY_VALID_KEY } from '../resources/manifest.js'
import type { Resource } from '../resources/resource.js'
import { ErrorSchema, Timestamp } from '../schemas/common.js'
import { REFERENCE_STYLE, renderReference, type ReferenceDocument } from './reference-page.js'

/** The parts of the generated document this plugin completes (it is mutated in place). */
interface DocumentShape {
  paths?: Record<string, Partial<Record<string, OperationShape>> | undefined>
  components?: Record<string, unknown> & { parameters?: Record<string, unknown>; schemas?: Record<string, unknown> }
  tags?: { name: string; description?: string }[]
  webhooks?: Record<string, unknown>
}

/**
 * The error body. Each error response of an operation gets an example of its own where the
 * message is known (errorExample); the schema's example is what any other shows.
 */
const DocumentedErrorSchema = Type.Object(ErrorSchema.properties, {
  $id: 'Error',
  description: 'The error body of every failed request',
  examples: [{ statusCode: 400, error: 'Bad Request', message: 'percentage must not be greater than 100' }],
})

interface ParameterShape {
  in?: string
  name?: string
  required?: boolean
  description?: string
  'x-message'?: string
  schema?: { format?: string; 'x-message'?: string }
}

interface ErrorOperationShape extends OperationShape {
  operationId?: string
  requestBody?: { content?: Record<string, { schema?: { required?: string[] } }> }
}

const ERROR_REF = '#/components/schemas/Error'

/** What an operation answers with `status`, when the message does not depend on the request's data; else undefined. */
function errorExample(operation: ErrorOperationShape, status: number): Record<string, unknown> | undefined {
  const body = (message: string, details?: string) => ({ statusCode: status, error: STATUS_CODES[status], message, ...(details === undefined ? {} : { details }) })
  const uuidParams = (operation.parameters ?? []).filter(
    (parameter): parameter is ParameterShape => typeof parameter === 'object' && parameter !== null && (parameter as ParameterShape).schema?.format === 'uuid',
  )
  const lastId = uuidParams.at(-1)
  switch (status) {
    case 400: {
      const invalidId = lastId?.schema?.['x-message']
      if (invalidId !== undefined) return body(invalidId)
      const required = operation.requestBody?.content?.['application/json']?.schema?.required?.[0]
      if (required !== undefined) return body(`${required} is required`)
      // A request without its required query parameters: each one named, as the validator names them.
      const requiredQuery = (operation.parameters ?? []).filter(
        (parameter): parameter is ParameterShape & { name: string } => typeof parameter === 'object' && parameter !== null && (parameter as ParameterShape).in === 'query' && (parameter as ParameterShape).required === true,
      )
      return requiredQuery.length === 0 ? undefined : body(requiredQuery.map((parameter) => `${parameter.name} is required`).join('; '))
    }
    case 401:
      return body('Invalid client app credentials', 'The client key or client secret is invalid')
    case 403: {
      const scope = [...OPERATIONS.values()].find((candidate) => candidate.operationId === operation.operationId)?.scope
      if (scope === undefined || scope === ANY_VALID_KEY) return body('API key is inactive', 'This API key has been deactivated')
      return body('Missing required scope', `This API key lacks the required scope: ${scope}`)
    }
    case 404: {
      // "webhook id (UUID)": the resource the last id names
      const resource = lastId?.description?.replace(/ id \(UUID\)$/, '')
      return resource === undefined ? undefined : body(`${resource.charAt(0).toUpperCase()}${resource.slice(1)} not found`)
    }
    case 409:
      return (operation.parameters ?? []).some((parameter) => JSON.stringify(parameter).includes('IdempotencyKey')) ? body(KEY_IN_PROGRESS) : undefined
    case 422:
      return body(KEY_REUSED)
    case 429:
      return body('Rate limit exceeded', 'This API key may make 1000 requests per hour; retry in 1712 seconds')
    case 503:
      // The routes that read an exchange rate answer 503 while no fresh one is loaded; every route while the database is down.
      return (operation.tags ?? []).some((tag) => tag === 'exchange rates' || tag === 'balances')
        ? body('No live eur to usd exchange rate is at most 3600 s old: none has been loaded', 'An operator loads rates with `devplatform rates load` or EXCHANGE_RATES_FILE; retry later')
        : body(DATABASE_UNAVAILABLE, 'Retry the request shortly')
    default:
      return undefined
  }
}

/** An example on each error response whose message is known, so the docs page shows what that status really answers. */
function documentErrorExamples(document: DocumentShape): void {
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(pathItem ?? {}) as ErrorOperationShape[]) {
      for (const [code, response] of Object.entries(operation.responses ?? {})) {
        const media = (response as { content?: Record<string, { schema?: { $ref?: string }; example?: unknown }> }).content?.['application/json']
        if (media?.schema?.$ref !== ERROR_REF) continue
        const example = errorExample(operation, Number(code))
        if (example !== undefined) media.example = example
      }
    }
  }
}

const ERROR_RESPONSE = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
})

/**
 * Every authenticated POST takes an Idempotency-Key (src/idempotency): the header and its two
 * answers are added here, in one place, rather than to each route's schema (a header schema would
 * also be validated, with the validator's messages instead of the plugin's).
 */
function documentIdempotency(document: DocumentShape): void {
  const required = new Set([...OPERATIONS.values()].filter((operation) => operation.idempotencyKey === 'required').map((operation) => operation.operationId))
  for (const pathItem of Object.values(document.paths ?? {})) {
    const post = pathItem?.post
    if (post === undefined || (Array.isArray(post.security) && post.security.length === 0)) continue
    const keyRequired = post.operationId !== undefined && required.has(post.operationId)
    post.parameters = [...(post.parameters ?? []), { $ref: `#/components/parameters/${keyRequired ? 'RequiredIdempotencyKey' : 'IdempotencyKey'}` }]
    post.responses = {
      ...post.responses,
      409: post.responses?.['409'] ?? ERROR_RESPONSE('Conflict (also: a request with this Idempotency-Key is still in progress)'),
      422: ERROR_RESPONSE('The Idempotency-Key was already used with a different request'),
    }
  }
  document.components = {
    ...document.components,
    parameters: {
      ...document.components?.parameters,
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Optional, 1-255 printable ASCII characters, scoped to the application. The same key with the same request within 24 hours replays the first response (with Idempotent-Replayed: true) and changes nothing; with a different request: 422; while the first is still running: 409.',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      },
      RequiredIdempotencyKey: {
        name: 'idempotency-key',
        in: 'header',
        required: true,
        description:
          'Required on this operation (400 without it), as the published client declares; 1-255 printable ASCII characters, scoped to the application, replayed as the optional Idempotency-Key is.',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      },
    },
  }
}

interface OperationShape {
  operationId?: string
  security?: unknown[]
  parameters?: unknown[]
  responses?: Record<string, unknown>
  tags?: string[]
}

/**
 * The tags in the order a user meets them: the health check, customers, their liquidation
 * addresses, webhooks to hear about them, taxes; then the money: the wallets that hold it, their
 * balances, the rates it converts at, the drains that move a deposit to its payout, transfers,
 * payment intents and test payments; then what is sold: products, invoices, payment links.
 * Tags not named here follow, in the order their first operation appears (the docs page lists the
 * document's declared tags first, then the others).
 */
export const TAG_ORDER: readonly { name: string; description: string }[] = [
  { name: 'health', description: 'Is the service up, and does the key work' },
  { name: 'customers', description: 'The people and businesses you pay out to' },
  { name: 'liquidation addresses', description: "Blockchain addresses that turn what a customer's address receives into a payout" },
  { name: 'webhooks', description: 'Where events are sent, their signing secrets and their delivery logs (the events themselves are under Webhooks, below)' },
  { name: 'events', description: "Every event the application's changes emitted, as its webhooks received them, newest first" },
  { name: 'taxes', description: 'Tax rates your applications apply' },
  { name: 'wallets', description: "The application's custodial wallets: one per chain, each holding USDC and EURC" },
  { name: 'balances', description: 'What the wallets hold, per currency and in US dollars' },
  { name: 'balance transactions', description: "Every movement of the application's money, with its fee: the wallets' and the developer fees collected" },
  { name: 'exchange rates', description: 'The rates between US dollars (USDC) and euros (EURC) that conversions use' },
  { name: 'drains', description: 'Deposits to a liquidation address and their way to its payout, with the receipt of each' },
  { name: 'transfers', description: "Money into a wallet from a bank or a chain, out of it to a bank account or a beneficiary, and between USDC and EURC" },
  { name: 'payment intents', description: "Requests for a customer to pay the application, by bank or in a stablecoin, settled into its wallet" },
  { name: 'test payments', description: 'Sandbox card payments that credit the sandbox wallet, and their refunds' },
  { name: 'products', description: 'What your applications sell, with their images' },
  { name: 'invoices', description: "Invoices of the application's products to its customers, with exact totals and their status" },
  { name: 'payment links', description: 'Links to a hosted checkout page where a customer pays' },
  { name: 'console', description: "Single-use links to the application's console: its money, payments and webhooks in pages" },
  { name: 'held', description: 'Money held in clearing for an operator: what is held and why, and retry, refund and release, each audited' },
]

/** The tags of TAG_ORDER the document's operations use, declared in that order with their descriptions. */
function documentTags(document: DocumentShape): void {
  const used = new Set(
    Object.values(document.paths ?? {}).flatMap((pathItem) => Object.values(pathItem ?? {}).flatMap((operation) => operation?.tags ?? [])),
  )
  document.tags = TAG_ORDER.filter((tag) => used.has(tag.name))
}

/** One event type as the document describes it: the resource that emits it, and the schema of its data (undefined: not declared). */
export interface EventDescription {
  type: string
  resource: string
  data: TSchema | undefined
}

/** Every event type of the resources, in their order, with the schema of its `data` each resource declares (Resource.events). */
export function eventDescriptions(resources: readonly Resource[]): EventDescription[] {
  return resources.flatMap((resource) =>
    resource.manifest.eventTypes.map((type) => ({ type, resource: resource.manifest.name, data: resource.events?.[type] })),
  )
}

/** What is wrong with the resources' event declarations, one line each: a type without a data schema, or a schema for a type the manifest does not list. */
export function eventDeclarationProblems(resources: readonly Resource[]): string[] {
  return resources.flatMap((resource) => {
    const { name, eventTypes } = resource.manifest
    const declared = Object.keys(resource.events ?? {})
    return [
      ...eventTypes
        .filter((type) => !declared.includes(type))
        .map(
          (type) =>
            `resource ${name} emits ${type} but declares no schema for its data: add events: { '${type}': <the schema of its data, usually the resource's response schema> } to its Resource (src/resources/${name}/index.ts)`,
        ),
      ...declared
        .filter((type) => !eventTypes.includes(type))
        .map((type) => `resource ${name} declares a data schema for ${type}, which its manifest's eventTypes does not list (src/resources/${name}/manifest.ts)`),
    ]
  })
}

/** The body of every delivery, whatever its event type. */
function eventEnvelope(types: readonly string[]) {
  return Type.Object(
    {
      id: Type.String({
        format: 'uuid',
        description: 'the event id, also sent as the webhook-id header: the same on every retry and for every webhook, so a receiver drops duplicates with it',
        examples: ['5d2f7c1e-8a4b-4e0f-9c3d-2b6a1f0e7d94'],
      }),
      type: Type.Enum([...types], { description: 'the event type, `<resource>.<action>`' }),
      created_at: Timestamp,
      data: Type.Unknown({ description: 'the resource as the API answered it for this change; its schema depends on the type (see each event)' }),
    },
    {
      description:
        'The body of every webhook delivery (Standard Webhooks): signed with the webhook-id, webhook-timestamp and webhook-signature headers; sent as a JWE (application/jose) to an encrypted webhook.',
    },
  )
}

const DELIVERY_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'the event id: the same on every retry',
    schema: { type: 'string', format: 'uuid', examples: ['5d2f7c1e-8a4b-4e0f-9c3d-2b6a1f0e7d94'] },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds of this attempt; refuse one more than 5 minutes away (replays)',
    schema: { type: 'string', pattern: '^[0-9]+$', examples: ['1795460713'] },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      '`v1,` + base64 of HMAC-SHA256 over `webhook-id.webhook-timestamp.body`, keyed with the signing secret; two space-separated signatures for 24 hours after a rotation (accept the request if one verifies)',
    schema: { type: 'string', examples: ['v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='] },
  },
]

/** The name of an event's entry in the document: `liquidation_address.created` → `liquidationAddressCreatedEvent`. */
export function eventOperationId(type: string): string {
  const words = type.split(/[._]/)
  return `${words.map((word, i) => (i === 0 ? word : `${word.charAt(0).toUpperCase()}${word.slice(1)}`)).join('')}Event`
}

/** A declared data schema as the document gives it: a reference to its component (added when no route uses it), else inline. */
function dataSchema(document: DocumentShape, schema: TSchema | undefined): unknown {
  if (schema === undefined) return { description: 'not described yet' }
  const plain = withoutIds(JSON.parse(JSON.stringify(schema)))
  const id = '$id' in schema ? schema.$id : undefined
  if (typeof id !== 'string') return plain
  const schemas = (document.components ??= {}).schemas ?? {}
  schemas[id] ??= plain
  document.components.schemas = schemas
  return { $ref: `#/components/schemas/${id}` }
}

/** What an event's data is called: its schema's `$id` (Customer, Tax, …). */
function dataName(schema: TSchema | undefined): string {
  const id = schema !== undefined && '$id' in schema ? schema.$id : undefined
  return typeof id === 'string' ? id : 'see its schema'
}

/** The schema without its `$id`s (the document names components by key). */
function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== '$id').map(([key, inner]) => [key, withoutIds(inner)]))
}

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type of the resources, each the POST a
 * webhook receives, with the envelope (component Event) and its `data` schema.
 */
function documentEvents(document: DocumentShape, resources: readonly Resource[]): void {
  const events = eventDescriptions(resources)
  const schemas = ((document.components ??= {}).schemas ??= {})
  schemas.Event = JSON.parse(JSON.stringify(eventEnvelope(events.map((event) => event.type))))
  document.webhooks = Object.fromEntries(
    events.map((event) => [
      event.type,
      {
        post: {
          operationId: eventOperationId(event.type),
          summary: `data: ${dataName(event.data)}`,
          description: `Sent to every active webhook of the application whose \`event_types\` is null or lists \`${event.type}\`, signed (Standard Webhooks) and retried until it is answered 2xx or its schedule ends.`,
          // Sent to the receiver, which checks the signature: no API key.
          security: [],
          parameters: DELIVERY_HEADERS,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  allOf: [
                    { $ref: '#/components/schemas/Event' },
                    { type: 'object', properties: { type: { const: event.type, examples: [event.type] }, data: dataSchema(document, event.data) } },
                  ],
                },
              },
              'application/jose': {
                schema: {
                  type: 'string',
                  description: 'to an encrypted webhook: the same body as a JWE compact serialization (dir, A256GCM; key: HKDF-SHA256 of the signing secret)',
                },
              },
            },
          },
          responses: {
            200: { description: 'Any 2xx within WEBHOOK_TIMEOUT_MS: delivered (the first 20 KB of the body is kept in the delivery log)' },
            410: { description: 'Gone: the webhook is deactivated and its pending deliveries canceled' },
            default: { description: 'Any other answer, none in time, or a redirect: the attempt failed and the delivery is retried on its schedule' },
          },
        },
      },
    ]),
  )
}

/** The tab's icon: the project's initials, not the framework's logo. */
const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1b1b1b"/><text x="16" y="22" font-family="sans-serif" font-size="16" font-weight="700" fill="#fff" text-anchor="middle">dp</text></svg>`

/** The stylesheet of the docs page, allowed by its hash: the page runs no script and loads nothing else but its icon. */
const REFERENCE_STYLE_HASH = createHash('sha256').update(REFERENCE_STYLE).digest('base64')

/**
 * The docs page, its icon and the document: no script at all, the page's own stylesheet by its
 * hash, its icon from this origin, no form. No other site may frame it (clickjacking);
 * X-Frame-Options says so to browsers without frame-ancestors.
 */
const DOCS_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': `default-src 'none'; style-src 'sha256-${REFERENCE_STYLE_HASH}'; img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
}

/** What the API covers, in the order of its tags; each guide in docs/ has its operations' examples. */
const DOCUMENT_DESCRIPTION =
  'Customers and their liquidation addresses, webhooks and taxes; the money: wallets, balances, balance transactions, exchange rates, deposits and their drains, receiving addresses, transfers, payment intents and test payments; what is sold: products, invoices and payment links; the events of every change; the branding of the hosted pages; links to the application’s console; and operators’ tools for held money. Authenticate with the x-client-key and x-client-secret headers.'

/** A body kept as sent and in each encoding a browser takes, with its validator. */
interface Encoded {
  type: string
  identity: Buffer
  gzip: Buffer
  br: Buffer
  etag: string
}

function encode(body: Buffer, type: string): Encoded {
  return {
    type,
    identity: body,
    gzip: gzipSync(body, { level: 9 }),
    // Quality 9: within a few percent of 11's size at a small part of its time, paid once per body.
    br: brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 9, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  }
}

/** The encodings of Accept-Encoding with a non-zero weight. */
function acceptedEncodings(header: string | undefined): Set<string> {
  const accepted = new Set<string>()
  for (const part of (header ?? '').split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';')
    const weight = params.map((param) => /^\s*q=([0-9.]+)\s*$/.exec(param)?.[1]).find((value) => value !== undefined)
    if (name !== '' && (weight === undefined || Number(weight) > 0)) accepted.add(name)
  }
  return accepted
}

/** Sends `encoded` in the smallest encoding the request accepts (304 when the client has it already). */
function sendEncoded(request: FastifyRequest, reply: FastifyReply, encoded: Encoded, cacheControl: string): FastifyReply {
  reply.header('content-type', encoded.type).header('etag', encoded.etag).header('cache-control', cacheControl).header('vary', 'accept-encoding')
  if (request.headers['if-none-match'] === encoded.etag) return reply.code(304).send()
  const accepted = acceptedEncodings(request.headers['accept-encoding'])
  const encoding = accepted.has('br') ? 'br' : accepted.has('gzip') ? 'gzip' : undefined
  if (encoding !== undefined) reply.header('content-encoding', encoding)
  return reply.send(encoding === undefined ? encoded.identity : encoded[encoding])
}

/** Each app's document, serialized and compressed once (the routes, and so the document, are fixed once the server is ready). */
const DOCUMENTS = new WeakMap<FastifyInstance, Encoded>()

function cachedDocument(app: FastifyInstance): Encoded {
  let cached = DOCUMENTS.get(app)
  if (cached === undefined) {
    cached = encode(Buffer.from(JSON.stringify(app.swagger())), 'application/json; charset=utf-8')
    DOCUMENTS.set(app, cached)
  }
  return cached
}

/** Answers the document to GET /api/v0/openapi.json, as /docs/json does. */
export function serveDocument(app: FastifyInstance): (request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  return (request, reply) => sendEncoded(request, reply, cachedDocument(app), 'no-cache')
}

/** Where the reference links the raw document. */
const DOCUMENT_URL = '/api/v0/openapi.json'
const ICON_URL = '/docs/favicon.svg'

/** The reference page rendered from the document once, on its first request, and compressed. */
function referencePage(app: FastifyInstance): () => Encoded {
  let cached: Encoded | undefined
  const scopes = new Map([...OPERATIONS.values()].map((operation) => [operation.operationId, operation.scope]))
  return () =>
    (cached ??= encode(
      Buffer.from(
        renderReference(JSON.parse(cachedDocument(app).identity.toString('utf8')) as ReferenceDocument, {
          documentUrl: DOCUMENT_URL,
          iconUrl: ICON_URL,
          style: REFERENCE_STYLE,
          scopeOf: (operationId) => {
            const scope = scopes.get(operationId)
            return scope === undefined || scope === ANY_VALID_KEY ? undefined : scope
          },
        }),
      ),
      'text/html; charset=utf-8',
    ))
}

/**
 * The OpenAPI 3.1 document is generated from the route schemas (the same TypeBox objects that
 * validate requests and serialize responses); /docs serves an interactive reference for it.
 */
export const openapiPlugin = fp(
  async (app: FastifyInstance) => {
    app.addSchema(DocumentedErrorSchema)
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Developer Platform API',
          version: '0',
          description: DOCUMENT_DESCRIPTION,
          license: { name: 'MIT', identifier: 'MIT' },
        },
        // Relative: the instance that serves this document (self-hosted, so no fixed host).
        servers: [{ url: '/', description: 'This devplatform instance' }],
        components: {
          securitySchemes: {
            clientKey: { type: 'apiKey', in: 'header', name: 'x-client-key' },
            clientSecret: { type: 'apiKey', in: 'header', name: 'x-client-secret' },
          },
        },
        security: [{ clientKey: [], clientSecret: [] }],
      },
      transformObject: (documentObject) => {
        if (!('openapiObject' in documentObject)) return documentObject.swaggerObject
        const document = documentObject.openapiObject as unknown as DocumentShape
        documentIdempotency(document)
        documentErrorExamples(document)
        documentTags(document)
        documentEvents(document, RESOURCES)
        return documentObject.openapiObject
      },
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
      },
    })
    // In a context of its own, so the docs' headers go on the docs' answers (page, icon, document) and no others.
    await app.register(async (docs) => {
      docs.addHook('onSend', (_request, reply, payload, done) => {
        reply.headers(DOCS_HEADERS)
        done(null, payload)
      })
      const page = referencePage(app)
      for (const path of ['/docs', '/docs/']) docs.get(path, { schema: { hide: true } }, (request, reply) => sendEncoded(request, reply, page(), 'no-cache'))
      docs.get('/docs/json', { schema: { hide: true } }, serveDocument(app))
      // Browsers ask for /favicon.ico on pages without an icon link (the JSON document opened in a tab, the hosted pages).
      for (const path of [ICON_URL, '/favicon.ico']) {
        docs.get(path, { schema: { hide: true } }, async (_request, reply) =>
          reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON_SVG),
        )
      }
    })
  },
  { name: 'openapi' },
)
