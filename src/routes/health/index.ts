import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sql } from 'kysely'
import { Type } from 'typebox'
import { errorResponses } from '../../schemas/common.js'

const HealthSchema = Type.Object({ status: Type.Literal('ok') })

export const publicHealthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/health/public',
    { schema: { tags: ['health'], summary: 'Liveness, without authentication', security: [], response: { 200: HealthSchema } } },
    async () => ({ status: 'ok' as const }),
  )
}

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/health',
    {
      schema: {
        tags: ['health'],
        summary: 'Readiness: the database answers (authenticated)',
        response: {
          200: Type.Object({ status: Type.Literal('ok'), database: Type.Literal('ok') }),
          ...errorResponses(401, 403, 429),
        },
      },
    },
    async () => {
      await sql`select 1`.execute(app.db)
      return { status: 'ok' as const, database: 'ok' as const }
    },
  )
}
