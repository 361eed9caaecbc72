import { answer, type Command } from '../command.js'
import { type AuditDelivery, type AuditWebhook, findWebhookForAudit, listDeliveriesForAudit } from '../deliveries.js'
import { parseLimit, required } from '../options.js'
import { type Row, table } from '../render.js'
import { UsageError } from '../usage-error.js'

/** `deliveries list`: the operator's audit view of any webhook's deliveries. */
const deliveriesList: Command = {
  name: 'deliveries list',
  usage: `  deliveries list --webhook WEBHOOK_ID [--limit N]
      a webhook's newest deliveries (N from 1 to 1000, default 50) with every attempt;
      any application's webhook, deleted ones too`,
  options: ['webhook', 'limit'],
  run: answer(async (db, { flags }) => {
    const webhookId = required(flags, 'webhook')
    const limit = parseLimit(flags.limit)
    const webhook = await findWebhookForAudit(db, webhookId)
    if (webhook === undefined) throw new UsageError(`unknown webhook: ${webhookId}`)
    const deliveries = await listDeliveriesForAudit(db, webhook.id, limit)
    return { json: { webhook, deliveries }, text: auditHeader(webhook, deliveries.length) + table(deliveries.map(auditRow)) }
  }),
}

export const DELIVERIES_COMMANDS: readonly Command[] = [deliveriesList]

/** The audit view's one-line header: which webhook, its state and its counters. */
function auditHeader(webhook: AuditWebhook, shown: number): string {
  const state = webhook.deleted_at !== null ? `inactive (deleted at ${webhook.deleted_at})` : webhook.isActive ? 'active' : 'inactive'
  const stats = webhook.delivery_stats
  return (
    `webhook ${webhook.id} ${JSON.stringify(webhook.name)} ${webhook.url} (app ${webhook.app_id}), ${state}; ` +
    `${stats.total_events} events, ${stats.successful_deliveries} delivered, ${stats.failed_deliveries} failed attempts; ` +
    `${circuitText(webhook.circuit)}; ` +
    `newest ${shown} deliveries:\n`
  )
}

function circuitText(circuit: AuditWebhook['circuit']): string {
  if (circuit.state === 'closed') return `circuit closed (${circuit.consecutive_failures} failures in a row)`
  return `circuit OPEN after ${circuit.consecutive_failures} failures in a row: one attempt at a time${circuit.retry_at === null ? '' : `, next not before ${circuit.retry_at}`}`
}

function auditRow(delivery: AuditDelivery): Row {
  const last = delivery.attempt_log.at(-1)
  return {
    id: delivery.id,
    event_type: delivery.event_type,
    event_id: delivery.event_id,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.next_attempt_at,
    last_outcome: last?.outcome,
    last_status_code: last?.status_code,
  }
}
