import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import type { AppsRepository } from '../apps/repository.js'
import { ApiError } from '../http/api-error.js'
import { ANY_VALID_KEY } from '../resources/manifest.js'
import type { AuthContext } from './context.js'
import { secretMatches } from '../keys/credentials.js'
import type { FailureThrottle } from './failure-throttle.js'
import { type KnownKey, KnownKeys } from './known-keys.js'
import type { GuardedDecision, RateLimiter } from './rate-limiter.js'

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * The onRequest hook of every authenticated route. It runs before the body is read, in the
 * contract's order: missing headers 401, too many failures from this address 429, bad credentials
 * 401 (429 once the key's failures are full), inactive key 403, expired key 403, rate limit 429,
 * missing scope 403;
 * validation (400) and existence (404) come after it.
 *
 * The key is checked as the database holds it when the request is checked (KnownKeys), so a
 * deactivation by the CLI in another process takes effect on the very next request. Where that
 * and the rate limit can be told at once (SQLite, the in-process limiter) the hook answers in the
 * same turn, without a promise; on PostgreSQL + Redis the rate limit's round trip to Redis is made
 * beside the key's read when the key was read before (both are awaited before the request goes
 * on: a key found deactivated meanwhile is refused, its one count in the window spent).
 */
export function authenticate(apps: AppsRepository, limiter: RateLimiter, failures?: FailureThrottle): onRequestHookHandler {
  const keys = new KnownKeys(apps)

  /** The rate limit's count of one request of `key` (guarded by the address's failures), at once when the limiter can tell. */
  function count(key: KnownKey, request: FastifyRequest): GuardedDecision | Promise<GuardedDecision> {
    const guard = failures?.addressGuard(request.ip)
    const now = limiter.consumeAtOnce?.(key.credentials.id, key.limit, guard)
    if (now !== undefined) return now
    if (guard === undefined) return limiter.consume(key.credentials.id, key.limit).then((decision) => ({ guardFull: false, decision }))
    return limiter.consumeGuarded(key.credentials.id, key.limit, guard)
  }

  /** The checks after the key's credentials: the rate limit's answer, then the route's scope. */
  function admit(request: FastifyRequest, reply: FastifyReply, key: KnownKey, guarded: GuardedDecision): void {
    if (guarded.guardFull) throw tooManyFailures(failures?.addressFull(request.ip, guarded.guard) ?? Math.max(1, guarded.guard.resetSeconds))
    const decision = guarded.decision
    reply.header('RateLimit-Policy', key.policyHeader(decision.windowSeconds))
    reply.header('RateLimit', `"hour";r=${decision.remaining};t=${decision.resetSeconds}`)
    if (!decision.allowed) {
      throw new ApiError(429, 'Rate limit exceeded', {
        details: `This API key may make ${key.limit} requests per hour; retry in ${decision.resetSeconds} seconds`,
        headers: { 'Retry-After': String(decision.resetSeconds) },
      })
    }
    // Every authenticated route has its manifest's scope (src/resources/register.ts).
    const scope = request.routeOptions.config.scope
    if (scope === undefined) throw new Error(`route ${request.routeOptions.method} ${request.routeOptions.url} has no scope`)
    if (scope !== ANY_VALID_KEY && !key.scopes.has(scope)) {
      throw new ApiError(403, 'Missing required scope', { details: `This API key lacks the required scope: ${scope}` })
    }
    request.auth = key.auth
  }

  /**
   * Everything after the key is known: its credentials, then the rate limit (`early`: its count,
   * made for this key beside the key's read, when made) and the scope. `secretMatched`: the secret
   * was found to match this very key (its row unchanged) when the request arrived.
   */
  function check(
    request: FastifyRequest,
    reply: FastifyReply,
    clientKey: string,
    clientSecret: string,
    key: KnownKey | undefined,
    early: GuardedDecision | undefined,
    secretMatched: boolean,
  ): void | Promise<void> {
    // An address whose failures are full is answered 429 before anything about its credentials
    // is told, so a throttled guess learns nothing (not even that it was right). For a good key
    // the address's count guards the rate limit's consume: one call (one Redis round trip).
    const nowMs = Date.now()
    const matches = secretMatched || secretMatches(clientSecret, key?.credentials.secret_digest, key?.previousDigest(nowMs))
    if (key === undefined || !matches || !key.credentials.active || key.expired(nowMs)) return refuse(request, clientKey, key, matches)
    if (early !== undefined) return admit(request, reply, key, early)
    const counted = count(key, request)
    if (counted instanceof Promise) return counted.then((guarded) => admit(request, reply, key, guarded))
    return admit(request, reply, key, counted)
  }

  async function refuse(request: FastifyRequest, clientKey: string, key: KnownKey | undefined, matches: boolean): Promise<never> {
    const addressWait = await failures?.addressRetryAfter(request.ip)
    if (addressWait !== undefined) throw tooManyFailures(addressWait)
    if (key === undefined || !matches) {
      const wait = await failures?.failed(request.ip, clientKey, key?.credentials.id)
      if (wait !== undefined) throw tooManyFailures(wait)
      throw new ApiError(401, 'Invalid client app credentials', { details: 'The client key or client secret is invalid' })
    }
    if (!key.credentials.active) throw new ApiError(403, 'API key is inactive', { details: 'This API key has been deactivated' })
    throw new ApiError(403, 'API key has expired', { details: `This API key expired at ${key.credentials.expires_at ?? ''}` })
  }

  return (request, reply, done) => {
    // A refusal is handed over after the rest of what arrived with the headers has been parsed, as
    // an async hook's would be: a request Node's parser finds malformed is answered 400 by it, not
    // refused here first.
    const refused = (error: unknown) => queueMicrotask(() => done(error instanceof Error ? error : new Error(String(error))))
    const clientKey = header(request, 'x-client-key')
    const clientSecret = header(request, 'x-client-secret')
    if (clientKey === undefined || clientSecret === undefined) {
      refused(new ApiError(401, 'Client key or secret missing', { details: 'Both the x-client-key and x-client-secret headers must be provided' }))
      return
    }
    let checked: void | Promise<void>
    try {
      const current = keys.current(clientKey)
      if (current instanceof Promise) {
        // The key as last read, if its secret matches, has its request counted meanwhile; the
        // count stands only for the key read now if that is the same key, active, with the same limit.
        const lastRead = keys.lastRead(clientKey)
        const nowMs = Date.now()
        const early =
          lastRead?.credentials.active === true && !lastRead.expired(nowMs) && secretMatches(clientSecret, lastRead.credentials.secret_digest, lastRead.previousDigest(nowMs))
            ? count(lastRead, request)
            : undefined
        checked = Promise.all([current, early]).then(([key, counted]) =>
          check(
            request,
            reply,
            clientKey,
            clientSecret,
            key,
            key !== undefined && key.credentials.id === lastRead?.credentials.id && key.limit === lastRead.limit ? counted : undefined,
            key !== undefined && key === lastRead && counted !== undefined,
          ),
        )
      } else {
        checked = check(request, reply, clientKey, clientSecret, current, undefined, false)
      }
    } catch (error) {
      refused(error)
      return
    }
    if (checked instanceof Promise) checked.then(() => done(), refused)
    else done()
  }
}

function tooManyFailures(seconds: number): ApiError {
  return new ApiError(429, 'Too many failed authentication attempts', {
    details: `Authentication is paused after too many failed attempts; retry in ${seconds} seconds`,
    headers: { 'Retry-After': String(seconds) },
  })
}

/** The caller of an authenticated route (the hook guarantees it is set). */
export function callerOf(request: FastifyRequest): AuthContext {
  if (request.auth === null) throw new Error('route reached without authentication')
  return request.auth
}
