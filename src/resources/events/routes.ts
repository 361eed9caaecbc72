import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { callerOf } from '../../auth/authenticate.js'
import { InvalidRequest, NotFound } from '../../errors.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import { instantOf } from '../../validation/instant.js'
import { errorResponses } from '../../schemas/common.js'
import { operation } from '../manifest.js'
import { eventsManifest } from './manifest.js'
import { type EventPlace, EventsReadRepository, type StoredEvent } from './repository.js'
import { type Event, EventListSchema, EventParams, EventSchema, ListEventsQuery, MAX_EVENT_TYPES } from './schemas.js'

export interface EventRoutesOptions {
  /** every event type the resources emit: what `type` may name */
  eventTypes: readonly string[]
}

/** The event types a list asks for: the parameter repeated or comma-separated, each a known type; undefined for every type. */
export function eventTypesOf(values: readonly string[] | undefined, known: readonly string[]): string[] | undefined {
  if (values === undefined) return undefined
  const types = [...new Set(values.flatMap((value) => value.split(',')).map((type) => type.trim()))]
  if (types.length > MAX_EVENT_TYPES) throw new InvalidRequest(`type names ${types.length} event types: at most ${MAX_EVENT_TYPES}`)
  for (const type of types) {
    if (!known.includes(type)) throw new InvalidRequest(`type: ${JSON.stringify(type)} is not an event type (event types: ${known.join(', ')})`)
  }
  return types
}

/** The envelope as its webhooks received it (its fields in the same order). */
const envelopeOf = (row: StoredEvent): Event => JSON.parse(row.payload) as Event

/**
 * The events the outbox holds for the caller's application, as its environment sees them: newest
 * first, filtered by type and time, paged by cursor (starting_after, ending_before). Each is the
 * envelope its webhooks received.
 */
export const eventRoutes: FastifyPluginAsyncTypebox<EventRoutesOptions> = async (app, options) => {
  const events = new EventsReadRepository(app.db)

  app.route({
    ...operation(eventsManifest, 'eventControllerFindAll'),
    schema: {
      tags: ['events'],
      summary: "List the application's events",
      description:
        "Newest first: the events of the key's environment (those whose data's livemode is the key's) and of the application's own objects (customers, webhooks, taxes, products), each the envelope its webhooks received. Paged by cursor: starting_after the last id of a page gives the next (older) one, ending_before the first id the one before.",
      querystring: ListEventsQuery,
      response: { 200: EventListSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request) => {
      const { appId, environment: keyEnvironment } = callerOf(request)
      const environment = ledgerEnvironmentOf(keyEnvironment)
      const query = request.query
      const types = eventTypesOf(query.type, options.eventTypes)
      const createdAfter = instantOf('created_after', query.created_after)
      const createdBefore = instantOf('created_before', query.created_before)
      if (createdAfter !== undefined && createdBefore !== undefined && createdAfter >= createdBefore) throw new InvalidRequest('created_after must be before created_before')
      if (query.starting_after !== undefined && query.ending_before !== undefined) throw new InvalidRequest('Give starting_after or ending_before, not both')
      const place = async (name: string, id: string | undefined): Promise<EventPlace | undefined> => {
        if (id === undefined) return undefined
        const found = await events.find(appId, environment, id)
        if (found === undefined) throw new InvalidRequest(`${name} names no event of this application: ${id}`)
        return found
      }
      const { rows, more } = await events.page(appId, environment, {
        types,
        createdAfter,
        createdBefore,
        olderThan: await place('starting_after', query.starting_after),
        newerThan: await place('ending_before', query.ending_before),
        take: query.take ?? 10,
      })
      return { data: rows.map(envelopeOf), has_more: more }
    },
  })

  app.route({
    ...operation(eventsManifest, 'eventControllerFindOne'),
    schema: {
      tags: ['events'],
      summary: 'Get an event',
      description: "One event of the application, as its webhooks received it; another environment's event answers like a missing one.",
      params: EventParams,
      response: { 200: EventSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const { appId, environment } = callerOf(request)
      const found = await events.find(appId, ledgerEnvironmentOf(environment), request.params.id)
      if (found === undefined) throw new NotFound('Event not found')
      return envelopeOf(found)
    },
  })
}
