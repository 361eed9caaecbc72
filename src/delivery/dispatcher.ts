import type { Config } from '../config.js'
import { backendOf, type Db, planningRead, writeTransaction } from '../db/database.js'
import { DeliveriesRepository, type DueDelivery } from '../events/deliveries-repository.js'
import { EventsRepository, hasPendingFanOut } from '../events/events-repository.js'
import { isoOf, newId } from '../db/time.js'
import { runUnitOfWork, type SignalSink } from '../db/unit-of-work.js'
import type { ResolveHost } from './address-guard.js'
import { ClaimWrites } from './claim-writes.js'
import { CachingDnsResolver } from './dns-resolver.js'
import { Incident } from '../incident.js'
import { type Attempt, InFlightRegistry } from './in-flight.js'
import type { DeliveryListener } from './notifier.js'
import type { DispatcherLog } from './log.js'
import { decideOutcome } from './outcome.js'
import { OutcomeWriter } from './outcome-writer.js'
import { RETRY_SCHEDULE_MS } from './retry.js'
import { appRoom, type DueQueue, FairShare, webhookRoom } from './fair-share.js'
import { QueueScan } from './queue-scan.js'
import { AttemptAbort, type SendResult, WebhookSender } from './sender.js'
import { previousSecretInForce, signedRequest } from './signing.js'

/**
 * How long a PostgreSQL claim waits for its connecting requests to reach their sockets before it
 * commits anyway (ClaimWrites). The claim loop does not wait with it: it goes on claiming while up
 * to MAX_CLAIMS_COMMITTING claims wait (each holds a pooled connection meanwhile), so a receiver
 * slow to accept delays no one else's deliveries. A guard (guardConnection) waits as long.
 */
const WRITE_WAIT_MS = 250
const MAX_CLAIMS_COMMITTING = 4
/** Guards of late connections at once (each holds a pooled connection); more wait their turn. */
const MAX_GUARDS = 4

/** Most deliveries one claim takes (one transaction, one batch of attempts started). */
const MAX_CLAIM = 500

/**
 * After a deferred fan-out transaction, the dispatcher fans out again only after resting this many
 * times as long as it took: fan-out takes at most a tenth of the time, so writes (which share the
 * one SQLite writer and the CPU) keep the rest. It still writes deliveries faster than they are
 * sent: a 1,000-row transaction of about 20 ms allows 5,000 a second. bench:api, 1,000 webhooks
 * vs 1: with no rest 21 %, resting 4× 40 %, resting 9× 65 %.
 */
const FANOUT_REST_FACTOR = 9

/** A delivery's DNS lookup gives up after this (or the attempt's own timeout, if shorter). */
const DNS_TIMEOUT_MS = 5000

/** pino's logger, as Fastify types it (the worker passes a plain pino logger) */
export interface DispatcherOptions {
  db: Db
  /** where the outcome writer's commit signals go (410 deactivations) */
  sink: SignalSink
  log: DispatcherLog
  /** an attempt that has no 2xx by then has failed */
  timeoutMs: number
  /** attempts on the wire at once, in all */
  concurrency: number
  /** attempts on the wire at once for one application, so one tenant can't take every slot */
  perAppConcurrency: number
  /** attempts on the wire at once to one webhook, so one slow receiver can't take its application's slots */
  perWebhookConcurrency: number
  /** how often to look for work nobody told this process about: retries falling due, other processes' commits */
  pollIntervalMs: number
  /** loopback receivers are allowed outside production */
  allowLoopback: boolean
  resolveHost?: ResolveHost
  retrySchedule?: readonly number[]
  random?: () => number
  /** tests: webhooks with pending deliveries per read of the claim's scan (QUEUE_WINDOW) */
  queueWindow?: number
  /** tests: runs inside the claim transaction, after its attempts were registered and started, before commit */
  beforeClaimCommit?: (started: number) => Promise<void>
}

/**
 * The claim loop. Claims due deliveries in a write transaction and starts their requests inside
 * that same transaction, each registered in the in-flight registry before the claim commits:
 * a webhook deletion, which conflicts with the claim (SQLite's write lock; the webhook's row
 * lock on PostgreSQL), commits either before the claim (the delivery is canceled, never started)
 * or after the requests began, and then finds and aborts them (in this process directly, in
 * others through NOTIFY or the periodic check). If the claim fails to commit, its attempts are
 * aborted and record nothing. Outcomes are decided by `decideOutcome` and written by the
 * OutcomeWriter.
 */
export class Dispatcher implements DeliveryListener {
  private readonly deliveries: DeliveriesRepository
  private readonly sender: WebhookSender
  private readonly schedule: readonly number[]
  private readonly random: () => number
  private readonly inFlight = new InFlightRegistry()
  private readonly fairShare = new FairShare()
  private readonly queueScan: QueueScan
  private readonly outcomes: OutcomeWriter
  /** the application the last deferred fan-out served: the next one starts after it (round-robin) */
  private lastFanOutApp: string | undefined
  /** no deferred fan-out before this (FANOUT_REST_FACTOR) */
  private fanOutResumesAtMs = 0
  private fanOutTimer: NodeJS.Timeout | undefined
  /** when in-flight webhooks were last checked for deletion by another process */
  private lastStopCheckMs = 0
  private running = false
  private rerun = false
  private kickScheduled = false
  private stopping = false
  /** the claim loop's current run (resolved when none runs): stop() lets it end before anything else */
  private loop: Promise<void> = Promise.resolve()
  private pollTimer: NodeJS.Timeout | undefined
  /** deliveries whose claim did not commit while an attempt of it was started: not claimed again until it ends */
  private readonly unclaimed = new Set<string>()
  /** claiming failing (a database outage), until it works again */
  private readonly claimFailures = new Incident()
  /** outcomes of ended attempts still waiting for their claim's transaction to end */
  private readonly handOffs = new Set<Promise<void>>()
  /** claims whose attempts have started and whose transaction has not ended yet */
  private readonly committing = new Set<Promise<void>>()
  /** guards of late connections whose transaction has not ended yet */
  private readonly guards = new Set<Promise<void>>()

  constructor(private readonly options: DispatcherOptions) {
    this.deliveries = new DeliveriesRepository(options.db)
    this.queueScan = new QueueScan(options.db, options.queueWindow)
    // Its own resolver: lookups bounded by the attempt's timeout (at most 5 s), cached for their TTL.
    const resolveHost = options.resolveHost ?? new CachingDnsResolver({ timeoutMs: Math.min(DNS_TIMEOUT_MS, options.timeoutMs) }).resolve
    this.sender = new WebhookSender({ resolveHost, allowLoopback: options.allowLoopback })
    this.schedule = options.retrySchedule ?? RETRY_SCHEDULE_MS
    this.random = options.random ?? Math.random
    this.outcomes = new OutcomeWriter(options.db, options.sink, options.log, { schedule: this.schedule, random: this.random })
  }

  /** the lease on a claimed delivery: if this process dies, another claims it once this passes */
  private get leaseMs(): number {
    return 2 * this.options.timeoutMs + 1000
  }

  /** attempts on the wire now */
  get inFlightCount(): number {
    return this.inFlight.size
  }

  start(): void {
    this.kick()
  }

  deliveriesCommitted(): void {
    this.kick()
  }

  webhookStopped(webhookId: string): void {
    this.inFlight.abort('stopped', webhookId)
  }

  /** Stops claiming, lets attempts on the wire finish for up to `graceMs`, aborts the rest, writes every outcome. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true
    clearTimeout(this.pollTimer)
    clearTimeout(this.fanOutTimer)
    // A turn under way ends first (it starts nothing more once stopping): otherwise a claim it was
    // making could start attempts after the wait below, and its queries run on a closed database.
    await this.loop
    if (this.inFlight.size > 0) {
      await Promise.race([this.inFlight.whenIdle(), new Promise((resolve) => setTimeout(resolve, graceMs))])
      this.inFlight.abort('shutdown')
      await this.inFlight.whenIdle()
    }
    await Promise.all(this.committing)
    await Promise.all(this.guards)
    await Promise.all(this.handOffs)
    await this.outcomes.close()
    this.sender.close()
  }

  /** Runs the claim loop soon (once, however many commits asked for it in this tick). */
  private kick(): void {
    if (this.stopping) return
    if (this.running) {
      this.rerun = true
      return
    }
    if (this.kickScheduled) return
    this.kickScheduled = true
    setImmediate(() => {
      this.kickScheduled = false
      if (!this.running && !this.stopping) this.loop = this.run()
    })
  }

  /** The claim loop: started only by `kick`, never while it runs or once stopping. */
  private async run(): Promise<void> {
    this.running = true
    clearTimeout(this.pollTimer)
    try {
      do {
        this.rerun = false
        // A budget used up or a full batch means more may be waiting right now.
        if (await this.fanOut()) this.rerun = true
        if (!this.stopping && (await this.claimAndStart())) this.rerun = true
        if (!this.stopping) await this.abortStoppedElsewhere()
      } while (this.rerun && !this.stopping)
      const ended = this.claimFailures.ended()
      if (ended !== undefined) this.options.log.info(ended, 'webhook dispatcher: claiming deliveries works again')
    } catch (error) {
      this.claimFailed(error)
    } finally {
      this.running = false
      if (!this.stopping) this.pollTimer = setTimeout(() => this.kick(), this.options.pollIntervalMs)
    }
  }

  /**
   * Writes the deliveries of events whose application has too many webhooks to fan out inside the
   * write that made them (EventsRepository.fanOutPending), one bounded transaction per loop turn,
   * so writes queued meanwhile take turns with it. True when more events may be waiting.
   */
  private async fanOut(): Promise<boolean> {
    const waitMs = this.fanOutResumesAtMs - Date.now()
    if (waitMs > 0) {
      // Resting: come back when the rest is over (the poll would too, later).
      this.fanOutTimer ??= setTimeout(() => {
        this.fanOutTimer = undefined
        this.kick()
      }, waitMs)
      return false
    }
    if (!(await planningRead(this.options.db, hasPendingFanOut))) return false
    const started = Date.now()
    const result = await runUnitOfWork(this.options.db, this.options.sink, (unit) => new EventsRepository(unit.tx, unit).fanOutPending(this.lastFanOutApp), {
      retries: 2,
    })
    if (result.lastAppId !== undefined) this.lastFanOutApp = result.lastAppId
    const ended = Date.now()
    this.fanOutResumesAtMs = ended + (ended - started) * FANOUT_REST_FACTOR
    return result.more
  }

  /**
   * Claims a fair share of what is due (FairShare: across applications, then their webhooks,
   * within the caps) and starts it. True when a webhook gave all it was asked for: more may be due.
   */
  private async claimAndStart(): Promise<boolean> {
    const free = Math.min(this.options.concurrency - this.inFlight.size, MAX_CLAIM)
    if (free <= 0) return false
    while (this.committing.size >= MAX_CLAIMS_COMMITTING) await Promise.race(this.committing)
    // What to take is planned outside the claim's transaction: a read, so when nothing can be
    // taken (every application with due work at its cap) no write transaction is opened.
    const nowMs = Date.now()
    const now = isoOf(nowMs)
    const busyApps = this.inFlight.appsAt(this.options.perAppConcurrency)
    const queues = await this.queueScan.due(now, busyApps, free)
    const caps = { free, perApp: this.options.perAppConcurrency, perWebhook: this.options.perWebhookConcurrency }
    const take = this.fairShare.plan(queues, caps, this.inFlight)
    if (take.size === 0) return false
    const started: Attempt[] = []
    const claim = deferred<boolean>()
    /** settles once this claim's attempts have started (with whether a webhook gave all it was asked for) */
    const begun = deferred<boolean>()
    const transaction = writeTransaction(this.options.db, async (tx) => {
      // In one process a deletion aborts the requests before it answers: SQLite needs no wait.
      const writes = backendOf(tx) === 'postgres' ? new ClaimWrites() : undefined
      const deliveries = new DeliveriesRepository(tx)
      // A delivery whose unclaimed attempt is still under way or being recorded is not taken again.
      const due = (await deliveries.dueOf(take, now)).filter((delivery) => !this.unclaimed.has(delivery.id))
      if (due.length === 0) return begun.resolve(false)
      const token = newId()
      const claimed = await deliveries.claim(
        due.map((delivery) => delivery.id),
        token,
        isoOf(nowMs + this.leaseMs),
      )
      // Registered and started before this transaction commits: see the class comment.
      for (const delivery of due) if (claimed.has(delivery.id)) started.push(this.begin(delivery, token, claim.promise, writes))
      const given = new Map<string, number>()
      for (const delivery of due) given.set(delivery.webhook_id, (given.get(delivery.webhook_id) ?? 0) + 1)
      // Claim again at once only where more may be due and a slot is still free for it: a webhook
      // or application now at its cap is claimed for again when a slot is released.
      const roomLeft = (queue: DueQueue) => webhookRoom(queue, caps, this.inFlight) > 0 && appRoom(queue.appId, caps, this.inFlight) > 0
      begun.resolve(
        this.inFlight.size < this.options.concurrency && queues.some((queue) => take.has(queue.webhookId) && given.get(queue.webhookId) === take.get(queue.webhookId) && roomLeft(queue)),
      )
      if (writes !== undefined && started.length > 0) {
        const unwritten = await writes.settle(WRITE_WAIT_MS)
        if (unwritten > 0) {
          this.options.log.info({ started: started.length, unwritten, waitedMs: WRITE_WAIT_MS }, 'webhook dispatcher: claim committed before all its requests were written')
        }
      }
      await this.options.beforeClaimCommit?.(started.length)
    }, { alone: true })
    /** the claim's error, if it did not commit */
    const ended = transaction.then(
      () => {
        claim.resolve(true)
        return undefined
      },
      (error: unknown) => {
        // The claim did not commit, but its requests may be on the wire already: aborting them
        // would not take back what a receiver got. They finish; an answered one is recorded if
        // its delivery is still as the claim read it (finish), the others are sent again.
        claim.resolve(false)
        for (const attempt of started) this.unclaimed.add(attempt.delivery.id)
        if (started.length > 0) this.options.log.warn({ err: error, started: started.length }, 'webhook dispatcher: claim did not commit; its attempts are recorded only if answered')
        return { error }
      },
    )
    const first = await Promise.race([begun.promise, ended])
    if (typeof first === 'object') throw first.error
    if (first === undefined) return false
    // Started: the commit may still wait for the requests to be written (PostgreSQL); claim on meanwhile.
    const committing: Promise<void> = ended.then((failed) => {
      this.committing.delete(committing)
      if (failed !== undefined) this.claimFailed(failed.error)
    })
    this.committing.add(committing)
    return first
  }

  private claimFailed(error: unknown): void {
    // During an outage this fails at every poll: logged when it starts, then once a minute.
    const report = this.claimFailures.failed()
    if (report !== undefined) this.options.log.error({ err: error, ...report }, 'webhook dispatcher: claiming deliveries failed; retrying at each poll')
  }

  /**
   * PostgreSQL: an attempt whose host resolved after its claim had stopped waiting (ClaimWrites)
   * connects under a guard of its own: a transaction that holds its webhook's row as the claim did,
   * until the request is written (at most WRITE_WAIT_MS). A DELETE then either commits first, and
   * the attempt is abandoned before connecting, or waits until the request is in its socket.
   * If the database can't confirm the webhook, the attempt is abandoned and its delivery released.
   */
  private async guardConnection(attempt: Attempt): Promise<boolean> {
    if (!(await attempt.claimCommitted) || attempt.abort.aborted) return false
    while (this.guards.size >= MAX_GUARDS) await Promise.race(this.guards)
    const admitted = deferred<boolean>()
    let answered = false
    const guard = writeTransaction(this.options.db, async (tx) => {
      const live = await new DeliveriesRepository(tx).holdLive(attempt.delivery.webhook_id)
      if (!live) this.webhookStopped(attempt.delivery.webhook_id)
      answered = true
      admitted.resolve(live && !attempt.abort.aborted)
      if (!live) return
      let timer: NodeJS.Timeout | undefined
      await Promise.race([attempt.written, new Promise((resolve) => (timer = setTimeout(resolve, WRITE_WAIT_MS)))])
      clearTimeout(timer)
    }).then(
      () => undefined,
      (error: unknown) => {
        // Not answered yet: nothing went out. Answered: only the lock ended early.
        if (!answered) {
          attempt.stop ??= 'unconfirmed'
          admitted.resolve(false)
        }
        this.options.log.warn({ err: error, webhookId: attempt.delivery.webhook_id }, 'webhook dispatcher: could not guard a late connection')
      },
    )
    const tracked: Promise<void> = guard.finally(() => this.guards.delete(tracked))
    this.guards.add(tracked)
    return admitted.promise
  }

  /**
   * Deletions committed by another process: on PostgreSQL they arrive at once through NOTIFY;
   * this periodic check (once per poll interval) covers SQLite and a LISTEN connection that was down.
   */
  private async abortStoppedElsewhere(): Promise<void> {
    if (this.inFlight.size === 0 || Date.now() - this.lastStopCheckMs < this.options.pollIntervalMs) return
    this.lastStopCheckMs = Date.now()
    for (const webhookId of await this.deliveries.stoppedAmong(this.inFlight.webhooks())) this.webhookStopped(webhookId)
  }

  /** Prepare and call: registers the attempt, signs the request and puts it on the wire. */
  private begin(delivery: DueDelivery, claimToken: string, claimCommitted: Promise<boolean>, writes: ClaimWrites | undefined): Attempt {
    const written = deferred<void>()
    const attempt: Attempt = {
      delivery,
      claimToken,
      number: delivery.attempts + 1,
      startedAtMs: Date.now(),
      abort: new AttemptAbort(),
      stop: undefined,
      claimCommitted,
      written: written.promise,
    }
    this.inFlight.add(attempt)
    writes?.add(attempt)
    const request = signedRequest({
      eventId: delivery.event_id,
      payload: delivery.payload,
      signingSecret: delivery.signing_secret,
      previousSigningSecret: previousSecretInForce(delivery.previous_signing_secret, delivery.previous_secret_expires_at, attempt.startedAtMs),
      encrypted: delivery.encrypted === 1,
      nowMs: attempt.startedAtMs,
    })
    this.sender
      .send({
        url: delivery.url,
        headers: request.headers,
        body: request.body,
        timeoutMs: this.options.timeoutMs,
        abort: attempt.abort,
        onWritten: () => written.resolve(),
        lookup:
          writes === undefined
            ? undefined
            : { looking: () => writes.lookingUp(attempt), admit: async () => writes.resolved(attempt) || (await this.guardConnection(attempt)) },
      })
      .catch((error: unknown): SendResult => ({ kind: 'error', message: error instanceof Error ? error.message : String(error) }))
      .then((result) => this.finish(attempt, result))
    return attempt
  }

  /** Handle the result: success or failure is decided by `decideOutcome`, then written. */
  private finish(attempt: Attempt, result: SendResult): void {
    this.inFlight.remove(attempt)
    const record = decideOutcome(attempt, result, Date.now(), { schedule: this.schedule, random: this.random })
    const handOff = attempt.claimCommitted.then((committed) => {
      const answered = result.kind === 'response' && attempt.stop === undefined
      const written = committed ? this.outcomes.add(record) : answered ? this.outcomes.add({ ...record, unclaimed: true }) : Promise.resolve()
      if (!committed) void written.then(() => this.unclaimed.delete(attempt.delivery.id))
      // Counted against the caps until written: its circuit and delivery are up to date then.
      // Its slot is free only now, so this is when to claim again (not when the request ended).
      void written.then(() => {
        this.inFlight.release(attempt)
        this.kick()
      })
    })
    this.handOffs.add(handOff)
    void handOff.finally(() => this.handOffs.delete(handOff))
  }
}

/** A promise with its resolve function, for what a later step settles. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined
  const promise = new Promise<T>((settle) => {
    resolve = settle
  })
  return { promise, resolve }
}

/** Extra dispatcher settings that are not configuration: injected by tests and benchmarks. */
export type DispatcherOverrides = Partial<Pick<DispatcherOptions, 'resolveHost' | 'retrySchedule' | 'random' | 'beforeClaimCommit' | 'queueWindow'>>

export function createDispatcher(config: Config, db: Db, sink: SignalSink, log: DispatcherLog, overrides: DispatcherOverrides = {}): Dispatcher {
  return new Dispatcher({
    db,
    sink,
    log,
    timeoutMs: config.webhooks.timeoutMs,
    concurrency: config.webhooks.concurrency,
    perAppConcurrency: config.webhooks.perAppConcurrency,
    perWebhookConcurrency: config.webhooks.perWebhookConcurrency,
    pollIntervalMs: config.webhooks.pollIntervalMs,
    allowLoopback: config.nodeEnv !== 'production',
    ...overrides,
  })
}

/** How long a stopping dispatcher lets attempts on the wire finish before aborting them. */
export function shutdownGraceMs(config: Config): number {
  return Math.min(5000, config.webhooks.timeoutMs)
}
