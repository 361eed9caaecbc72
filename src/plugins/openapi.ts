import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ErrorSchema } from '../schemas/common.js'

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
        },
        components: {
          securitySchemes: {
            clientKey: { type: 'apiKey', in: 'header', name: 'x-client-key' },
            clientSecret: { type: 'apiKey', in: 'header', name: 'x-client-secret' },
          },
        },
        security: [{ clientKey: [], clientSecret: [] }],
      },
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
      },
    })
    await app.register(swaggerUi, { routePrefix: '/docs' })
  },
  { name: 'openapi' },
)
