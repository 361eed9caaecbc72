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
}

/** A limiter that can also tell whether a key is full without counting anything (failure throttle). */
export interface PeekableRateLimiter extends RateLimiter {
  /** `allowed` is whether one more would be admitted now; nothing is recorded */
  peek(key: string, limit: number): Promise<RateLimitDecision>
}

export const HOUR_MS = 3_600_000

/**
 * Exact sliding log: per key, a ring of the admission times of the last `limit` admitted
 * requests. A request is admitted only when fewer than `limit` admissions fall in the window
 * ending now, so no 60-minute interval ever holds more than `limit` (a fixed window lets
 * twice the limit through at its edge). Memory: 8 bytes per admitted request in the window.
 */
export class MemoryRateLimiter implements PeekableRateLimiter {
  private readonly logs = new Map<string, { ring: Float64Array; head: number; count: number }>()
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

  private dropExpired(log: { ring: Float64Array; head: number; count: number }, now: number): void {
    while (log.count > 0 && now - this.oldest(log) >= this.windowMs) {
      log.head = (log.head + 1) % log.ring.length
      log.count--
    }
  }

  async consume(key: string, limit: number): Promise<RateLimitDecision> {
    return this.consumeSync(key, limit)
  }

  consumeSync(key: string, limit: number): RateLimitDecision {
    const now = this.now()
    this.sweepOccasionally(now)
    let log = this.logs.get(key)
    if (log === undefined || log.ring.length !== limit) {
      if (log === undefined && this.logs.size >= this.maxKeys) {
        const oldestKey = this.logs.keys().next()
        if (oldestKey.done !== true) this.logs.delete(oldestKey.value)
      }
      log = this.resized(log, limit)
      this.logs.set(key, log)
    }
    // Drop admissions that have left the window (oldest first).
    this.dropExpired(log, now)
    const windowSeconds = Math.round(this.windowMs / 1000)
    if (log.count >= limit) {
      return { allowed: false, limit, remaining: 0, resetSeconds: this.secondsUntilFree(log, now), windowSeconds }
    }
    log.ring[(log.head + log.count) % log.ring.length] = now
    log.count++
    return { allowed: true, limit, remaining: limit - log.count, resetSeconds: this.secondsUntilFree(log, now), windowSeconds }
  }

  private oldest(log: { ring: Float64Array; head: number }): number {
    return log.ring[log.head] ?? 0
  }

  private secondsUntilFree(log: { ring: Float64Array; head: number; count: number }, now: number): number {
    if (log.count === 0) return 0
    return Math.max(1, Math.ceil((this.oldest(log) + this.windowMs - now) / 1000))
  }

  /** A key's limit changed (operator override): keep its newest admissions. */
  private resized(log: { ring: Float64Array; head: number; count: number } | undefined, limit: number) {
    const ring = new Float64Array(Math.max(1, limit))
    let count = 0
    if (log !== undefined) {
      const keep = Math.min(log.count, ring.length)
      for (let i = log.count - keep; i < log.count; i++) {
        ring[count++] = log.ring[(log.head + i) % log.ring.length] ?? 0
      }
    }
    return { ring, head: 0, count }
  }

  /** keys currently held (tests: the memory bound) */
  get size(): number {
    return this.logs.size
  }

  /** Forget keys with no admission left in the window, so idle keys cost no memory. */
  private sweepOccasionally(now: number): void {
    if (++this.consumedSinceSweep < 10_000) return
    this.consumedSinceSweep = 0
    for (const [key, log] of this.logs) {
      const newest = log.ring[(log.head + log.count - 1 + log.ring.length) % log.ring.length] ?? 0
      if (log.count === 0 || now - newest >= this.windowMs) this.logs.delete(key)
    }
  }
}
