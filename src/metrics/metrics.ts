import type { FastifyReply, FastifyRequest } from 'fastify'
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client'
import type { ChainStatus } from '../chains/status.js'
import { moneyActivity } from '../ledger/activity.js'
import { PUBLIC } from '../resources/manifest.js'

/** The route label of a request no route matched (404s, the router's refusals): one value, whatever the path. */
export const UNMATCHED_ROUTE = 'unmatched'

/** Seconds: an API answer takes about a millisecond; the top buckets catch database and Redis stalls. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const DURATION = 'devplatform_http_request_duration_seconds'

/** One method and route's latency histogram, kept by hand and written at scrape time (durationText). */
interface DurationSeries {
  method: string
  route: string
  /** observations per bucket of DURATION_BUCKETS, not cumulative; the last one is over the top bound */
  buckets: number[]
  sum: number
  count: number
}

interface RouteSeries {
  labels: { method: string; route: string; status: string }
  /** answers so far: counted here, handed to prom-client at scrape time */
  count: number
  duration: DurationSeries
}

/** The delivery queue as one read saw it (src/metrics/deliveries.ts). */
export interface QueueState {
  /** pending deliveries, those being attempted included */
  depth: number
  /** seconds the oldest due delivery has waited; 0 when none is due */
  oldestDueAgeSeconds: number
  /** attempts recorded in the webhooks' statistics, every instance's */
  succeeded: number
  failed: number
  /** drains not yet ended (each waits for its next step) */
  drainsInFlight: number
  /** seconds the longest-waiting due drain has waited past its step's time; 0 when none is due */
  drainsOldestDueAgeSeconds: number
  /** transfers and payment intents being moved on (funds arrived, not yet ended) */
  transfersInFlight: number
  /** seconds the longest-waiting due transfer has waited past its step's time; 0 when none is due */
  transfersOldestDueAgeSeconds: number
}

/**
 * The process's Prometheus series. Each HTTP answer costs one Map lookup and a few additions to
 * plain numbers. prom-client's labelled counter and histogram hash and validate the labels on
 * every call: on the built server its histogram alone took 2 % of GET /webhooks/{id}'s CPU
 * (bench/metrics-cost.ts). So the request counter gets its counts at scrape time, and the latency
 * histogram is written at scrape time by durationText.
 */
export class Metrics {
  readonly registry = new Registry()
  private readonly durations = new Map<string, DurationSeries>()
  private readonly rateLimited: Counter
  private readonly authRefused: Counter<'status'>
  private readonly queueDepth: Gauge
  private readonly oldestDue: Gauge
  private readonly attempts: Counter<'outcome'>
  private readonly drainsInFlight: Gauge
  private readonly drainsOldestDue: Gauge
  private readonly transfersInFlight: Gauge
  private readonly transfersOldestDue: Gauge
  private readonly series = new Map<string, RouteSeries>()
  private readonly chainGauges: Gauge<'chain'>[]
  private readonly chainHead: Gauge<'chain'>
  private readonly chainCursor: Gauge<'chain'>
  private readonly chainLag: Gauge<'chain'>
  private readonly chainHeadAge: Gauge<'chain'>
  private readonly chainLastError: Gauge<'chain'>
  private readonly chainReversed: Gauge<'chain'>
  private readonly chainAddresses: Gauge<'chain'>
  private readonly chainAlert: Gauge<'chain'>
  private readonly chainDeposits: Gauge<'chain' | 'status'>
  private readonly chainPayouts: Gauge<'chain' | 'status'>
  private readonly chainOldestPayout: Gauge<'chain'>
  private readonly chainGasBalance: Gauge<'chain'>

  constructor(options: { redisAvailable?: () => boolean } = {}) {
    const registers = [this.registry]
    collectDefaultMetrics({ register: this.registry })
    const series = this.series
    new Counter({
      name: 'devplatform_http_requests_total',
      help: 'HTTP answers by route pattern (unmatched: no route), method and status',
      labelNames: ['method', 'route', 'status'],
      registers,
      collect() {
        this.reset()
        for (const one of series.values()) this.inc(one.labels, one.count)
      },
    })
    this.rateLimited = new Counter({
      name: 'devplatform_rate_limit_refusals_total',
      help: "Requests refused with 429 by an API key's hourly rate limit",
      registers,
    })
    this.authRefused = new Counter({
      name: 'devplatform_auth_refusals_total',
      help: 'Requests the authentication hook refused: 401 bad or missing credentials, 403 inactive key or missing scope, 429 failed-authentication throttle',
      labelNames: ['status'],
      registers,
    })
    this.queueDepth = new Gauge({
      name: 'devplatform_deliveries_pending',
      help: 'Pending webhook deliveries in the database (every instance shares them), those being attempted included',
      registers,
    })
    this.oldestDue = new Gauge({
      name: 'devplatform_deliveries_oldest_due_age_seconds',
      help: 'How long the oldest due pending delivery has waited past its due time; 0 when none is due',
      registers,
    })
    this.attempts = new Counter({
      name: 'devplatform_webhook_attempts_total',
      help: "Delivery attempts by outcome, from the webhooks' statistics (every instance's attempts)",
      labelNames: ['outcome'],
      registers,
    })
    this.drainsInFlight = new Gauge({
      name: 'devplatform_drains_in_flight',
      help: 'Drains not yet ended, in the database (every instance shares them)',
      registers,
    })
    this.drainsOldestDue = new Gauge({
      name: 'devplatform_drains_oldest_due_age_seconds',
      help: "How long the longest-waiting due drain has waited past its step's time; 0 when none is due",
      registers,
    })
    this.transfersInFlight = new Gauge({
      name: 'devplatform_transfers_in_flight',
      help: 'Transfers and payment intents whose funds are moving (arrived or reserved, not yet ended), in the database',
      registers,
    })
    this.transfersOldestDue = new Gauge({
      name: 'devplatform_transfers_oldest_due_age_seconds',
      help: "How long the longest-waiting due transfer has waited past its step's time; 0 when none is due",
      registers,
    })
    new Counter({
      name: 'devplatform_drain_state_changes_total',
      help: 'Drains this process moved into each state (funds_received: deposits taken), counted once committed',
      labelNames: ['state'],
      registers,
      collect() {
        this.reset()
        for (const [state, count] of moneyActivity.drainStates) this.inc({ state }, count)
      },
    })
    new Counter({
      name: 'devplatform_transfer_state_changes_total',
      help: 'Transfers and payment intents this process moved into each state (awaiting_funds and funds_received at creation), counted once committed',
      labelNames: ['state'],
      registers,
      collect() {
        this.reset()
        for (const [state, count] of moneyActivity.transferStates) this.inc({ state }, count)
      },
    })
    new Counter({
      name: 'devplatform_ledger_entries_total',
      help: 'Ledger entries this process wrote (pending, posted) or settled (posted, voided), counted once committed',
      labelNames: ['status'],
      registers,
      collect() {
        this.reset()
        for (const [status, count] of moneyActivity.ledgerEntries) this.inc({ status }, count)
      },
    })
    const chainGauge = (name: string, help: string) => new Gauge({ name, help, labelNames: ['chain'], registers })
    this.chainHead = chainGauge('devplatform_chain_head_block', 'The newest block number the watcher saw on the chain (from the database: any instance may watch)')
    this.chainCursor = chainGauge('devplatform_chain_cursor_block', 'The first block the watcher has not read yet')
    this.chainLag = chainGauge('devplatform_chain_lag_blocks', 'Blocks seen on the chain and not read yet (head + 1 - cursor)')
    this.chainHeadAge = chainGauge('devplatform_chain_head_age_seconds', 'Seconds since the watcher last saw the head; absent until it saw one')
    this.chainLastError = chainGauge('devplatform_chain_last_error_timestamp_seconds', "Unix time of the watcher's last RPC fault on the chain; 0 when none")
    this.chainReversed = chainGauge('devplatform_chain_reversed_deposits', 'Credited deposits a reorg deeper than the confirmations took away: alert when above 0 (docs/chains.md#reorgs)')
    this.chainAddresses = chainGauge('devplatform_chain_watched_addresses', 'Receiving addresses allocated on the chain')
    this.chainAlert = chainGauge('devplatform_chain_alert', '1 when `devplatform chains status` would exit 1 for the chain (reversed deposits, or a head unseen too long)')
    this.chainDeposits = new Gauge({ name: 'devplatform_chain_deposits', help: 'Deposits seen on the chain, by status', labelNames: ['chain', 'status'], registers })
    this.chainPayouts = new Gauge({ name: 'devplatform_chain_payouts', help: 'Live payouts on the chain, by status (queued, signed, submitted: not ended)', labelNames: ['chain', 'status'], registers })
    this.chainOldestPayout = chainGauge('devplatform_chain_oldest_open_payout_age_seconds', 'Seconds since the oldest payout not ended was queued; absent when none')
    this.chainGasBalance = chainGauge('devplatform_chain_hot_wallet_gas_wei', "The hot wallet's balance of the chain's coin as its sender last saw it, in wei; alert below minGasBalanceGwei")
    this.chainGauges = [this.chainHead, this.chainCursor, this.chainLag, this.chainHeadAge, this.chainLastError, this.chainReversed, this.chainAddresses, this.chainAlert, this.chainOldestPayout, this.chainGasBalance]
    const { redisAvailable } = options
    if (redisAvailable !== undefined) {
      new Gauge({
        name: 'devplatform_redis_available',
        help: "1 while the Redis circuit is closed; 0 while it is open (rate limits counted per instance)",
        registers,
        collect() {
          this.set(redisAvailable() ? 1 : 0)
        },
      })
    }
  }

  /** The onResponse hook's work: the request's series, and the refusal counters it falls in. */
  observe(request: FastifyRequest, reply: FastifyReply): void {
    const method = request.method
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE
    const status = reply.statusCode
    const key = `${status} ${method} ${route}`
    let series = this.series.get(key)
    if (series === undefined) {
      series = { labels: { method, route, status: String(status) }, count: 0, duration: this.durationOf(method, route) }
      this.series.set(key, series)
    }
    series.count++
    const seconds = reply.elapsedTime / 1000
    const duration = series.duration
    let bucket = 0
    while (bucket < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[bucket] ?? Infinity)) bucket++
    duration.buckets[bucket] = (duration.buckets[bucket] ?? 0) + 1
    duration.sum += seconds
    duration.count++
    if ((status === 401 || status === 403 || status === 429) && refusedByAuthentication(request)) {
      // The rate limit's 429 is the only one that comes after the RateLimit header is set
      // (src/auth/authenticate.ts); the failure throttle's comes before it.
      if (status === 429 && reply.hasHeader('ratelimit')) this.rateLimited.inc()
      else this.authRefused.inc({ status: String(status) })
    }
  }

  /** The whole exposition: prom-client's series, then the latency histogram. */
  async exposition(): Promise<string> {
    return `${await this.registry.metrics()}\n${this.durationText()}`
  }

  get contentType(): string {
    return this.registry.contentType
  }

  private durationOf(method: string, route: string): DurationSeries {
    const key = `${method} ${route}`
    let duration = this.durations.get(key)
    if (duration === undefined) {
      duration = { method, route, buckets: new Array<number>(DURATION_BUCKETS.length + 1).fill(0), sum: 0, count: 0 }
      this.durations.set(key, duration)
    }
    return duration
  }

  /** The latency histogram in the text format, as prom-client writes one: cumulative buckets, then +Inf, sum and count. */
  private durationText(): string {
    const lines = [
      `# HELP ${DURATION} Time from a request arriving to its answer being sent, by route pattern and method`,
      `# TYPE ${DURATION} histogram`,
    ]
    for (const series of this.durations.values()) {
      const labels = `method="${escapeLabel(series.method)}",route="${escapeLabel(series.route)}"`
      let cumulative = 0
      DURATION_BUCKETS.forEach((bound, i) => {
        cumulative += series.buckets[i] ?? 0
        lines.push(`${DURATION}_bucket{le="${bound}",${labels}} ${cumulative}`)
      })
      lines.push(`${DURATION}_bucket{le="+Inf",${labels}} ${series.count}`)
      lines.push(`${DURATION}_sum{${labels}} ${series.sum}`)
      lines.push(`${DURATION}_count{${labels}} ${series.count}`)
    }
    return `${lines.join('\n')}\n`
  }

  /** The chains' figures (src/chains/status.ts), read at scrape time; undefined (the read failed) removes them until the next read. */
  setChains(chains: readonly ChainStatus[] | undefined): void {
    for (const gauge of this.chainGauges) gauge.reset()
    this.chainDeposits.reset()
    this.chainPayouts.reset()
    for (const status of chains ?? []) {
      const labels = { chain: status.chain }
      if (status.head !== null) this.chainHead.set(labels, status.head)
      if (status.cursor !== null) this.chainCursor.set(labels, status.cursor)
      if (status.lag !== null) this.chainLag.set(labels, status.lag)
      if (status.headAgeSeconds !== null) this.chainHeadAge.set(labels, status.headAgeSeconds)
      this.chainLastError.set(labels, status.lastErrorAt === null ? 0 : Date.parse(status.lastErrorAt) / 1000)
      this.chainReversed.set(labels, status.deposits.reversed)
      this.chainAddresses.set(labels, status.watchedAddresses)
      this.chainAlert.set(labels, status.alerts.length > 0 ? 1 : 0)
      for (const [state, count] of Object.entries(status.deposits)) this.chainDeposits.set({ chain: status.chain, status: state }, count)
      for (const [state, count] of Object.entries(status.payouts)) this.chainPayouts.set({ chain: status.chain, status: state }, count)
      if (status.oldestOpenPayoutAgeSeconds !== null) this.chainOldestPayout.set(labels, status.oldestOpenPayoutAgeSeconds)
      if (status.hotWallet !== null) this.chainGasBalance.set(labels, Number(status.hotWallet.gasBalanceWei))
    }
  }

  /** The delivery queue's figures, read at scrape time; undefined (the read failed) removes them until the next read. */
  setQueue(state: QueueState | undefined): void {
    if (state === undefined) {
      this.queueDepth.reset()
      this.oldestDue.reset()
      this.attempts.reset()
      this.drainsInFlight.reset()
      this.drainsOldestDue.reset()
      this.transfersInFlight.reset()
      this.transfersOldestDue.reset()
      return
    }
    this.drainsInFlight.set(state.drainsInFlight)
    this.drainsOldestDue.set(state.drainsOldestDueAgeSeconds)
    this.transfersInFlight.set(state.transfersInFlight)
    this.transfersOldestDue.set(state.transfersOldestDueAgeSeconds)
    this.queueDepth.set(state.depth)
    this.oldestDue.set(state.oldestDueAgeSeconds)
    // Totals kept by the database: the counter takes the value read, which only grows.
    this.attempts.reset()
    this.attempts.inc({ outcome: 'succeeded' }, state.succeeded)
    this.attempts.inc({ outcome: 'failed' }, state.failed)
  }
}

/**
 * An answer the authentication hook gave: on an authenticated route (a scope other than PUBLIC)
 * before it set the caller (it sets request.auth last, once every check passed).
 */
function refusedByAuthentication(request: FastifyRequest): boolean {
  const scope = request.routeOptions.config.scope
  return scope !== undefined && scope !== PUBLIC && request.auth === null
}

/** A label value in the text format: backslash, double quote and line feed escaped. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}
