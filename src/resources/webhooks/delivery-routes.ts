import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { callerOf } from '../../auth/authenticate.js'
import { DeliveryLogRepository, type LoggedDelivery } from './delivery-log-repository.js'
import { NotFound } from '../../errors.js'
import { DELIVERY_NOT_FOUND, requireLogOwner, resendDelivery, sendTestEvent } from './owner-tools.js'
import { errorResponses } from '../../schemas/common.js'
import { type Delivery, DeliveryParams, DeliverySchema, ListDeliveriesQuery } from './delivery-schemas.js'
import { WebhookParams } from './schemas.js'
import { operation } from '../manifest.js'
import { webhooksManifest } from './manifest.js'

export function toDelivery(entry: LoggedDelivery): Delivery {
  return {
    id: entry.id,
    webhook_id: entry.webhook_id,
    event: { id: entry.event_id, type: entry.event_type, created_at: entry.event_created_at },
    status: entry.status,
    attempts: entry.attempts,
    next_attempt_at: entry.next_attempt_at,
    held_back_until: entry.held_back_until,
    created_at: entry.created_at,
    updated_at: entry.updated_at,
    attempt_log: entry.attempt_log,
  }
}

/**
 * The webhook owner's tools: the delivery log, a resend of one delivery, and a test event. The log
 * outlives its webhook: after DELETE it stays readable here, read-only (a resend or a test event
 * is refused with 409), while every other route answers 404 for the webhook. Another
 * application's webhook, deleted or not, is 404 everywhere.
 */
export const webhookDeliveryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const log = new DeliveryLogRepository(app.db)

  /** One delivery as the owner sees it now (after a commit), or 404 naming what is missing. */
  async function ownedDelivery(appId: string, webhookId: string, deliveryId: string): Promise<Delivery> {
    const [entry] = await log.forOwner(appId, webhookId, { deliveryId, skip: 0, take: 1 })
    if (entry !== undefined) return toDelivery(entry)
    await requireLogOwner(log, appId, webhookId)
    throw new NotFound(DELIVERY_NOT_FOUND)
  }

  app.route({
    ...operation(webhooksManifest, 'webhookControllerFindDeliveries'),
    schema: {
      tags: ['webhooks'],
      summary: "List a webhook's deliveries",
      description:
        "Newest first, each with its event, state and every attempt (time, duration, outcome, HTTP status, first 20 KB of the response). A deleted webhook's log stays readable here.",
      params: WebhookParams,
      querystring: ListDeliveriesQuery,
      response: { 200: Type.Array(DeliverySchema), ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      const { id } = request.params
      await requireLogOwner(log, appId, id)
      const entries = await log.forOwner(appId, id, {
        status: request.query.status,
        skip: request.query.skip ?? 0,
        take: request.query.take ?? 10,
      })
      return entries.map(toDelivery)
    },
  })

  app.route({
    ...operation(webhooksManifest, 'webhookControllerFindDelivery'),
    schema: {
      tags: ['webhooks'],
      summary: 'Get one delivery of a webhook',
      description: "A deleted webhook's deliveries stay readable here.",
      params: DeliveryParams,
      response: { 200: DeliverySchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => ownedDelivery(callerOf(request).appId, request.params.id, request.params.deliveryId),
  })

  app.route({
    ...operation(webhooksManifest, 'webhookControllerRetryDelivery'),
    schema: {
      tags: ['webhooks'],
      summary: 'Attempt a delivery again now',
      description:
        'For a delivery that has ended (succeeded, failed or canceled): one more attempt, now, added to its log and counted in the statistics. A failure ends it again (no automatic retries). 409 while it is pending or on the wire, or when the webhook is inactive or deleted.',
      params: DeliveryParams,
      response: { 202: DeliverySchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
    },
    handler: async (request, reply) => {
      const { appId } = callerOf(request)
      const { id, deliveryId } = request.params
      await resendDelivery(app.transact, appId, id, deliveryId)
      return reply.code(202).send(await ownedDelivery(appId, id, deliveryId))
    },
  })

  app.route({
    ...operation(webhooksManifest, 'webhookControllerSendTest'),
    schema: {
      tags: ['webhooks'],
      summary: 'Send a test event to this webhook',
      description:
        'Sends a `webhook.test` event (data: the webhook) to this webhook only, signed and encrypted like any other. Answers 202 with the delivery; follow it in the delivery log. 409 when the webhook is inactive or deleted.',
      params: WebhookParams,
      response: { 202: DeliverySchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
    },
    handler: async (request, reply) => {
      const { appId } = callerOf(request)
      const { id } = request.params
      const deliveryId = await sendTestEvent(app.transact, appId, id)
      return reply.code(202).send(await ownedDelivery(appId, id, deliveryId))
    },
  })
}
