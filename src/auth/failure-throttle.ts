/**
 * Slows down guessing of client credentials: failed authentications (unknown key or wrong
 * secret) are counted per client address and per presented client key in a sliding window.
 *
 * - Per address: once full, every request from the address is refused (429) BEFORE its
 *   credentials are checked, so a refused guess reveals nothing (answering 200 to a right secret
 *   and 429 to a wrong one would be an oracle at full speed). Only that address is refused.
 * - Per client key: once full, wrong secrets for that key are refused (429 instead of 401), but
 *   the right secret still succeeds, so an attacker elsewhere cannot lock the key's owner out.
 *   Unknown keys are counted the same way (by a digest of the presented text), so a 429 never
 *   tells a guesser that a key exists. What bounds a guesser spread over many addresses is the
 *   per-address limit times their addresses, and the secret's 192 bits.
 *
 * Successful requests are never counted. Refused requests are not counted either.
 */
import { createHash } from 'node:crypto'
import type { PeekableRateLimiter, RateLimitDecision, RateLimitGuard } from './rate-limiter.js'

export interface FailureLimits {
  /** failures per window from one client address; 0 turns the check off */
  perAddress: number
  /** failures per window for one client key; 0 turns the check off */
  perKey: number
  windowSeconds: number
}

/** What the operator's log line holds: never a secret, never the text of an unknown key. */
export interface ThrottledEvent {
  scope: 'address' | 'key'
  clientAddress: string
  /** the key's id when the presented key exists */
  keyId: string | undefined
  limit: number
  windowSeconds: number
}

/** Entries kept in memory (counters and "already logged" marks): past this, the oldest go. */
export const MAX_TRACKED = 100_000

export class FailureThrottle {
  private readonly logged = new Map<string, number>()
  private readonly now: () => number

  constructor(
    private readonly counter: PeekableRateLimiter,
    readonly limits: FailureLimits,
    private readonly onThrottled: (event: ThrottledEvent) => void,
    options: { now?: () => number } = {},
  ) {
    this.now = options.now ?? Date.now
  }

  /** Seconds to wait when the address may not try now; undefined when it may. */
  async addressRetryAfter(clientAddress: string): Promise<number | undefined> {
    const guard = this.addressGuard(clientAddress)
    if (guard === undefined) return undefined
    const decision = await this.counter.peek(guard.key, guard.limit)
    return decision.allowed ? undefined : this.addressFull(clientAddress, decision)
  }

  /** The address's failure count as a guard of the rate limit's consume (one call for both); undefined when off. */
  addressGuard(clientAddress: string): RateLimitGuard | undefined {
    if (this.limits.perAddress === 0) return undefined
    return { counter: this.counter, key: addressKey(clientAddress), limit: this.limits.perAddress }
  }

  /** Seconds to wait for an address whose failures are full (`decision`: its count's, refused); logged once per burst. */
  addressFull(clientAddress: string, decision: RateLimitDecision): number {
    this.logOnce(addressKey(clientAddress), { scope: 'address', clientAddress, keyId: undefined, limit: this.limits.perAddress, windowSeconds: this.limits.windowSeconds })
    return Math.max(1, decision.resetSeconds)
  }

  /**
   * Counts one failed authentication. Returns the seconds to wait when it must be answered 429
   * (the key's failures are full, or the address filled up meanwhile); undefined for a plain 401.
   */
  async failed(clientAddress: string, clientKey: string, keyId: string | undefined): Promise<number | undefined> {
    if (this.limits.perAddress > 0) {
      const decision = await this.counter.consume(addressKey(clientAddress), this.limits.perAddress)
      if (!decision.allowed) {
        this.logOnce(addressKey(clientAddress), { scope: 'address', clientAddress, keyId, limit: this.limits.perAddress, windowSeconds: this.limits.windowSeconds })
        return Math.max(1, decision.resetSeconds)
      }
    }
    if (this.limits.perKey > 0) {
      const counted = clientKeyKey(clientKey)
      const decision = await this.counter.consume(counted, this.limits.perKey)
      if (!decision.allowed) {
        this.logOnce(counted, { scope: 'key', clientAddress, keyId, limit: this.limits.perKey, windowSeconds: this.limits.windowSeconds })
        return Math.max(1, decision.resetSeconds)
      }
    }
    return undefined
  }

  /** One line per throttled burst and window (per instance), so an operator can alert on it. */
  private logOnce(mark: string, event: ThrottledEvent): void {
    const now = this.now()
    const last = this.logged.get(mark)
    if (last !== undefined && now - last < this.limits.windowSeconds * 1000) return
    // Re-inserted so the map stays in time order and the oldest mark is evicted first.
    this.logged.delete(mark)
    if (this.logged.size >= MAX_TRACKED) {
      const oldest = this.logged.keys().next()
      if (oldest.done !== true) this.logged.delete(oldest.value)
    }
    this.logged.set(mark, now)
    try {
      this.onThrottled(event)
    } catch {
      // a throwing log hook must not turn a 429 into a 500
    }
  }
}

function addressKey(clientAddress: string): string {
  return `addr:${clientAddress}`
}

/** A digest, so neither memory nor Redis holds the presented key text (it may be a secret pasted by mistake). */
function clientKeyKey(clientKey: string): string {
  return `key:${createHash('sha256').update(clientKey, 'utf8').digest('base64url')}`
}
