import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { callerOf } from '../../auth/authenticate.js'
import type { MoneyContext } from '../../ledger/money-context.js'
import { errorResponses } from '../../schemas/common.js'
import { operation } from '../manifest.js'
import { consoleManifest } from './manifest.js'
import { ConsoleLinkSchema, CreateConsoleLinkBody } from './schemas.js'
import { createConsoleLink, DEFAULT_LINK_TTL_SECONDS, DEFAULT_ROLE, ttlSecondsOf } from './sessions.js'

export interface ConsoleOptions {
  publicUrl: () => string
  /** every scope a key may be given: what the API-keys page offers */
  scopes: readonly string[]
  /** what the held-money page's actions move money with (src/resources/held/) */
  money: MoneyContext
}

export const consoleRoutes: FastifyPluginAsyncTypebox<ConsoleOptions> = async (app, options) => {
  app.route({
    ...operation(consoleManifest, 'consoleControllerCreateLink'),
    schema: {
      tags: ['console'],
      summary: "A single-use link to the application's console",
      description:
        "The link opens one console session (docs/console.md) for the key's application, once, within its ttl; its token is stored only as a digest, so the answer is the only place it is shown. Needs console:link, which a key has only when it is named.",
      body: CreateConsoleLinkBody,
      response: { 201: ConsoleLinkSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request, reply) => {
      const { appId } = callerOf(request)
      const body = request.body ?? {}
      const ttlSeconds = body.ttl === undefined ? DEFAULT_LINK_TTL_SECONDS : ttlSecondsOf(body.ttl)
      return reply.code(201).send(await createConsoleLink(app.db, { appId, role: body.role ?? DEFAULT_ROLE, ttlSeconds, publicUrl: options.publicUrl() }))
    },
  })
}
