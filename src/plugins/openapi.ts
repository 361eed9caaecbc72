import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { ErrorSchema } from '../schemas/common.js'

/**
 * Every operationId in the document, by "METHOD /path" as the route is registered (Fastify's
 * `:param` syntax). The names are the platform's published client's (its method names), in the
 * NestJS style `<resource>Controller<Action>` its generator derived them from, so a client
 * generated from this document has the same methods as the published one.
 */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'GET /api/v0/health/public': 'healthControllerPublicHealthCheckV0',
  'GET /api/v0/health': 'healthControllerCheckV0',

  'POST /api/v0/webhooks': 'webhookControllerCreate',
  'GET /api/v0/webhooks': 'webhookControllerFindAll',
  'GET /api/v0/webhooks/:id': 'webhookControllerFindOne',
  'PATCH /api/v0/webhooks/:id': 'webhookControllerUpdate',
  'DELETE /api/v0/webhooks/:id': 'webhookControllerRemove',
  'GET /api/v0/webhooks/:id/secret': 'webhookControllerGetSecret',
  'POST /api/v0/webhooks/:id/secret/rotate': 'webhookControllerRotateSecret',
  'GET /api/v0/webhooks/:id/deliveries': 'webhookControllerFindDeliveries',
  'GET /api/v0/webhooks/:id/deliveries/:deliveryId': 'webhookControllerFindDelivery',
  'POST /api/v0/webhooks/:id/deliveries/:deliveryId/retry': 'webhookControllerRetryDelivery',
  'POST /api/v0/webhooks/:id/test': 'webhookControllerSendTest',

  'POST /api/v0/customers': 'customerControllerCreate',
  'GET /api/v0/customers': 'customerControllerFindAll',
  'GET /api/v0/customers/:id': 'customerControllerFindOne',
  'PATCH /api/v0/customers/:id': 'customerControllerUpdate',

  'POST /api/v0/customers/:customerId/liquidation_addresses': 'liquidationAddressControllerCreateLiquidationAddress',
  'GET /api/v0/customers/:customerId/liquidation_addresses': 'liquidationAddressControllerGetLiquidationAddresses',
  'GET /api/v0/customers/:customerId/liquidation_addresses/:liquidationAddressId': 'liquidationAddressControllerGetLiquidationAddress',

  'POST /api/v0/taxes': 'taxControllerCreate',
  'GET /api/v0/taxes': 'taxControllerFindAll',
  'GET /api/v0/taxes/:id': 'taxControllerFindOne',
  'PUT /api/v0/taxes/:id': 'taxControllerUpdate',
  'DELETE /api/v0/taxes/:id': 'taxControllerRemove',
  'PUT /api/v0/taxes': 'taxControllerUpdateWithoutId',
  'DELETE /api/v0/taxes': 'taxControllerDeleteWithoutId',
}

/**
 * Names the route in the document, or refuses it (an Error that stops start-up): a route the
 * document shows must have its name here, so none can be added unnamed. Hidden routes (the
 * document itself, /docs) and Fastify's automatic HEAD twins (left out of the document) need none.
 */
function nameOperation(route: RouteOptions): void {
  const schema = route.schema ?? {}
  if (schema.hide === true || route.method === 'HEAD') return
  const methodAndPath = `${Array.isArray(route.method) ? route.method.join(',') : route.method} ${route.url}`
  const operationId = OPERATION_IDS[methodAndPath]
  if (operationId === undefined) {
    throw new Error(
      `OpenAPI: route "${methodAndPath}" is in the document but has no operationId: add it to OPERATION_IDS in src/plugins/openapi.ts (or hide the route with schema.hide)`,
    )
  }
  if (schema.operationId !== undefined && schema.operationId !== operationId) {
    throw new Error(`OpenAPI: route "${methodAndPath}" sets its own operationId "${schema.operationId}": operationIds are set only in OPERATION_IDS (src/plugins/openapi.ts)`)
  }
  // A copy: a schema object may be shared by several routes.
  route.schema = { ...schema, operationId }
}

/** The parts of the generated document this plugin completes (it is mutated in place). */
interface DocumentShape {
  paths?: Record<string, { post?: OperationShape } | undefined>
  components?: Record<string, unknown> & { parameters?: Record<string, unknown> }
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
  for (const pathItem of Object.values(document.paths ?? {})) {
    const post = pathItem?.post
    if (post === undefined || (Array.isArray(post.security) && post.security.length === 0)) continue
    post.parameters = [...(post.parameters ?? []), { $ref: '#/components/parameters/IdempotencyKey' }]
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
    },
  }
}

interface OperationShape {
  security?: unknown[]
  parameters?: unknown[]
  responses?: Record<string, unknown>
}

/**
 * The OpenAPI 3.1 document is generated from the route schemas (the same TypeBox objects that
 * validate requests and serialize responses); /docs serves an interactive reference for it.
 */
export const openapiPlugin = fp(
  async (app: FastifyInstance) => {
    app.addSchema(ErrorSchema)
    // Before any route is registered (this plugin comes before the routes), so every one is named.
    app.addHook('onRoute', nameOperation)
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Developer Platform API',
          version: '0',
          description: 'Customers, liquidation addresses, taxes and webhooks. Authenticate with the x-client-key and x-client-secret headers.',
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
        documentIdempotency(documentObject.openapiObject as unknown as DocumentShape)
        return documentObject.openapiObject
      },
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
      },
    })
    await app.register(swaggerUi, { routePrefix: '/docs' })
  },
  { name: 'openapi' },
)
