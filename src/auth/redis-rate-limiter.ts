/**
 * Rate limiting shared by every server instance: the exact sliding log of MemoryRateLimiter,
 * kept in Redis, plus a fallback wrapper for Redis outages and the client factory.
 */
import { Redis, type RedisOptions } from 'ioredis'
import { parseRedisSentinelUrl, redactUrl } from '../config.js'
import { circuitOf, type RedisCircuit } from './redis-circuit.js'
import {
  consumeAfterPeek,
  type GuardedDecision,
  HOUR_MS,
  type MemoryRateLimiter,
  type PeekableRateLimiter,
  type RateLimitDecision,
  type RateLimitGuard,
  type RateLimiter,
} from './rate-limiter.js'

/** ioredis command names the script is registered under (defineCommand): with one key, and with a guard key. */
const COMMAND = 'devplatformSlidingLog'
const GUARDED_COMMAND = 'devplatformGuardedSlidingLog'
const RESTORE_COMMAND = 'devplatformRestoreAdmissions'

/**
 * KEYS[1] = the key's sorted set; ARGV[1] = limit; ARGV[2] = window in ms; ARGV[3] = 'peek' to
 * only answer whether one more would be admitted, recording nothing (else 'consume').
 * With KEYS[2] (a guard: ARGV[4] = its limit, ARGV[5] = its window in ms), KEYS[2] is peeked
 * first, and when it is full KEYS[1] is left alone.
 * Members are admissions, scored by admission time in ms (Redis server clock).
 * Returns { allowed (1|0), count after the call, ms until the oldest counted admission
 * leaves the window (-1 when count is 0), 1 when these are the full guard's (else 0) } —
 * integers only, so no float precision is lost.
 */
export const SLIDING_LOG_LUA = `
if redis.replicate_commands then redis.replicate_commands() end -- TIME before writes on Redis < 5
local t = redis.call('TIME')
local usec = tonumber(t[2])
-- Built as strings: tostring() of a Lua number uses %.14g and would round the microseconds.
local now_us = t[1] .. string.format('%06d', usec)
local now = tonumber(t[1]) * 1000 + math.floor(usec / 1000)

local function slide(key, limit, window, mode)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  if count > limit then
    -- The limit was lowered (operator override): keep only the newest \`limit\` admissions,
    -- so the set stays bounded by the current limit.
    redis.call('ZREMRANGEBYRANK', key, 0, count - limit - 1)
    count = limit
  end
  local allowed = 0
  if count < limit and mode == 'peek' then
    allowed = 1 -- would be admitted; nothing recorded
  elseif count < limit then
    -- Member <now_us>:<count> is unique: scripts run atomically, one at a time, and an
    -- admission made earlier in the same microsecond is still in the set (its score is not
    -- <= now - window), so each later admission in that microsecond sees a larger count.
    -- ZADD NX plus a suffix covers the remaining corners (a trim within the same microsecond,
    -- a server clock stepping back after a failover): an existing member is never overwritten.
    local member = now_us .. ':' .. count
    local suffix = 0
    while redis.call('ZADD', key, 'NX', now, member) == 0 do
      suffix = suffix + 1
      member = now_us .. ':' .. count .. ':' .. suffix
    end
    count = count + 1
    -- The newest admission is \`now\`, so after one window the whole set is stale.
    redis.call('PEXPIRE', key, window)
    allowed = 1
  end
  local reset = -1
  if count > 0 then
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    reset = tonumber(oldest[2]) + window - now
  end
  return { allowed, count, reset }
end

if #KEYS == 2 then
  local guard = slide(KEYS[2], tonumber(ARGV[4]), tonumber(ARGV[5]), 'peek')
  if guard[1] == 0 then return { guard[1], guard[2], guard[3], 1 } end
end
local decision = slide(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
return { decision[1], decision[2], decision[3], 0 }
`

type ScriptReply = [allowed: number, count: number, resetMs: number, guardFull: number]

function isScriptReply(value: unknown): value is ScriptReply {
  return Array.isArray(value) && value.length === 4 && value.every((v) => Number.isInteger(v))
}

/**
 * KEYS[1] = the key's sorted set; ARGV[1] = window in ms; ARGV[2..] = admission times (ms) made
 * by one instance while Redis was unreachable. They join the log as they were, so the limit
 * counts them once Redis is back; a member that is there already is left alone.
 */
const RESTORE_LUA = `
local window = tonumber(ARGV[1])
local newest = 0
for i = 2, #ARGV do
  local at = tonumber(ARGV[i])
  redis.call('ZADD', KEYS[1], 'NX', at, ARGV[i] .. ':restored:' .. (i - 1))
  if at > newest then newest = at end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) > 0 then redis.call('PEXPIRE', KEYS[1], math.max(1, newest + window - now)) end
return 0
`

/** A script registered with defineCommand: ioredis adds the method at run time, which its types cannot know. */
function commandOf(redis: Redis, name: string, numberOfKeys: number, lua: string): (...args: string[]) => Promise<unknown> {
  if (Reflect.get(redis, name) === undefined) redis.defineCommand(name, { numberOfKeys, lua })
  const fn: unknown = Reflect.get(redis, name)
  if (typeof fn !== 'function') throw new Error('ioredis defineCommand did not register the script')
  return (...args) => Reflect.apply(fn, redis, args) as Promise<unknown>
}

/** The sliding-log script, each call within the circuit's budget. */
function scriptOf(redis: Redis, circuit: RedisCircuit, name: string, numberOfKeys: number): (...args: string[]) => Promise<ScriptReply> {
  const command = commandOf(redis, name, numberOfKeys, SLIDING_LOG_LUA)
  return async (...args) => {
    const reply: unknown = await circuit.call(() => command(...args))
    if (!isScriptReply(reply)) throw new Error(`unexpected rate-limit script reply: ${JSON.stringify(reply)}`)
    return reply
  }
}

/**
 * Exact sliding log in Redis (one sorted set per key), so several server instances share
 * one limit exactly. One round trip per consume: a Lua script (EVALSHA, falling back to EVAL
 * when the server does not have it cached) that reads the Redis server clock, so instances
 * with skewed clocks still agree. Refused requests add nothing: a key holds at most `limit`
 * members, whatever the refused traffic. A consume guarded by a count in the same Redis (the
 * caller address's failed authentications) is one round trip too: both keys in one script.
 */
export class RedisRateLimiter implements PeekableRateLimiter {
  private readonly windowMs: number
  private readonly prefix: string
  private readonly script: (key: string, limit: string, windowMs: string, mode: 'consume' | 'peek') => Promise<ScriptReply>
  private readonly restoreScript: (key: string, admittedAtMs: readonly number[]) => Promise<unknown>
  private readonly guardedScript: (key: string, guardKey: string, limit: string, windowMs: string, mode: 'consume', guardLimit: string, guardWindowMs: string) => Promise<ScriptReply>

  constructor(
    private readonly redis: Redis,
    options: { windowMs?: number; prefix?: string } = {},
  ) {
    this.windowMs = options.windowMs ?? HOUR_MS
    this.prefix = options.prefix ?? 'devplatform:ratelimit:'
    if (!Number.isInteger(this.windowMs) || this.windowMs <= 0) {
      throw new Error(`windowMs must be a positive integer, got ${this.windowMs}`)
    }
    const circuit = circuitOf(redis)
    this.script = scriptOf(redis, circuit, COMMAND, 1)
    this.guardedScript = scriptOf(redis, circuit, GUARDED_COMMAND, 2)
    const restore = commandOf(redis, RESTORE_COMMAND, 1, RESTORE_LUA)
    this.restoreScript = (key, times) => circuit.call(() => restore(key, String(this.windowMs), ...times.map(String)))
  }

  /** Adds admissions made elsewhere while Redis was unreachable (times in ms) to `key`'s log. */
  async restore(key: string, admittedAtMs: readonly number[]): Promise<void> {
    if (admittedAtMs.length > 0) await this.restoreScript(this.prefix + key, admittedAtMs)
  }

  async consume(key: string, limit: number): Promise<RateLimitDecision> {
    return this.decision(await this.script(this.prefix + key, String(limit), String(this.windowMs), 'consume'), limit)
  }

  async peek(key: string, limit: number): Promise<RateLimitDecision> {
    return this.decision(await this.script(this.prefix + key, String(limit), String(this.windowMs), 'peek'), limit)
  }

  async consumeGuarded(key: string, limit: number, guard: RateLimitGuard): Promise<GuardedDecision> {
    const counter = guard.counter
    if (!(counter instanceof RedisRateLimiter) || counter.redis !== this.redis) return consumeAfterPeek(this, key, limit, guard)
    const reply = await this.guardedScript(
      this.prefix + key,
      counter.prefix + guard.key,
      String(limit),
      String(this.windowMs),
      'consume',
      String(guard.limit),
      String(counter.windowMs),
    )
    if (reply[3] === 1) return { guardFull: true, guard: counter.decision(reply, guard.limit) }
    return { guardFull: false, decision: this.decision(reply, limit) }
  }

  private decision([allowed, count, resetMs]: ScriptReply, limit: number): RateLimitDecision {
    const windowSeconds = Math.round(this.windowMs / 1000)
    // Same arithmetic as MemoryRateLimiter.secondsUntilFree.
    const resetSeconds = count > 0 ? Math.max(1, Math.ceil(resetMs / 1000)) : 0
    if (allowed !== 1) return { allowed: false, limit, remaining: 0, resetSeconds, windowSeconds }
    return { allowed: true, limit, remaining: limit - count, resetSeconds, windowSeconds }
  }
}

/** Keys whose last shared count a fallback remembers; past it, the oldest remembered is forgotten. */
const REMEMBERED_KEYS = 100_000

/** A key's count as the primary last answered it. */
interface SeenCount {
  limit: number
  count: number
  /** when the oldest counted admission leaves the window (rounded up: never earlier than in fact) */
  oldestLeavesAtMs: number
  seenAtMs: number
}

export interface FallbackOptions {
  /** called once per outage, when the primary first fails */
  onFallback: (error: unknown) => void
  /** called when the primary answers again after an outage */
  onRecover?: () => void
  now?: () => number
}

/** A shared limiter that can add admissions counted elsewhere meanwhile (RedisRateLimiter.restore). */
export interface RestorableRateLimiter extends RateLimiter {
  restore?(key: string, admittedAtMs: readonly number[]): Promise<void>
}

/**
 * Answers from `primary` (Redis) and, when it fails (Redis down, a call past its budget, the
 * circuit open), from `fallback` (an in-process MemoryRateLimiter).
 *
 * Fail-open to per-instance exact limits: a payments API must stay available when its cache is
 * down, so an outage never turns into 500s, and it is never unlimited either. The fallback goes on
 * from the count this instance last saw for the key in Redis, so one instance never admits more
 * than the limit in a window; across N instances that each saw the shared count c before the
 * outage, at most c + N × (limit − c) ≤ N × limit. What the fallback admitted is added to Redis's
 * count when it answers again (the primary's `restore`), so the window after the outage counts it too.
 */
export class FallbackRateLimiter implements RateLimiter {
  private failing = false
  /** the primary's last count of each key, to continue from during an outage */
  private readonly seen = new Map<string, SeenCount>()
  /** keys the fallback has taken over in this outage, with what it admitted */
  private readonly takenOver = new Map<string, number[]>()
  protected readonly now: () => number

  constructor(
    private readonly primary: RestorableRateLimiter,
    private readonly fallback: MemoryRateLimiter,
    private readonly options: FallbackOptions,
  ) {
    this.now = options.now ?? Date.now
  }

  /** true while the last primary call failed */
  get degraded(): boolean {
    return this.failing
  }

  async consume(key: string, limit: number): Promise<RateLimitDecision> {
    return this.answer(key, limit, () => this.primary.consume(key, limit), () => this.fallback.consumeSync(key, limit), true)
  }

  async consumeGuarded(key: string, limit: number, guard: RateLimitGuard): Promise<GuardedDecision> {
    const counter = guard.counter
    // Both primaries answering: one call, in Redis one round trip. Otherwise each wrapper answers
    // its own part, falling back (and noting the outage) by itself.
    if (counter instanceof FallbackPeekableRateLimiter && !this.failing && !counter.degraded) {
      let guarded: GuardedDecision | undefined
      try {
        guarded = await this.primary.consumeGuarded(key, limit, { counter: counter.peekPrimary, key: guard.key, limit: guard.limit })
      } catch {
        // The two calls below meet the outage again: each wrapper notes it and answers from its fallback.
      }
      if (guarded !== undefined) {
        if (!guarded.guardFull) this.remember(key, guarded.decision)
        return guarded
      }
    }
    return consumeAfterPeek(this, key, limit, guard)
  }

  protected async answer(
    key: string,
    limit: number,
    primary: () => Promise<RateLimitDecision>,
    fallback: () => RateLimitDecision,
    admits: boolean,
  ): Promise<RateLimitDecision> {
    let decision: RateLimitDecision
    try {
      decision = await primary()
    } catch (error) {
      if (!this.failing) {
        this.failing = true
        notify(() => this.options.onFallback(error))
      }
      return this.fromFallback(key, limit, fallback, admits)
    }
    this.remember(key, decision)
    if (this.failing) this.recovered()
    return decision
  }

  private remember(key: string, decision: RateLimitDecision): void {
    const nowMs = this.now()
    if (!this.seen.has(key) && this.seen.size >= REMEMBERED_KEYS) {
      const oldest = this.seen.keys().next()
      if (oldest.done !== true) this.seen.delete(oldest.value)
    }
    const count = decision.limit - decision.remaining
    const oldestLeavesAtMs = nowMs + decision.resetSeconds * 1000
    // Updated in place: this runs on every request while Redis answers.
    const seen = this.seen.get(key)
    if (seen === undefined) this.seen.set(key, { limit: decision.limit, count, oldestLeavesAtMs, seenAtMs: nowMs })
    else {
      seen.limit = decision.limit
      seen.count = count
      seen.oldestLeavesAtMs = oldestLeavesAtMs
      seen.seenAtMs = nowMs
    }
  }

  /** The fallback's answer; the first time in an outage it takes over `key`, it starts from the count last seen. */
  private fromFallback(key: string, limit: number, fallback: () => RateLimitDecision, admits: boolean): RateLimitDecision {
    let admitted = this.takenOver.get(key)
    if (admitted === undefined) {
      admitted = []
      this.takenOver.set(key, admitted)
      const seen = this.seen.get(key)
      if (seen !== undefined) this.fallback.continueFrom(key, seen.limit, seen.count, seen.oldestLeavesAtMs, seen.seenAtMs)
    }
    const decision = fallback()
    if (admits && decision.allowed) admitted.push(this.now())
    return decision
  }

  private recovered(): void {
    this.failing = false
    const takenOver = [...this.takenOver]
    this.takenOver.clear()
    if (this.primary.restore !== undefined) {
      for (const [key, admitted] of takenOver) {
        // Best effort: if Redis fails again meanwhile, those admissions count only in this instance's window.
        this.primary.restore(key, admitted).catch(() => undefined)
        this.fallback.forget(key)
      }
    }
    const onRecover = this.options.onRecover
    if (onRecover !== undefined) notify(onRecover)
  }
}

/** FallbackRateLimiter for limiters that can also peek (the failed-authentication throttle). */
export class FallbackPeekableRateLimiter extends FallbackRateLimiter implements PeekableRateLimiter {
  constructor(
    readonly peekPrimary: PeekableRateLimiter & RestorableRateLimiter,
    private readonly peekFallback: MemoryRateLimiter,
    options: FallbackOptions,
  ) {
    super(peekPrimary, peekFallback, options)
  }

  async peek(key: string, limit: number): Promise<RateLimitDecision> {
    return this.answer(key, limit, () => this.peekPrimary.peek(key, limit), () => this.peekFallback.peekSync(key, limit), false)
  }
}

/** A throwing log hook must not turn a rate-limit decision into a 500. */
function notify(hook: () => void): void {
  try {
    hook()
  } catch {
    // ignored on purpose
  }
}

/**
 * The one factory of the platform's Redis clients (REDIS_URL): one Redis, or the master that
 * Redis Sentinel names (redis+sentinel://…), found again after each failover.
 *
 * It fails fast: no offline queue and no per-command retries, so while Redis is unreachable
 * (or between a master's death and its replica's promotion) every command rejects at once (or
 * after 500 ms if the socket hangs) and callers fall back instead of waiting. It reconnects in
 * the background forever; with Sentinel each reconnection asks the sentinels for the master.
 */
export function createRedisClient(url: string): Redis {
  const common: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(100 * times, 1000),
  }
  const redis = url.startsWith('redis+sentinel:') ? new Redis({ ...common, ...sentinelOptions(url) }) : new Redis(url, common)
  // Without a listener, an 'error' event would crash the process. Errors are surfaced through
  // the failing commands (and the fallback / health route), so the event itself is ignored.
  redis.on('error', () => {})
  return redis
}

function sentinelOptions(url: string): RedisOptions {
  const target = parseRedisSentinelUrl(url)
  return {
    sentinels: target.sentinels,
    name: target.name,
    db: target.db,
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
    // A sentinel that hangs is passed over for the next, not waited on for the default 10 s.
    sentinelCommandTimeout: 500,
    sentinelRetryStrategy: (times) => Math.min(100 * times, 1000),
    // Told of a new master (+switch-master) while the old one still answers, the client leaves it
    // at once; a write refused as READONLY (a demoted master, before that message) does the same.
    failoverDetector: true,
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
  }
}

/**
 * Creates a client, connects and PINGs. Rejects within `timeoutMs` with the reason
 * (e.g. "connect ECONNREFUSED 127.0.0.1:6390"), disconnecting the client so it does not keep
 * reconnecting and hold the process open.
 */
export async function connectRedis(url: string, timeoutMs = 5000): Promise<Redis> {
  const redis = createRedisClient(url)
  let lastError: Error | undefined
  const remember = (error: Error) => {
    lastError = error
  }
  redis.on('error', remember)
  let timer: NodeJS.Timeout | undefined
  let timedOut = false
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true
      const why = lastError === undefined ? '' : `: ${lastError.message}`
      reject(new Error(`no answer within ${timeoutMs} ms${why}`))
    }, timeoutMs)
  })
  try {
    await Promise.race([
      (async () => {
        await redis.connect()
        await redis.ping()
      })(),
      timeout,
    ])
    return redis
  } catch (error) {
    redis.disconnect()
    const message = error instanceof Error ? error.message : String(error)
    // ioredis rejects connect() with a generic "Connection is closed."; the 'error' event
    // carried the cause (ECONNREFUSED, ENOTFOUND, auth failure...). The timeout names it already.
    const reason = timedOut || lastError === undefined ? message : lastError.message
    throw new Error(`cannot connect to Redis at ${redactUrl(url)}: ${reason}`, { cause: error })
  } finally {
    clearTimeout(timer)
    redis.off('error', remember)
  }
}

/** Whether Redis answers a PING within its circuit's budget (the health route); false at once while the circuit is open. */
export async function redisAnswers(redis: Redis): Promise<boolean> {
  try {
    return (await circuitOf(redis).call((client) => client.ping())) === 'PONG'
  } catch {
    return false
  }
}
