import { randomBytes } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { callerOf } from '../../auth/authenticate.js'
import { toWebhook } from './objects.js'
import { WebhooksRepository } from './repository.js'
import { InvalidRequest, NotFound } from '../../errors.js'
import { errorResponses, namesAField } from '../../schemas/common.js'
import {
  CreatedWebhookSchema,
  ListWebhooksQuery,
  RotateWebhookSecretBody,
  WebhookParams,
  webhookBodies,
  type Webhook,
  WebhookSchema,
  WebhookSecretSchema,
} from './schemas.js'
import { Type } from 'typebox'
import { webhookDeliveryRoutes } from './delivery-routes.js'
import { operation } from '../manifest.js'
import { webhooksManifest } from './manifest.js'

const NOT_FOUND = 'Webhook not found'

/** Standard Webhooks secret format: whsec_ + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** The webhook as it is now, inside the transaction that changed it. */
async function reread(webhooks: WebhooksRepository, appId: string, id: string): Promise<Webhook> {
  const row = await webhooks.find(appId, id)
  if (row === undefined) throw new Error(`webhook ${id} vanished inside its own transaction`)
  return toWebhook(row)
}

/**
 * What is wrong with a body's `event_types` list, naming each type at fault (every unknown type,
 * every repeat), or undefined. Only a list of strings within its size is looked at: anything else
 * is left to the schema (wrong types, too many items), whose keywords say the same rule in
 * generic words.
 */
export function eventTypesProblem(body: unknown, catalogue: readonly string[]): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const list: unknown = (body as Record<string, unknown>).event_types
  if (!Array.isArray(list) || list.length > catalogue.length || !list.every((type) => typeof type === 'string')) return undefined
  if (list.length === 0) {
    return 'event_types must list at least one event type: leave it out or send null to receive every event type (to receive none, set isActive to false)'
  }
  const problems: string[] = []
  const seen = new Set<string>()
  for (const [index, type] of (list as string[]).entries()) {
    if (!catalogue.includes(type)) problems.push(`event_types[${index}] is not an event type: ${JSON.stringify(type)}`)
    else if (seen.has(type)) problems.push(`event_types[${index}] lists ${JSON.stringify(type)} again: list each event type once`)
    seen.add(type)
  }
  if (problems.length === 0) return undefined
  const unknown = problems.some((problem) => problem.includes('is not an event type'))
  return `${problems.join('; ')}${unknown ? ` (event types: ${catalogue.join(', ')})` : ''}`
}

export interface WebhookRoutesOptions {
  /** production: why a url's host may not receive webhooks (it resolves to a private address), or undefined */
  urlAddressProblem?: ((url: string) => Promise<string | undefined>) | undefined
  /** every event type a webhook may list (EVENT_TYPES, derived from RESOURCES) */
  eventTypes: readonly string[]
}

export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRoutesOptions> = async (app, options) => {
  const webhooks = new WebhooksRepository(app.db)
  const bodies = webhookBodies(options.eventTypes)
  /** preValidation of POST and PATCH: an `event_types` problem is answered in its own words before the schema runs. */
  const checkEventTypes = async (request: FastifyRequest): Promise<void> => {
    const problem = eventTypesProblem(request.body, options.eventTypes)
    if (problem !== undefined) throw new InvalidRequest(problem)
  }
  await app.register(webhookDeliveryRoutes)

  async function urlGuard(url: string): Promise<void> {
    const problem = await options.urlAddressProblem?.(url)
    if (problem !== undefined) throw new InvalidRequest(problem)
  }

  app.route({
    ...operation(webhooksManifest, 'webhookControllerCreate'),
    schema: {
      tags: ['webhooks'],
      summary: 'Create a webhook',
      body: bodies.create,
      response: { 201: CreatedWebhookSchema, ...errorResponses(400, 401, 403, 429) },
    },
    preValidation: checkEventTypes,
    handler: async (request, reply) => {
      const { appId } = callerOf(request)
      const body = request.body
      await urlGuard(body.url)
      const signingSecret = body.signing_secret ?? generateSigningSecret()
      const webhook = await app.transact(async (tx) => {
        const created = toWebhook(
          await new WebhooksRepository(tx.db, tx.unit).create(appId, {
            name: body.name,
            url: body.url,
            isActive: body.isActive ?? true,
            encrypted: body.encrypted ?? false,
            signingSecret,
            eventTypes: body.event_types ?? null,
          }),
        )
        await tx.events.emit(appId, 'webhook.created', created)
        // Active (and listing webhook.created, or listing nothing), so it was sent its own
        // webhook.created: answer with that counted.
        return reread(new WebhooksRepository(tx.db, tx.unit), appId, created.id)
      })
      // A generated secret is shown this once; a secret the caller chose is never echoed.
      return reply.code(201).send(body.signing_secret === undefined ? { ...webhook, signing_secret: signingSecret } : webhook)
    },
  })

  app.route({
    ...operation(webhooksManifest, 'webhookControllerFindAll'),
    schema: {
      tags: ['webhooks'],
      summary: "List the application's webhooks",
      querystring: ListWebhooksQuery,
      response: { 200: Type.Array(WebhookSchema), ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request) => {
      const rows = await webhooks.list(callerOf(request).appId, { skip: request.query.skip ?? 0, take: request.query.take ?? 10 })
      return rows.map(toWebhook)
    },
  })

  app.route({
    ...operation(webhooksManifest, 'webhookControllerFindOne'),
    schema: {
      tags: ['webhooks'],
      summary: 'Get a webhook',
      params: WebhookParams,
      response: { 200: WebhookSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const row = await webhooks.find(callerOf(request).appId, request.params.id)
      if (row === undefined) throw new NotFound(NOT_FOUND)
      return toWebhook(row)
    },
  })

  app.route({
    ...operation(webhooksManifest, 'webhookControllerUpdate'),
    schema: {
      tags: ['webhooks'],
      summary: 'Update a webhook',
      params: WebhookParams,
      body: bodies.update,
      response: { 200: WebhookSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    preValidation: checkEventTypes,
    handler: async (request) => {
      const { appId } = callerOf(request)
      const body = request.body
      if (body.url !== undefined) await urlGuard(body.url)
      const webhook = await app.transact(async (tx) => {
        const row = await new WebhooksRepository(tx.db, tx.unit).update(appId, request.params.id, {
          name: body.name,
          url: body.url,
          isActive: body.isActive,
          encrypted: body.encrypted,
          signingSecret: body.signing_secret,
          eventTypes: body.event_types,
        })
        if (row === undefined) throw new NotFound(NOT_FOUND)
        const updated = toWebhook(row)
        if (!namesAField(body)) return updated
        await tx.events.emit(appId, 'webhook.updated', updated)
        return reread(new WebhooksRepository(tx.db, tx.unit), appId, updated.id)
      })
      return webhook
    },
  })

  app.route({
    ...operation(webhooksManifest, 'webhookControllerRemove'),
    schema: {
      tags: ['webhooks'],
      summary: 'Delete a webhook',
      description:
        'Permanently deletes the webhook and returns it. Deliveries to it stop at once; its delivery history and statistics stay stored for audit.',
      params: WebhookParams,
      response: { 200: WebhookSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      const webhook = await app.transact(async (tx) => {
        const row = await new WebhooksRepository(tx.db, tx.unit).delete(appId, request.params.id)
        if (row === undefined) throw new NotFound(NOT_FOUND)
        return toWebhook(row)
      })
      // Committed: its pending deliveries are canceled, and the unit of work has aborted its
      // attempts on the wire in this process (and told other processes) before this answer.
      return webhook
    },
  })

  app.route({
    ...operation(webhooksManifest, 'webhookControllerGetSecret'),
    schema: {
      tags: ['webhooks'],
      summary: "Get a webhook's signing secret",
      description: 'The secret deliveries are signed with (Standard Webhooks). The webhook object never carries it.',
      params: WebhookParams,
      response: { 200: WebhookSecretSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const secret = await webhooks.secretOf(callerOf(request).appId, request.params.id)
      if (secret === undefined) throw new NotFound(NOT_FOUND)
      return { signing_secret: secret }
    },
  })

  app.route({
    ...operation(webhooksManifest, 'webhookControllerRotateSecret'),
    schema: {
      tags: ['webhooks'],
      summary: "Rotate a webhook's signing secret",
      description:
        'Sets a new signing secret (the one given, or a generated one) and answers it. For 24 hours each delivery carries two signatures in webhook-signature, `v1,<new> v1,<old>`, so receivers can switch without losing a delivery.',
      params: WebhookParams,
      body: RotateWebhookSecretBody,
      response: { 200: WebhookSecretSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    // The body is optional: no body is the same as {}.
    preValidation: async (request) => {
      request.body ??= {}
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      const secret = request.body.signing_secret ?? generateSigningSecret()
      await app.transact(async (tx) => {
        const row = await new WebhooksRepository(tx.db, tx.unit).rotateSecret(appId, request.params.id, secret)
        if (row === undefined) throw new NotFound(NOT_FOUND)
        await tx.events.emit(appId, 'webhook.updated', toWebhook(row))
      })
      return { signing_secret: secret }
    },
  })
}
