import type { TableDeclaration } from '../../modules/module.js'

export interface WebhooksTable {
  id: string
  app_id: string
  name: string
  url: string
  is_active: number
  encrypted: number
  signing_secret: string
  successful_deliveries: number
  failed_deliveries: number
  last_delivery: string | null
  created_at: string
  updated_at: string
  /** Set by DELETE; the row stays for audit and is invisible to the API from then on. */
  deleted_at: string | null
  /** the secret a rotation replaced: deliveries are signed with it too until `previous_secret_expires_at` */
  previous_signing_secret: string | null
  previous_secret_expires_at: string | null
  /** failed attempts since its last 2xx: from CIRCUIT_THRESHOLD on, its circuit is open (one attempt at a time) */
  consecutive_failures: number
  /** while its circuit is open: no attempt to it starts before this */
  circuit_retry_at: string | null
  /** the event types it receives, a JSON array of strings (each once, at least one); null: every type */
  event_types: string | null
}

/**
 * The events each webhook took (its delivery_stats.total_events is the sum of its rows). A write
 * adds to one of EVENT_COUNT_SLOTS rows per webhook (always slot 0 on SQLite), not to the webhook's
 * own row, so concurrent writes of one application do not take turns on their webhooks' rows.
 */
export interface WebhookEventCountsTable {
  webhook_id: string
  slot: number
  events: number
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    webhooks: WebhooksTable
    webhook_event_counts: WebhookEventCountsTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const webhooksTables: readonly TableDeclaration[] = [
  { name: 'webhooks', appDeletion: 'kept', reason: 'marked deleted, as DELETE /webhooks/{id} does: deliveries to them stop at once, their statistics stay' },
  { name: 'webhook_event_counts', appDeletion: 'untouched', reason: 'the event counts of a webhook, kept with it' },
]
