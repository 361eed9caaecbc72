import { Type, type Static } from 'typebox'
import { Pagination, Timestamp, UuidParam } from '../../schemas/common.js'
import { WEBHOOK_EXAMPLE } from './schemas.js'

const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const

export const DeliveryAttemptSchema = Type.Object(
  {
    attempt: Type.Integer({ description: '1 for the first attempt', examples: [1] }),
    started_at: Timestamp,
    duration_ms: Type.Integer({ examples: [182] }),
    outcome: Type.Enum(['succeeded', 'failed', 'canceled'], { examples: ['failed'] }),
    status_code: Type.Union([Type.Integer({ examples: [500] }), Type.Null()], { description: "the receiver's HTTP status; null when none came" }),
    error: Type.Union([Type.String({ examples: ['HTTP 500'] }), Type.Null()], { description: 'why the attempt failed (timeout, connection refused, HTTP 500, …)' }),
    response_body: Type.Union([Type.String({ examples: ['{"error":"database unavailable"}'] }), Type.Null()], {
      description: "the receiver's response body, first 20 KB",
    }),
  },
  { description: 'one attempt to deliver' },
)

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', examples: ['0b72e454-ffdf-45c3-ab07-0fc00e3d45fa'] }),
    webhook_id: Type.String({ format: 'uuid', examples: [WEBHOOK_EXAMPLE.id] }),
    event: Type.Object({
      id: Type.String({ format: 'uuid', examples: ['5d2f7c1e-8a4b-4e0f-9c3d-2b6a1f0e7d94'] }),
      type: Type.String({ examples: ['customer.created'] }),
      created_at: Timestamp,
    }),
    status: Type.Enum([...DELIVERY_STATUSES]),
    attempts: Type.Integer({ description: 'attempts made so far', examples: [1] }),
    next_attempt_at: Type.Union([Timestamp, Type.Null()], {
      description: 'pending: when the next attempt is due (while one is on the wire, when its claim lapses); null once ended',
    }),
    held_back_until: Type.Union([Timestamp, Type.Null()], {
      description:
        "pending while its webhook's circuit is open (5 or more failed attempts in a row): no attempt to the webhook starts before this time, then one at a time until it answers 2xx; null otherwise",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    attempt_log: Type.Array(DeliveryAttemptSchema, { description: 'every attempt, oldest first' }),
  },
  { $id: 'Delivery' },
)
export type Delivery = Static<typeof DeliverySchema>

export const ListDeliveriesQuery = Type.Object({
  status: Type.Optional(Type.Enum([...DELIVERY_STATUSES], { description: 'only deliveries in this state' })),
  ...Pagination,
})

export const DeliveryParams = Type.Object({ id: UuidParam('webhook'), deliveryId: UuidParam('delivery') })
