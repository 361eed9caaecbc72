import { Type } from 'typebox'

export const ErrorSchema = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.String()),
  },
  { $id: 'Error', description: 'The error body of every failed request' },
)

/** ISO 8601 UTC timestamp with milliseconds, e.g. 2026-11-21T19:05:13.000Z */
export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-21T19:05:13.000Z'] })

/**
 * Which money an object is (Stripe's name): true for live money, made with a production key;
 * false for the sandbox, made with a development key. Every object that belongs to an environment
 * carries it, so each money event's `data` says which it is.
 */
export const Livemode = Type.Boolean({ description: 'true: live money (made with a production key); false: sandbox money (a development key)' })

/** What a live payout in funds_received waits for (src/ledger/simulated-rails.ts waitingFor). */
export const WaitingFor = Type.Optional(
  Type.Literal('payout_sender', {
    description: "only on a live payout in funds_received: it waits for the platform's payout sender, its funds held in clearing (docs/chains.md#what-waits)",
  }),
)

/**
 * A UUID path parameter. `x-message` is the whole 400 message when it fails, so each
 * resource answers in its own words ("Invalid webhook ID format").
 */
export function UuidParam(resource: string) {
  return Type.String({ format: 'uuid', 'x-message': `Invalid ${resource} ID format`, description: `${resource} id (UUID)` })
}

export const MAX_SKIP = 2_147_483_647

export const Pagination = {
  // Bounded so the value stays a 32-bit integer in every database's OFFSET.
  skip: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SKIP, default: 0, description: 'records to skip' })),
  take: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'records to return (1-100)' })),
}

/** Error responses a route can answer, for the OpenAPI document. */
export function errorResponses(...codes: number[]) {
  return Object.fromEntries(codes.map((code) => [code, { $ref: 'Error#' }]))
}

/** True when an update body names at least one field: only then is it a change (and an event). */
export function namesAField(body: object): boolean {
  return Object.keys(body).length > 0
}
