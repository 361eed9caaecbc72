import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import type { AppsRepository } from '../db/repositories/apps.js'
import { ApiError } from '../errors.js'
import { ANY_VALID_KEY } from '../resources/manifest.js'
import type { AuthContext } from '../types.js'
import { hourlyLimitOf, secretMatches } from '../keys/credentials.js'
import type { FailureThrottle } from './failure-throttle.js'
import type { RateLimitDecision, RateLimiter } from './rate-limiter.js'

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * The onRequest hook of every authenticated route. It runs before the body is read, in the
 * contract's order: missing headers 401, too many failures from this address 429, bad credentials
 * 401 (429 once the key's failures are full), inactive key 403, rate limit 429, missing scope 403;
 * validation (400) and existence (404) come after it.
 */
export function authenticate(apps: AppsRepository, limiter: RateLimiter, failures?: FailureThrottle): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const clientKey = header(request, 'x-client-key')
    const clientSecret = header(request, 'x-client-secret')
    if (clientKey === undefined || clientSecret === undefined) {
      throw new ApiError(401, 'Client key or secret missing', {
        details: 'Both the x-client-key and x-client-secret headers must be provided',
      })
    }
    // Looked up on every request (an indexed read), so a deactivation by the CLI in another
    // process takes effect on the very next request.
    const key = await apps.findCredentials(clientKey)
    // An address whose failures are full is answered 429 before anything about its credentials
    // is told, so a throttled guess learns nothing (not even that it was right). For a good key
    // the address's count guards the rate limit's consume: one call (one Redis round trip).
    const matches = secretMatches(clientSecret, key?.secret_digest)
    if (key === undefined || !matches || !key.active) {
      const addressWait = await failures?.addressRetryAfter(request.ip)
      if (addressWait !== undefined) throw tooManyFailures(addressWait)
      if (key === undefined || !matches) {
        const wait = await failures?.failed(request.ip, clientKey, key?.id)
        if (wait !== undefined) throw tooManyFailures(wait)
        throw new ApiError(401, 'Invalid client app credentials', { details: 'The client key or client secret is invalid' })
      }
      throw new ApiError(403, 'API key is inactive', { details: 'This API key has been deactivated' })
    }

    const limit = hourlyLimitOf(key)
    const guard = failures?.addressGuard(request.ip)
    let decision: RateLimitDecision
    if (guard === undefined || failures === undefined) {
      decision = await limiter.consume(key.id, limit)
    } else {
      const guarded = await limiter.consumeGuarded(key.id, limit, guard)
      if (guarded.guardFull) throw tooManyFailures(failures.addressFull(request.ip, guarded.guard))
      decision = guarded.decision
    }
    reply.header('RateLimit-Policy', `"hour";q=${limit};w=${decision.windowSeconds}`)
    reply.header('RateLimit', `"hour";r=${decision.remaining};t=${decision.resetSeconds}`)
    if (!decision.allowed) {
      throw new ApiError(429, 'Rate limit exceeded', {
        details: `This API key may make ${limit} requests per hour; retry in ${decision.resetSeconds} seconds`,
        headers: { 'Retry-After': String(decision.resetSeconds) },
      })
    }

    // Every authenticated route has its manifest's scope (src/resources/register.ts).
    const scope = request.routeOptions.config.scope
    if (scope === undefined) throw new Error(`route ${request.routeOptions.method} ${request.routeOptions.url} has no scope`)
    if (scope !== ANY_VALID_KEY && !key.scopes.includes(scope)) {
      throw new ApiError(403, 'Missing required scope', { details: `This API key lacks the required scope: ${scope}` })
    }
    const auth: AuthContext = { appId: key.app_id, keyId: key.id, environment: key.environment, scopes: key.scopes }
    request.auth = auth
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
