import type { Redis } from 'ioredis'

/** A Redis call refused or given up by the circuit: the caller answers without Redis. */
export class RedisUnavailableError extends Error {
  constructor(reason: string) {
    super(`Redis is unavailable: ${reason}`)
    this.name = 'RedisUnavailableError'
  }
}

export interface RedisCircuitOptions {
  /** how long one call may take before it counts as failed and the caller goes on without it */
  budgetMs?: number
  /** failed calls in a row that open the circuit */
  failuresToOpen?: number
  /** while open, how often a PING checks whether Redis answers again */
  probeEveryMs?: number
}

/** Each call's default budget (REDIS_TIMEOUT_MS): a local Redis answers in well under a millisecond. */
export const REDIS_CALL_BUDGET_MS = 100
const FAILURES_TO_OPEN = 3
const PROBE_EVERY_MS = 250

/**
 * Bounds every wait on Redis. A call that does not answer within its budget fails (the caller
 * falls back), so a Redis that stalls with its connection open costs a request at most one
 * budget. After `failuresToOpen` failures in a row the circuit opens: calls fail at once, without
 * touching Redis, while a PING in the background (never on a request's path) checks every
 * `probeEveryMs` whether Redis answers again, and closes the circuit when it does.
 */
export class RedisCircuit {
  private readonly budgetMs: number
  private readonly failuresToOpen: number
  private readonly probeEveryMs: number
  private failures = 0
  private probeTimer: NodeJS.Timeout | undefined
  private closed = false
  private readonly listeners = new Set<(available: boolean) => void>()

  constructor(
    private readonly redis: Redis,
    options: RedisCircuitOptions = {},
  ) {
    this.budgetMs = options.budgetMs ?? REDIS_CALL_BUDGET_MS
    this.failuresToOpen = options.failuresToOpen ?? FAILURES_TO_OPEN
    this.probeEveryMs = options.probeEveryMs ?? PROBE_EVERY_MS
  }

  /** false while the circuit is open: calls fail at once */
  get available(): boolean {
    return this.probeTimer === undefined
  }

  /** `listener(available)` whenever the circuit opens or closes. */
  onChange(listener: (available: boolean) => void): void {
    this.listeners.add(listener)
  }

  /** `command`'s answer within the budget; RedisUnavailableError at once while open, or past the budget. */
  async call<T>(command: (redis: Redis) => Promise<T>): Promise<T> {
    if (!this.available) throw new RedisUnavailableError('circuit open')
    try {
      const answer = await withinBudget(command(this.redis), this.budgetMs)
      this.failures = 0
      return answer
    } catch (error) {
      if (++this.failures >= this.failuresToOpen) this.open()
      throw error
    }
  }

  /** Stops probing (the app closes). */
  close(): void {
    this.closed = true
    clearTimeout(this.probeTimer)
  }

  private open(): void {
    if (!this.available || this.closed) return
    this.schedule()
    this.emit(false)
  }

  private schedule(): void {
    this.probeTimer = setTimeout(() => void this.probe(), this.probeEveryMs)
    this.probeTimer.unref()
  }

  private async probe(): Promise<void> {
    const answers = await withinBudget(this.redis.ping(), this.budgetMs).then(
      (reply) => reply === 'PONG',
      () => false,
    )
    if (this.closed) return
    if (!answers) {
      this.schedule()
      return
    }
    this.probeTimer = undefined
    this.failures = 0
    this.emit(true)
  }

  private emit(available: boolean): void {
    for (const listener of this.listeners) {
      try {
        listener(available)
      } catch {
        // a log hook's failure must not change what the circuit does
      }
    }
  }
}

function withinBudget<T>(work: Promise<T>, budgetMs: number): Promise<T> {
  // One promise and one timer per call, not a race of promises and a `finally`: every request's
  // rate-limit call comes through here.
  return new Promise<T>((resolve, reject) => {
    let late: NodeJS.Immediate | undefined
    // Timers run before I/O in the event loop's turn: after a busy stretch of the loop, a reply
    // already in the socket is read first (setImmediate runs after I/O), so only a Redis that
    // really did not answer counts as late.
    const timer = setTimeout(() => {
      late = setImmediate(() => reject(new RedisUnavailableError(`no answer within ${budgetMs} ms`)))
    }, budgetMs)
    work.then(
      (answer) => {
        clearTimeout(timer)
        clearImmediate(late)
        resolve(answer)
      },
      (error: unknown) => {
        clearTimeout(timer)
        clearImmediate(late)
        reject(error)
      },
    )
  })
}

const circuits = new WeakMap<Redis, RedisCircuit>()

/** The one circuit of a Redis client: every caller of one client shares its failures and its state. */
export function circuitOf(redis: Redis, options?: RedisCircuitOptions): RedisCircuit {
  let circuit = circuits.get(redis)
  if (circuit === undefined) {
    circuit = new RedisCircuit(redis, options)
    circuits.set(redis, circuit)
  }
  return circuit
}
