import { CIRCUIT_THRESHOLD } from '../db/circuit.js'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/** Waits after the 1st, 2nd, … failed attempt; after the last one the delivery is failed for good. */
export const RETRY_SCHEDULE_MS: readonly number[] = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]

export const JITTER = 0.2

/**
 * The wait before the next attempt after `failedAttempts` attempts, or undefined when the
 * schedule is used up. ±20 % jitter spreads retries of many deliveries that failed together.
 * A Retry-After (429/503 only; the caller decides) is honoured up to twice the scheduled wait.
 */
export function retryDelay(
  failedAttempts: number,
  options: { schedule?: readonly number[]; random?: () => number; retryAfterMs?: number | undefined } = {},
): number | undefined {
  const schedule = options.schedule ?? RETRY_SCHEDULE_MS
  const base = schedule[failedAttempts - 1]
  if (base === undefined) return undefined
  const scheduled = jittered(base, options.random)
  if (options.retryAfterMs === undefined) return scheduled
  return Math.min(options.retryAfterMs, 2 * scheduled)
}

/** Retry-After as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined
  const text = value.trim()
  if (/^\d{1,10}$/.test(text)) return Number(text) * SECOND
  if (!/[a-z]/i.test(text)) return undefined
  const date = Date.parse(text)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, date - nowMs)
}

/** `ms` ±20 % at random. */
function jittered(ms: number, random: () => number = Math.random): number {
  return Math.round(ms * (1 - JITTER + 2 * JITTER * random()))
}

/**
 * The wait before an open circuit's next attempt after `consecutiveFailures` failures in a row:
 * the retry schedule again, from its first step at the opening failure, holding at its last.
 */
export function circuitRetryDelay(consecutiveFailures: number, options: { schedule?: readonly number[]; random?: () => number } = {}): number {
  const schedule = options.schedule ?? RETRY_SCHEDULE_MS
  const step = Math.min(Math.max(consecutiveFailures - CIRCUIT_THRESHOLD, 0), schedule.length - 1)
  return jittered(schedule[step] ?? 0, options.random)
}
