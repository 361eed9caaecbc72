/**
 * Rolling-window rate limiting. The limiter sits behind an interface so a shared store
 * (Redis) can replace the in-memory one without touching the auth hook.
 */
export interface RateLimitDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** whole seconds until one more request is admitted (the oldest counted request leaves the window) */
  resetSeconds: number
  windowSeconds: number
}

export interface RateLimiter {
  consume(key: string, limit: number): Promise<RateLimitDecision>
  /**
   * consume(key, limit) unless `guard` is full, as its counter's peek would say; a full guard
   * consumes nothing. Where both counts live in one Redis, in one round trip.
   */
  consumeGuarded(key: string, limit: number, guard: RateLimitGuard): Promise<GuardedDecision>
  /**
   * consume or consumeGuarded (with `guard`) answered at once, by a limiter that counts in this
   * process; absent where an answer has to be waited for, and undefined when the guard's counter
   * can't answer at once.
   */
  consumeAtOnce?(key: string, limit: number, guard: RateLimitGuard | undefined): GuardedDecision | undefined
}

/** A limiter that can also tell whether a key is full without counting anything (failure throttle). */
export interface PeekableRateLimiter extends RateLimiter {
  /** `allowed` is whether one more would be admitted now; nothing is recorded */
  peek(key: string, limit: number): Promise<RateLimitDecision>
}

/** A count that must have room before a limiter consumes: the failed authentications of the caller's address. */
export interface RateLimitGuard {
  counter: PeekableRateLimiter
  key: string
  limit: number
}

/** The limiter's decision, or, when the guard was full, the guard's (and nothing consumed). */
export type GuardedDecision = { guardFull: false; decision: RateLimitDecision } | { guardFull: true; guard: RateLimitDecision }

/** consumeGuarded as two calls: the guard's peek, then the consume. */
export async function consumeAfterPeek(limiter: RateLimiter, key: string, limit: number, guard: RateLimitGuard): Promise<GuardedDecision> {
  const peeked = await guard.counter.peek(guard.key, guard.limit)
  if (!peeked.allowed) return { guardFull: true, guard: peeked }
  return { guardFull: false, decision: await limiter.consume(key, limit) }
}

export const HOUR_MS = 3_600_000

/** One key's log: the admission times in the window, oldest at `head`, in a ring that grows on demand. */
interface Log {
  ring: Float64Array
  head: number
  count: number
  /** the limit the key was last counted against (a change keeps its newest admissions) */
  limit: number
}

/**
 * Slots a new key's ring starts with. Up to 8 doubles, V8 keeps a Float64Array's data in the
 * object itself (no backing store of its own): a key with one admission costs about 320 bytes.
 */
const INITIAL_CAPACITY = 4

/** Room for `count` admissions and as many again, within what `limit` can ever hold. */
function capacityFor(count: number, limit: number): number {
  return Math.min(Math.max(1, limit), Math.max(INITIAL_CAPACITY, 2 * count))
}

/** Moves the log's admissions, oldest first, to a new ring of `capacity` slots (at least its count). */
function refit(log: Log, capacity: number): void {
  const ring = new Float64Array(capacity)
  for (let i = 0; i < log.count; i++) ring[i] = log.ring[(log.head + i) % log.ring.length] ?? 0
  log.ring = ring
  log.head = 0
}

/**
 * Exact sliding log: per key, a ring of the admission times of the last `limit` admitted
 * requests. A request is admitted only when fewer than `limit` admissions fall in the window
 * ending now, so no 60-minute interval ever holds more than `limit` (a fixed window lets
 * twice the limit through at its edge).
 *
 * Memory follows use, not the limit: a ring starts at INITIAL_CAPACITY slots, doubles when full
 * (never past `limit`), and is cut to twice its count once under a quarter full (at the key's
 * next request, or the sweep). Whatever its limit, a key holds INITIAL_CAPACITY slots of 8 bytes,
 * or at most 4 per admission it counted then. Doubling, and cutting only at a quarter, keep the
 * copies O(1) amortized per request.
 */
export class MemoryRateLimiter implements PeekableRateLimiter {
  private readonly logs = new Map<string, Log>()
  private readonly windowMs: number
  private readonly now: () => number
  private readonly maxKeys: number
  private consumedSinceSweep = 0

  /**
   * `maxKeys` bounds memory when keys are chosen by callers (client addresses): past it, the
   * oldest-created key is forgotten, so rotating addresses cannot grow the map without limit.
   */
  constructor(options: { windowMs?: number; now?: () => number; maxKeys?: number } = {}) {
    this.windowMs = options.windowMs ?? HOUR_MS
    this.now = options.now ?? Date.now
    this.maxKeys = options.maxKeys ?? Number.POSITIVE_INFINITY
  }

  async peek(key: string, limit: number): Promise<RateLimitDecision> {
    return this.peekSync(key, limit)
  }

  /** Like consumeSync without recording; an unknown key creates no entry. */
  peekSync(key: string, limit: number): RateLimitDecision {
    const now = this.now()
    const windowSeconds = Math.round(this.windowMs / 1000)
    const log = this.logs.get(key)
    if (log === undefined) return { allowed: true, limit, remaining: limit, resetSeconds: 0, windowSeconds }
    this.dropExpired(log, now)
    const count = Math.min(log.count, limit)
    const resetSeconds = this.secondsUntilFree(log, now)
    return { allowed: count < limit, limit, remaining: limit - count, resetSeconds, windowSeconds }
  }

  private dropExpired(log: Log, now: number): void {
    while (log.count > 0 && now - this.oldest(log) >= this.windowMs) {
      log.head = (log.head + 1) % log.ring.length
      log.count--
    }
  }

  async consume(key: string, limit: number): Promise<RateLimitDecision> {
    return this.consumeSync(key, limit)
  }

  consumeGuarded(key: string, limit: number, guard: RateLimitGuard): Promise<GuardedDecision> {
    return consumeAfterPeek(this, key, limit, guard)
  }

  consumeAtOnce(key: string, limit: number, guard: RateLimitGuard | undefined): GuardedDecision | undefined {
    if (guard !== undefined) {
      if (!(guard.counter instanceof MemoryRateLimiter)) return undefined
      const peeked = guard.counter.peekSync(guard.key, guard.limit)
      if (!peeked.allowed) return { guardFull: true, guard: peeked }
    }
    return { guardFull: false, decision: this.consumeSync(key, limit) }
  }

  consumeSync(key: string, limit: number): RateLimitDecision {
    const now = this.now()
    this.sweepOccasionally(now)
    let log = this.logs.get(key)
    if (log === undefined) {
      if (this.logs.size >= this.maxKeys) {
        const oldestKey = this.logs.keys().next()
        if (oldestKey.done !== true) this.logs.delete(oldestKey.value)
      }
      log = { ring: new Float64Array(capacityFor(0, limit)), head: 0, count: 0, limit }
      this.logs.set(key, log)
    } else if (log.limit !== limit) {
      // A key's limit changed (operator override): keep its newest admissions.
      this.dropOldestBeyond(log, limit)
      log.limit = limit
    }
    // Drop admissions that have left the window (oldest first).
    this.dropExpired(log, now)
    this.shrinkIfSparse(log)
    const windowSeconds = Math.round(this.windowMs / 1000)
    if (log.count >= limit) {
      return { allowed: false, limit, remaining: 0, resetSeconds: this.secondsUntilFree(log, now), windowSeconds }
    }
    if (log.count === log.ring.length) refit(log, capacityFor(log.count, limit))
    log.ring[(log.head + log.count) % log.ring.length] = now
    log.count++
    return { allowed: true, limit, remaining: limit - log.count, resetSeconds: this.secondsUntilFree(log, now), windowSeconds }
  }

  /**
   * Makes `key` hold `count` admissions as a shared counter last saw them (`seenAtMs`): the oldest
   * leaving the window at `oldestLeavesAtMs`, the others at `seenAtMs`, as late as they can have
   * been, so none leaves this log before it left the shared one. Replaces what the key held.
   */
  continueFrom(key: string, limit: number, count: number, oldestLeavesAtMs: number, seenAtMs: number): void {
    const held = Math.max(0, Math.min(count, limit))
    const log: Log = { ring: new Float64Array(capacityFor(held, limit)), head: 0, count: held, limit }
    for (let i = 0; i < held; i++) log.ring[i] = i === 0 ? Math.min(seenAtMs, oldestLeavesAtMs - this.windowMs) : seenAtMs
    if (!this.logs.has(key) && this.logs.size >= this.maxKeys) {
      const oldestKey = this.logs.keys().next()
      if (oldestKey.done !== true) this.logs.delete(oldestKey.value)
    }
    this.logs.set(key, log)
  }

  /** Drops `key`'s log. */
  forget(key: string): void {
    this.logs.delete(key)
  }

  private oldest(log: Log): number {
    return log.ring[log.head] ?? 0
  }

  private secondsUntilFree(log: Log, now: number): number {
    if (log.count === 0) return 0
    return Math.max(1, Math.ceil((this.oldest(log) + this.windowMs - now) / 1000))
  }

  private dropOldestBeyond(log: Log, limit: number): void {
    const excess = log.count - Math.max(0, limit)
    if (excess <= 0) return
    log.head = (log.head + excess) % log.ring.length
    log.count -= excess
  }

  /**
   * Cuts a ring under a quarter full (or larger than its limit now allows) to capacityFor its
   * count: cutting at a quarter, not at a half, means a cut ring must double its count or lose
   * half of it before it is copied again.
   */
  private shrinkIfSparse(log: Log): void {
    const capacity = capacityFor(log.count, log.limit)
    if (capacity < log.ring.length && (log.count < log.ring.length / 4 || log.ring.length > Math.max(1, log.limit))) refit(log, capacity)
  }

  /** keys currently held (tests: the memory bound) */
  get size(): number {
    return this.logs.size
  }

  /** ring slots held for `key`, 0 when it has no entry (tests: memory follows use) */
  capacityOf(key: string): number {
    return this.logs.get(key)?.ring.length ?? 0
  }

  /**
   * Forget keys with no admission left in the window, so idle keys cost no memory; cut the rings
   * of keys gone quiet, which no request of their own would cut.
   */
  private sweepOccasionally(now: number): void {
    if (++this.consumedSinceSweep < 10_000) return
    this.consumedSinceSweep = 0
    for (const [key, log] of this.logs) {
      const newest = log.ring[(log.head + log.count - 1 + log.ring.length) % log.ring.length] ?? 0
      if (log.count === 0 || now - newest >= this.windowMs) {
        this.logs.delete(key)
      } else {
        this.dropExpired(log, now)
        this.shrinkIfSparse(log)
      }
    }
  }
}
