import { Type, type Static } from 'typebox'
import { Pagination, Timestamp, UuidParam } from '../../schemas/common.js'

/** The webhook the docs page shows. */
export const WEBHOOK_EXAMPLE = {
  id: '27ccc52b-84b4-46c0-9b26-a5ae0ebdac9d',
  name: 'Payouts to our ledger',
  url: 'https://hooks.example.com/devplatform',
  signingSecret: 'whsec_uuiM+JPzwlP8avlCAArE3o5hnXEOEYs4WItpZAu8y78=',
  eventTypes: ['customer.created', 'liquidation_address.created'],
} as const

export const DeliveryStatsSchema = Type.Object({
  total_events: Type.Integer({ description: 'events queued for this webhook' }),
  successful_deliveries: Type.Integer({ description: 'events delivered with a 2xx answer' }),
  failed_deliveries: Type.Integer({ description: 'failed delivery attempts' }),
  last_delivery: Type.Union([Timestamp, Type.Null()], { description: 'time of the latest attempt; null before the first' }),
})

export const WebhookSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', examples: [WEBHOOK_EXAMPLE.id] }),
    name: Type.String({ examples: [WEBHOOK_EXAMPLE.name] }),
    url: Type.String({ examples: [WEBHOOK_EXAMPLE.url] }),
    isActive: Type.Boolean(),
    encrypted: Type.Boolean(),
    event_types: Type.Union([Type.Array(Type.String({ examples: [WEBHOOK_EXAMPLE.eventTypes[0]] }), { examples: [[...WEBHOOK_EXAMPLE.eventTypes]] }), Type.Null()], {
      description: 'the event types this webhook receives (its webhook.test events aside); null: every event type',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    delivery_stats: DeliveryStatsSchema,
  },
  { $id: 'Webhook' },
)
export type Webhook = Static<typeof WebhookSchema>

export const CreatedWebhookSchema = Type.Object(
  {
    ...WebhookSchema.properties,
    signing_secret: Type.Optional(
      Type.String({
        description: 'the generated signing secret; returned only here, once, when the request did not supply one',
        examples: [WEBHOOK_EXAMPLE.signingSecret],
      }),
    ),
  },
  { $id: 'CreatedWebhook' },
)
export type CreatedWebhook = Static<typeof CreatedWebhookSchema>

const name = Type.String({ minLength: 1, maxLength: 100, examples: [WEBHOOK_EXAMPLE.name] })
const url = Type.String({ minLength: 1, maxLength: 2048, description: 'https URL (http to a loopback host outside production)', examples: [WEBHOOK_EXAMPLE.url] })
const signingSecret = Type.String({
  minLength: 1,
  maxLength: 128,
  description: 'whsec_ followed by base64 of 24 to 64 random bytes; generated when absent',
  examples: [WEBHOOK_EXAMPLE.signingSecret],
})

/**
 * `event_types` in a request, over `catalogue` (every resource's event types, EVENT_TYPES): null
 * (or absent on creation) for every event type, else a list of catalogue types, each once, at
 * least one. One schema of type [array, null] rather than a union, so a failure is reported once,
 * not once per branch. Null is a value here (it clears the filter on PATCH), so the validator
 * keeps it rather than dropping it as "absent". The routes' own check (eventTypesProblem) answers
 * first, with messages naming the type at fault; these keywords publish the rule in the document
 * and back it up.
 */
function eventTypesSchema(catalogue: readonly string[]) {
  return Type.Unsafe<string[] | null>({
    type: ['array', 'null'],
    items: { type: 'string', enum: [...catalogue] },
    // Types every catalogue has (the customers' and liquidation addresses' resources).
    examples: [[...WEBHOOK_EXAMPLE.eventTypes]],
    minItems: 1,
    maxItems: catalogue.length,
    uniqueItems: true,
    // what a wrong type (a string, an object) is told; the list's own rules are told by the routes' check
    'x-message': 'event_types must be an array of event types (strings), or null for every event type',
    description:
      'the event types this webhook receives, each at most once; null (or absent on creation) for every event type. An empty list is refused: to receive nothing, set isActive to false. webhook.test events sent with POST /webhooks/{id}/test reach the webhook whatever its list.',
  })
}

/** The create and update bodies, their `event_types` over `catalogue`: the catalogue comes from RESOURCES when the routes are registered. */
export function webhookBodies(catalogue: readonly string[]) {
  const eventTypes = eventTypesSchema(catalogue)
  return {
    create: Type.Object(
      {
        name,
        url,
        isActive: Type.Optional(Type.Boolean({ default: true })),
        signing_secret: Type.Optional(signingSecret),
        encrypted: Type.Optional(Type.Boolean({ default: false })),
        event_types: Type.Optional(eventTypes),
      },
      { additionalProperties: false, 'x-rules': 'webhook' },
    ),
    update: Type.Object(
      {
        name: Type.Optional(name),
        url: Type.Optional(url),
        isActive: Type.Optional(Type.Boolean()),
        signing_secret: Type.Optional(signingSecret),
        encrypted: Type.Optional(Type.Boolean()),
        event_types: Type.Optional(eventTypes),
      },
      { additionalProperties: false, 'x-rules': 'webhook' },
    ),
  }
}
export type CreateWebhookBody = Static<ReturnType<typeof webhookBodies>['create']>
export type UpdateWebhookBody = Static<ReturnType<typeof webhookBodies>['update']>

export const WebhookParams = Type.Object({ id: UuidParam('webhook') })
export const ListWebhooksQuery = Type.Object(Pagination)

export const WebhookSecretSchema = Type.Object(
  { signing_secret: Type.String({ description: 'the current signing secret (whsec_…)', examples: [WEBHOOK_EXAMPLE.signingSecret] }) },
  { $id: 'WebhookSecret' },
)

export const RotateWebhookSecretBody = Type.Object(
  { signing_secret: Type.Optional(signingSecret) },
  {
    additionalProperties: false,
    'x-rules': 'webhook',
    description: 'optional: the new secret; generated when absent. The replaced secret keeps signing deliveries for 24 hours.',
  },
)
export type RotateWebhookSecretBody = Static<typeof RotateWebhookSecretBody>
