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

export type RedisState = 'ok' | 'error' | 'not configured'

export interface HealthRoutesOptions {
  redisState: () => Promise<RedisState>
}

/**
 * Readiness of each part. The database is required: when it does not answer, this route (like
 * every authenticated one) answers 503 "The database is unavailable". Redis is not: while it is
 * down the instance serves with per-instance rate limits, so it stays 200 and says "degraded".
 */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthRoutesOptions> = async (app, options) => {
  app.get(
    '/health',
    {
      schema: {
        tags: ['health'],
        summary: 'Readiness: the database and Redis answer (authenticated)',
        response: {
          200: Type.Object({
            status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
            database: Type.Literal('ok'),
            redis: Type.Union([Type.Literal('ok'), Type.Literal('error'), Type.Literal('not configured')]),
          }),
          ...errorResponses(401, 403, 429, 503),
        },
      },
    },
    async () => {
      const [, redis] = await Promise.all([sql`select 1`.execute(app.db), options.redisState()])
      return { status: redis === 'error' ? ('degraded' as const) : ('ok' as const), database: 'ok' as const, redis }
    },
  )
}
