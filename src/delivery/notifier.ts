import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { POSTGRES_TIMEOUTS } from '../db/postgres/open.js'
import { connectToPrimary } from '../db/postgres/primary.js'
import type { CommitSignals, SignalSink } from '../db/unit-of-work.js'
import type { DispatcherLog } from './log.js'

/** What a dispatcher wants to hear from the API, as it happens. */
export interface DeliveryListener {
  /** new deliveries were committed: claim them now rather than at the next poll */
  deliveriesCommitted(): void
  /** the webhook was deleted or deactivated (committed): abort its attempts on the wire */
  webhookStopped(webhookId: string): void
}

/** PostgreSQL channels: every process's dispatcher LISTENs on both. */
export const CHANNELS = {
  deliveries: 'devplatform_deliveries',
  webhookStopped: 'devplatform_webhook_stopped',
} as const

/**
 * Carries commit signals to dispatchers. In this process: straight to the attached dispatcher
 * (if any) after commit. To other processes: on PostgreSQL, NOTIFY inside the transaction, so it
 * is sent exactly when the change commits; on SQLite other processes find the facts by polling.
 */
export class DeliveryNotifier implements SignalSink {
  private listener: DeliveryListener | undefined
  /**
   * Sent as the payload of its deliveries NOTIFY: this process's own LISTEN connection hears it too,
   * and ignores it (PostgresSignalListener's `ownOrigin`), its dispatcher having been told already.
   */
  readonly origin = randomUUID()

  attach(listener: DeliveryListener): void {
    this.listener = listener
  }

  detach(): void {
    this.listener = undefined
  }

  signalStatements(signals: CommitSignals): string | undefined {
    const statements: string[] = []
    if (signals.deliveries) statements.push(notify(CHANNELS.deliveries, this.origin))
    for (const webhookId of signals.stoppedWebhooks) statements.push(notify(CHANNELS.webhookStopped, webhookId))
    return statements.length === 0 ? undefined : statements.join('; ')
  }

  committed(signals: CommitSignals): void {
    if (signals.deliveries) this.listener?.deliveriesCommitted()
    for (const webhookId of signals.stoppedWebhooks) this.listener?.webhookStopped(webhookId)
  }
}

/** A NOTIFY as SQL text (it is sent without parameters, with the COMMIT): the payload quoted by pg. */
function notify(channel: string, payload: string): string {
  return `select pg_notify('${channel}', ${pg.escapeLiteral(payload)})`
}

/**
 * LISTENs for other processes' commit signals on one dedicated PostgreSQL connection (outside the
 * pool: a pooled connection would lose its LISTEN when returned). When the connection breaks it
 * reconnects with backoff and, once back, wakes the dispatcher, since what was sent meanwhile is
 * lost (stopped webhooks are also found by the dispatcher's periodic check).
 */
export class PostgresSignalListener {
  private client: pg.Client | undefined
  private closed = false
  private retryTimer: NodeJS.Timeout | undefined
  private failures = 0

  constructor(
    private readonly url: string,
    private readonly listener: DeliveryListener,
    private readonly log: DispatcherLog,
    /** the origin of this process's own DeliveryNotifier: its commits were signalled directly */
    private readonly ownOrigin?: string,
  ) {}

  /** Connects (retrying in the background on failure); resolves once the first attempt ends. */
  async start(): Promise<void> {
    await this.connect()
  }

  get listening(): boolean {
    return this.client !== undefined
  }

  private async connect(): Promise<void> {
    if (this.closed) return
    let client: pg.Client
    try {
      // The host of the URL's list that takes writes: LISTEN runs on a primary only, and NOTIFYs
      // are sent by the primary's sessions.
      client = await connectToPrimary(this.url, { connectionTimeoutMillis: POSTGRES_TIMEOUTS.connectMs, keepAlive: true, application_name: 'devplatform-listen' })
    } catch (error) {
      this.log.warn({ err: error }, 'webhook dispatcher: cannot LISTEN for commits; polling until the database answers')
      this.retry()
      return
    }
    client.on('notification', (message) => {
      if (message.channel === CHANNELS.deliveries) {
        if (message.payload !== this.ownOrigin) this.listener.deliveriesCommitted()
      }
      else if (message.channel === CHANNELS.webhookStopped && message.payload !== undefined) this.listener.webhookStopped(message.payload)
    })
    client.on('error', () => this.lost(client))
    client.on('end', () => this.lost(client))
    try {
      await client.query(`listen ${CHANNELS.deliveries}`)
      await client.query(`listen ${CHANNELS.webhookStopped}`)
    } catch (error) {
      this.log.warn({ err: error }, 'webhook dispatcher: cannot LISTEN for commits; polling until the database answers')
      this.lost(client)
      return
    }
    if (this.closed) {
      await client.end().catch(() => undefined)
      return
    }
    this.client = client
    if (this.failures > 0) this.log.info({}, 'webhook dispatcher: listening for commits again')
    this.failures = 0
    // Whatever was committed while not listening: look now.
    this.listener.deliveriesCommitted()
  }

  private lost(client: pg.Client): void {
    if (this.client === client) this.client = undefined
    client.removeAllListeners('end')
    client.removeAllListeners('error')
    client.on('error', () => undefined)
    client.end().catch(() => undefined)
    this.retry()
  }

  private retry(): void {
    if (this.closed || this.retryTimer !== undefined) return
    this.failures++
    const delay = Math.min(5_000, 100 * 2 ** Math.min(this.failures, 6))
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined
      void this.connect()
    }, delay)
    this.retryTimer.unref()
  }

  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.retryTimer)
    const client = this.client
    this.client = undefined
    if (client !== undefined) {
      client.removeAllListeners('end')
      await client.end().catch(() => undefined)
    }
  }
}
