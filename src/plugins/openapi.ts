import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ErrorSchema } from '../schemas/common.js'

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
