import type { WebhookRow } from './repository.js'
import type { Webhook } from './schemas.js'

// The API's webhook object from its row: kept out of the repository, which knows no API schema.

export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    isActive: row.is_active === 1,
    encrypted: row.encrypted === 1,
    event_types: row.event_types === null ? null : (JSON.parse(row.event_types) as string[]),
    created_at: row.created_at,
    updated_at: row.updated_at,
    delivery_stats: deliveryStatsOf(row),
  }
}

export function deliveryStatsOf(
  row: Pick<WebhookRow, 'total_events' | 'successful_deliveries' | 'failed_deliveries' | 'last_delivery'>,
): Webhook['delivery_stats'] {
  return {
    total_events: row.total_events,
    successful_deliveries: row.successful_deliveries,
    failed_deliveries: row.failed_deliveries,
    last_delivery: row.last_delivery,
  }
}
