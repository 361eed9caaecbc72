import type { TableDeclaration } from '../modules/module.js'

/** One change made through the API, as the envelope sent to webhooks. Kept for audit. */
export interface EventsTable {
  id: string
  app_id: string
  type: string
  /** the JSON envelope {"id","type","created_at","data"}, byte for byte what receivers get */
  payload: string
  created_at: string
  /**
   * 'sandbox' or 'live': the environment of its object (the data's `livemode`); null for an object
   * of the application itself (a customer, a webhook), which belongs to both. GET /events reads it.
   */
  environment: string | null
  /** 1 while its deliveries are still to be written by a dispatcher (EventsRepository.fanOutPending) */
  fanout_pending: number
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'canceled'

/** One event for one webhook. Kept for audit, also after the webhook is deleted. */
export interface DeliveriesTable {
  id: string
  event_id: string
  webhook_id: string
  app_id: string
  status: DeliveryStatus
  /** attempts made so far */
  attempts: number
  /** pending: when the next attempt is due; while claimed, when the claim lapses */
  next_attempt_at: string
  /** set while a dispatcher holds the delivery; its outcome is written only under the same token */
  claim_token: string | null
  /** 1 when the owner asked for one more attempt (retry route): a failure then ends the delivery */
  resend: number
  created_at: string
  updated_at: string
}

export type AttemptOutcome = 'succeeded' | 'failed' | 'canceled'

export interface DeliveryAttemptsTable {
  id: string
  delivery_id: string
  webhook_id: string
  /** 1 for the first attempt */
  attempt: number
  started_at: string
  duration_ms: number
  outcome: AttemptOutcome
  status_code: number | null
  error: string | null
  /** the receiver's response body, first 20 KB */
  response_body: string | null
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../db/schema.js' {
  interface Database {
    events: EventsTable
    deliveries: DeliveriesTable
    delivery_attempts: DeliveryAttemptsTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const eventsTables: readonly TableDeclaration[] = [
  { name: 'events', appDeletion: 'kept', reason: 'the audit trail of every change, which the deliveries name' },
  { name: 'deliveries', appDeletion: 'kept', reason: 'the delivery log, kept for audit as after DELETE /webhooks/{id}' },
  { name: 'delivery_attempts', appDeletion: 'untouched', reason: 'the attempts of a delivery, kept with it' },
]
