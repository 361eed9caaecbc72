import { randomBytes } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { callerOf } from '../../auth/authenticate.js'
import { toWebhook } from '../../db/repositories/webhooks.js'
import { ApiError } from '../../errors.js'
import { errorResponses } from '../../schemas/common.js'
import {
  CreatedWebhookSchema,
  CreateWebhookBody,
  ListWebhooksQuery,
  UpdateWebhookBody,
  WebhookParams,
  WebhookSchema,
} from '../../schemas/webhooks.js'
import { Type } from 'typebox'

const NOT_FOUND = 'Webhook not found'

/** Standard Webhooks secret format: whsec_ + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const webhooks = app.repos.webhooks

  app.post(
    '/webhooks',
    {
      config: { scope: 'webhook:create' },
      schema: {
        tags: ['webhooks'],
        summary: 'Create a webhook',
        body: CreateWebhookBody,
        response: { 201: CreatedWebhookSchema, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const { appId } = callerOf(request)
      const body = request.body
      const signingSecret = body.signing_secret ?? generateSigningSecret()
      const row = await webhooks.create(appId, {
        name: body.name,
        url: body.url,
        isActive: body.isActive ?? true,
        encrypted: body.encrypted ?? false,
        signingSecret,
      })
      // A generated secret is shown this once; a secret the caller chose is never echoed.
      const created = body.signing_secret === undefined ? { ...toWebhook(row), signing_secret: signingSecret } : toWebhook(row)
      return reply.code(201).send(created)
    },
  )

  app.get(
    '/webhooks',
    {
      config: { scope: 'webhook:read' },
      schema: {
        tags: ['webhooks'],
        summary: "List the application's webhooks",
        querystring: ListWebhooksQuery,
        response: { 200: Type.Array(WebhookSchema), ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => {
      const rows = await webhooks.list(callerOf(request).appId, { skip: request.query.skip ?? 0, take: request.query.take ?? 10 })
      return rows.map(toWebhook)
    },
  )

  app.get(
    '/webhooks/:id',
    {
      config: { scope: 'webhook:read' },
      schema: {
        tags: ['webhooks'],
        summary: 'Get a webhook',
        params: WebhookParams,
        response: { 200: WebhookSchema, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const row = await webhooks.find(callerOf(request).appId, request.params.id)
      if (row === undefined) throw ApiError.notFound(NOT_FOUND)
      return toWebhook(row)
    },
  )

  app.patch(
    '/webhooks/:id',
    {
      config: { scope: 'webhook:update' },
      schema: {
        tags: ['webhooks'],
        summary: 'Update a webhook',
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookSchema, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const body = request.body
      const row = await webhooks.update(callerOf(request).appId, request.params.id, {
        name: body.name,
        url: body.url,
        isActive: body.isActive,
        encrypted: body.encrypted,
        signingSecret: body.signing_secret,
      })
      if (row === undefined) throw ApiError.notFound(NOT_FOUND)
      return toWebhook(row)
    },
  )

  app.delete(
    '/webhooks/:id',
    {
      config: { scope: 'webhook:delete' },
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook',
        description:
          'Permanently deletes the webhook and returns it. Deliveries to it stop at once; its delivery history and statistics stay stored for audit.',
        params: WebhookParams,
        response: { 200: WebhookSchema, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const row = await webhooks.delete(callerOf(request).appId, request.params.id)
      if (row === undefined) throw ApiError.notFound(NOT_FOUND)
      return toWebhook(row)
    },
  )
}
