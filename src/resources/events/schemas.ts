import { type Static, Type } from 'typebox'
import { Timestamp, UuidParam } from '../../schemas/common.js'

/** The example event: a customer's creation, as its webhooks received it. */
export const EVENT_EXAMPLE = {
  id: '019ab0e4-5c2d-7e4f-8a90-1b2c3d4e5f60',
  type: 'customer.created',
  created_at: '2026-11-21T19:05:13.000Z',
  data: {
    id: 'ecc58e04-2544-46c2-85ff-05567e53cf9d',
    first_name: 'Ada',
    last_name: 'Lovelace',
    phone_number: '+14155550123',
    email: 'ada.lovelace@example.com',
    customer_type: 'Individual',
    status: 'ACTIVE',
    created_at: '2026-11-21T19:05:13.000Z',
    updated_at: '2026-11-21T19:05:13.000Z',
  },
}

/** An event as the outbox keeps it: the envelope every webhook delivery carries, byte for byte. */
export const EventSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'the event id, the webhook-id header of its deliveries', examples: [EVENT_EXAMPLE.id] }),
    type: Type.String({ description: 'the event type, `<resource>.<action>` (docs/webhook-delivery.md#events)', examples: [EVENT_EXAMPLE.type] }),
    created_at: Timestamp,
    data: Type.Object({}, { additionalProperties: true, description: 'the object as the API answered it for this change; its schema is the event type\'s (the document\'s webhooks section)', examples: [EVENT_EXAMPLE.data] }),
  },
  { $id: 'Event', examples: [EVENT_EXAMPLE] },
)
export type Event = Static<typeof EventSchema>

/** Most types one list asks for. */
export const MAX_EVENT_TYPES = 20

export const ListEventsQuery = Type.Object(
  {
    type: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), {
        maxItems: MAX_EVENT_TYPES,
        description: `only events of these types: the parameter repeated (type=a&type=b) or one comma-separated value (type=a,b); at most ${MAX_EVENT_TYPES} types`,
      }),
    ),
    created_after: Type.Optional(Type.String({ format: 'date-time', description: 'only events created after this instant (exclusive): ISO 8601 with a Z or an offset, e.g. 2026-11-21T19:05:13.000Z' })),
    created_before: Type.Optional(Type.String({ format: 'date-time', description: 'only events created before this instant (exclusive), as created_after' })),
    starting_after: Type.Optional(Type.String({ format: 'uuid', 'x-message': 'starting_after must be an event id (UUID)', description: "the next page: the events older than this one (the last event of the page before: its id)" })),
    ending_before: Type.Optional(Type.String({ format: 'uuid', 'x-message': 'ending_before must be an event id (UUID)', description: 'the page before: the events newer than this one (the first event of the page after: its id)' })),
    take: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'events to return (1-100)' })),
  },
  { additionalProperties: false },
)

export const EventListSchema = Type.Object(
  {
    data: Type.Array(EventSchema, { description: 'newest first' }),
    has_more: Type.Boolean({ description: 'whether more events match beyond this page, in the direction it was read (older with starting_after or none, newer with ending_before)' }),
  },
  { $id: 'EventList', examples: [{ data: [EVENT_EXAMPLE], has_more: false }] },
)

export const EventParams = Type.Object({ id: UuidParam('event') })
