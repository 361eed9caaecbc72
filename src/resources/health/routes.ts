import type { RedisState } from '../resource.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { sql } from 'kysely'
import { Type } from 'typebox'
import { isDatabaseUnavailable } from '../../db/errors.js'
import { nowIso } from '../../db/time.js'
import { Incident } from '../../incident.js'
import { DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE } from '../../http/error-handler.js'
import { errorResponses, Timestamp } from '../../schemas/common.js'
import { VERSION } from '../../version.js'
import { operation } from '../manifest.js'
import { healthManifest } from './manifest.js'

const version = Type.String({ description: 'the server version', examples: [VERSION] })

/** The published client's public health model. */
export const PublicHealthSchema = Type.Object(
  { status: Type.Literal('ok'), timestamp: Timestamp, version },
  { $id: 'PublicHealth' },
)

/** The published client's authenticated health model. */
export const HealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('error')]),
    timestamp: Timestamp,
    version,
    database: Type.Union([Type.Literal('connected'), Type.Literal('error')]),
    message: Type.String({ examples: ['Service is up and running'] }),
    authenticated: Type.Boolean({ description: 'false only when the database could not be reached to check the key' }),
  },
  { $id: 'Health' },
)

/** Liveness: answers while the process runs, whatever the database does. */
export const publicHealthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.route({
    ...operation(healthManifest, 'healthControllerPublicHealthCheckV0'),
    schema: {
      tags: ['health'],
      summary: 'Liveness, without authentication',
      description: 'Answers as long as the process serves requests; it does not touch the database.',
      response: { 200: PublicHealthSchema },
    },
    handler: async () => ({ status: 'ok' as const, timestamp: nowIso(), version: VERSION }),
  })
}

export interface HealthRoutesOptions {
  redisState: () => Promise<RedisState>
}

const UP = 'Service is up and running'
export const REDIS_DEGRADED = 'Redis is degraded (not answering): rate limits are counted per instance'

/**
 * Readiness. The database is required: when it does not answer (here, or already while the key
 * was being checked) the answer is 503 in this route's own shape, `status: "error"`. Redis is
 * not: while it is down the instance serves with per-instance rate limits, so the answer stays
 * 200 and the message says so.
 */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthRoutesOptions> = async (app, options) => {
  // Probes repeat every few seconds through an outage: logged when it starts and once a minute.
  const outage = new Incident()
  app.route({
    ...operation(healthManifest, 'healthControllerCheckV0'),
    schema: {
      tags: ['health'],
      summary: 'Readiness: the database answers (authenticated)',
      response: { 200: HealthSchema, 503: HealthSchema, ...errorResponses(401, 403, 429) },
    },
    // Errors of this route, its authentication included: a database fault answers in the health shape.
    errorHandler: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      if (!isDatabaseUnavailable(error)) throw error
      const report = outage.failed()
      if (report !== undefined) request.log.warn({ err: error, unlogged: report.unlogged }, 'health: database unavailable')
      return reply
        .code(503)
        .header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS))
        .send({
          status: 'error' as const,
          timestamp: nowIso(),
          version: VERSION,
          database: 'error' as const,
          message: DATABASE_UNAVAILABLE,
          authenticated: request.auth !== null,
        })
    },
    handler: async () => {
      const [, redis] = await Promise.all([sql`select 1`.execute(app.db), options.redisState()])
      const ended = outage.ended()
      if (ended !== undefined) app.log.info(ended, 'health: database answers again')
      return {
        status: 'ok' as const,
        timestamp: nowIso(),
        version: VERSION,
        database: 'connected' as const,
        message: redis === 'error' ? `${UP}; ${REDIS_DEGRADED}` : UP,
        authenticated: true,
      }
    },
  })
}
