import { type Selectable, sql } from 'kysely'
import type { Db } from '../../db/database.js'
import type { DeliveryAttemptsTable, DeliveryStatus } from '../../events/tables.js'
import { isCircuitOpen } from '../../db/circuit.js'

/** One attempt as stored, without the keys that tie it to its delivery. */
export type LoggedAttempt = Omit<Selectable<DeliveryAttemptsTable>, 'id' | 'delivery_id' | 'webhook_id'>

export interface LoggedDelivery {
  id: string
  webhook_id: string
  event_id: string
  event_type: string
  event_created_at: string
  status: DeliveryStatus
  attempts: number
  /** when the next attempt is due (while one is on the wire: when its claim lapses); null once the delivery has ended */
  next_attempt_at: string | null
  /** pending while its webhook's circuit is open: no attempt before this time (null otherwise) */
  held_back_until: string | null
  created_at: string
  updated_at: string
  /** oldest first */
  attempt_log: LoggedAttempt[]
}

export interface DeliveryLogFilter {
  status?: DeliveryStatus | undefined
  /** one delivery */
  deliveryId?: string | undefined
  /** only deliveries of this environment's events and of the application's own (an event with no environment belongs to both) */
  environment?: 'sandbox' | 'live' | undefined
  skip: number
  take: number
}

/** The webhook a log belongs to, as the log's routes need it: whether, and when, it was deleted. */
export interface LogOwner {
  deleted_at: string | null
}

/**
 * Deliveries with their attempts, newest first: the owner's log (API, scoped to a webhook of the
 * caller's application, deleted ones included: the log outlives its webhook) and the operator's
 * audit view (CLI, any webhook). Both read through `entries`, so they show the same thing.
 */
export class DeliveryLogRepository {
  constructor(private readonly db: Db) {}

  /**
   * This application's webhook whose log is asked for, deleted or not (a deleted webhook's row
   * stays with its log), or undefined when the application has no such webhook. The one read of
   * a deleted webhook outside the operator's tools: WebhooksRepository never sees them.
   */
  async ownerOf(appId: string, webhookId: string): Promise<LogOwner | undefined> {
    return this.db
      .selectFrom('webhooks')
      .select('deleted_at')
      .where('app_id', '=', appId)
      .where('id', '=', webhookId.toLowerCase())
      .executeTakeFirst()
  }

  /** The owner's view: only deliveries of this application's webhook, deleted or not. */
  async forOwner(appId: string, webhookId: string, filter: DeliveryLogFilter): Promise<LoggedDelivery[]> {
    return this.entries(webhookId, filter, appId)
  }

  /** The operator's audit view: any application's webhook, deleted or not. */
  async forOperator(webhookId: string, filter: DeliveryLogFilter): Promise<LoggedDelivery[]> {
    return this.entries(webhookId, filter, undefined)
  }

  /**
   * The ids of this application's webhook's failed deliveries created at or after `since`, of an
   * environment's events and the application's own: what "replay everything failed since T" resends.
   */
  async failedSince(appId: string, webhookId: string, since: string, environment: 'sandbox' | 'live'): Promise<string[]> {
    const rows = await this.db
      .selectFrom('deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .select('d.id')
      .where('d.app_id', '=', appId)
      .where('d.webhook_id', '=', webhookId.toLowerCase())
      .where('d.status', '=', sql.lit('failed'))
      .where('d.status', '<>', sql.lit('pending'))
      .where('d.created_at', '>=', since)
      .where((eb) => eb.or([eb('e.environment', '=', environment), eb('e.environment', 'is', null)]))
      .orderBy('d.created_at')
      .orderBy('d.id')
      .execute()
    return rows.map((row) => row.id)
  }

  /** Attempts to this application's webhook since `since`, per UTC day and outcome: the success-rate chart's figures. */
  async attemptsPerDay(appId: string, webhookId: string, since: string, environment: 'sandbox' | 'live'): Promise<{ day: string; outcome: string; attempts: number }[]> {
    const rows = await this.db
      .selectFrom('delivery_attempts as a')
      .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .select((eb) => [sql<string>`substr(a.started_at, 1, 10)`.as('day'), 'a.outcome', eb.fn.countAll<number | string>().as('attempts')])
      .where('d.app_id', '=', appId)
      .where('a.webhook_id', '=', webhookId.toLowerCase())
      .where('a.started_at', '>=', since)
      .where((eb) => eb.or([eb('e.environment', '=', environment), eb('e.environment', 'is', null)]))
      .groupBy([sql`substr(a.started_at, 1, 10)`, 'a.outcome'])
      .execute()
    return rows.map((row) => ({ day: row.day, outcome: row.outcome, attempts: Number(row.attempts) }))
  }

  private async entries(webhookId: string, filter: DeliveryLogFilter, ownerAppId: string | undefined): Promise<LoggedDelivery[]> {
    let query = this.db
      .selectFrom('deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select([
        'd.id',
        'd.webhook_id',
        'd.event_id',
        'e.type as event_type',
        'e.created_at as event_created_at',
        'd.status',
        'd.attempts',
        'd.next_attempt_at',
        'd.created_at',
        'd.updated_at',
        'w.consecutive_failures',
        'w.circuit_retry_at',
      ])
      .where('d.webhook_id', '=', webhookId.toLowerCase())
    if (ownerAppId !== undefined) query = query.where('w.app_id', '=', ownerAppId).where('d.app_id', '=', ownerAppId)
    if (filter.status === 'pending') query = query.where('d.status', '=', sql.lit('pending'))
    // Written as literals, with the index's own predicate, so both backends can use the partial
    // index of ended deliveries (deliveries_webhook_ended), already in the log's order.
    else if (filter.status !== undefined) query = query.where('d.status', '=', sql.lit(filter.status)).where('d.status', '<>', sql.lit('pending'))
    if (filter.deliveryId !== undefined) query = query.where('d.id', '=', filter.deliveryId.toLowerCase())
    const environment = filter.environment
    if (environment !== undefined) query = query.where((eb) => eb.or([eb('e.environment', '=', environment), eb('e.environment', 'is', null)]))
    const rows = await query.orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(filter.take).offset(filter.skip).execute()
    if (rows.length === 0) return []

    const attempts = await this.db
      .selectFrom('delivery_attempts')
      .select(['delivery_id', 'attempt', 'started_at', 'duration_ms', 'outcome', 'status_code', 'error', 'response_body'])
      .where(
        'delivery_id',
        'in',
        rows.map((row) => row.id),
      )
      // An attempt given back at shutdown is tried again under the same number: time decides.
      .orderBy('started_at')
      .orderBy('attempt')
      .orderBy('id')
      .execute()
    const log = new Map<string, LoggedAttempt[]>()
    for (const { delivery_id: deliveryId, ...attempt } of attempts) {
      let list = log.get(deliveryId)
      if (list === undefined) {
        list = []
        log.set(deliveryId, list)
      }
      list.push(attempt)
    }
    return rows.map(({ consecutive_failures: consecutiveFailures, circuit_retry_at: circuitRetryAt, ...row }) => ({
      ...row,
      next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
      held_back_until: row.status === 'pending' && isCircuitOpen(consecutiveFailures) ? circuitRetryAt : null,
      attempt_log: log.get(row.id) ?? [],
    }))
  }
}
