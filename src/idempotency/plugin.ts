import { createHash } from 'node:crypto'
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyRequest,
  onResponseHookHandler,
  onSendHookHandler,
  preHandlerAsyncHookHandler,
  preHandlerHookHandler,
} from 'fastify'
import fp from 'fastify-plugin'
import { callerOf } from '../auth/authenticate.js'
import { isoOf } from '../db/time.js'
import { requestTransactionScope } from '../db/unit-of-work.js'
import { ApiError } from '../http/api-error.js'
import { type Claim, IdempotencyKeysRepository } from './repository.js'

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key'
export const REPLAYED_HEADER = 'Idempotent-Replayed'

export const IDEMPOTENCY = {
  /** a key is remembered (and its response replayed) this long, then purged */
  retentionMs: 24 * 60 * 60 * 1000,
  /**
   * A running claim holds its key this long unless renewed. It is renewed while the request runs,
   * so a slow request keeps it; a process that died stops renewing, and the key is free again
   * within this time.
   */
  leaseMs: 30_000,
  renewEveryMs: 10_000,
  /** a request still running after this stops renewing (it is stuck): its key is free a lease later */
  maxHoldMs: 10 * 60 * 1000,
  /** how often expired keys are deleted (they already count as absent before that) */
  purgeEveryMs: 10 * 60 * 1000,
} as const

export const INVALID_KEY = 'Idempotency-Key must be 1 to 255 printable ASCII characters'
export const KEY_REQUIRED = 'The idempotency-key header is required for this operation'
export const KEY_REUSED = 'Idempotency-Key was already used with a different request'
export const KEY_IN_PROGRESS = 'A request with this Idempotency-Key is still in progress'
export const KEY_ANSWER_LOST =
  'The first request with this Idempotency-Key was carried out, but its answer was lost; it is not carried out again'

// Printable ASCII, space included (HTTP already strips spaces at either end of a header value).
const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/

/** JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are one request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([name, field]) => `${JSON.stringify(name)}:${canonicalJson(field)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/**
 * What makes two requests "the same": the method, the path as requested (no POST route reads a
 * query string, so it is left out) and the validated body, canonically ordered.
 */
export function requestFingerprint(request: Pick<FastifyRequest, 'method' | 'url' | 'body'>): string {
  const path = request.url.split('?')[0] ?? request.url
  return createHash('sha256').update(`${request.method}\n${path}\n${canonicalJson(request.body)}`).digest('hex')
}

/** The response payload as text to store, or undefined when it can't be (a stream). */
function storableBody(payload: unknown): string | undefined {
  if (payload === null || payload === undefined) return ''
  if (typeof payload === 'string') return payload
  if (Buffer.isBuffer(payload)) return payload.toString('utf8')
  return undefined
}

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}

interface HeldClaim {
  claim: Claim
  renewal: NodeJS.Timeout
}

/**
 * Idempotency-Key on every POST of the scope it is registered in (after authentication):
 * a preHandler hook (after validation, so the body is the validated one) claims the key or
 * answers from it; an onSend hook stores the response before the client sees it, or gives the
 * key back on a 5xx. See the README's "Idempotent requests".
 */
export const idempotencyPlugin = fp(
  async (app: FastifyInstance) => {
    const keys = new IdempotencyKeysRepository(app.db)
    const held = new WeakMap<FastifyRequest, HeldClaim>()

    /** Ends the request's hold on its key: stores the response, or gives the key back. */
    async function settle(request: FastifyRequest, statusCode: number, contentType: string | null, body: string | undefined): Promise<void> {
      const holding = held.get(request)
      if (holding === undefined) return
      held.delete(request)
      clearInterval(holding.renewal)
      try {
        if (statusCode >= 500 || body === undefined) {
          await keys.release(holding.claim)
        } else if (!(await keys.complete(holding.claim, { statusCode, contentType, body }))) {
          request.log.warn('Idempotency-Key claim was taken over while the request ran (its lease lapsed); the response was not stored')
        }
      } catch (error) {
        // The response goes out anyway; the claim lapses with its lease, then the key runs again.
        request.log.error({ err: error }, 'could not store the Idempotency-Key response')
      }
    }

    /** Claims the key, or answers from it (replay, 422, 409). */
    const claimKey: preHandlerAsyncHookHandler = async (request, reply) => {
      const key = request.headers[IDEMPOTENCY_KEY_HEADER]
      if (key === undefined) {
        if (request.routeOptions.config.idempotencyKeyRequired === true) throw new ApiError(400, KEY_REQUIRED)
        return
      }
      if (typeof key !== 'string' || !KEY_FORMAT.test(key)) throw new ApiError(400, INVALID_KEY)
      const { appId, environment } = callerOf(request)
      const result = await keys.claim({
        appId,
        environment,
        key,
        fingerprint: requestFingerprint(request),
        leaseMs: IDEMPOTENCY.leaseMs,
        retentionMs: IDEMPOTENCY.retentionMs,
      })
      switch (result.outcome) {
        case 'claimed':
          held.set(request, { claim: result.claim, renewal: renewWhileHeld(keys, result.claim, request.log) })
          return
        case 'mismatch':
          throw new ApiError(422, KEY_REUSED)
        case 'running':
          throw new ApiError(409, KEY_IN_PROGRESS)
        case 'lost':
          throw new ApiError(409, KEY_ANSWER_LOST)
        case 'completed': {
          const { statusCode, contentType, body } = result.response
          reply.code(statusCode).header(REPLAYED_HEADER, 'true')
          if (contentType !== null) reply.header('content-type', contentType)
          return reply.send(body)
        }
      }
    }

    // The handler runs inside this scope, so `transact` records the claim's change in its own
    // commit. A callback hook, after claimKey: `done` calls the handler, which inherits the scope.
    const runInScope: preHandlerHookHandler = (request, _reply, done) => {
      const holding = held.get(request)
      if (holding === undefined) {
        done()
        return
      }
      requestTransactionScope.run({ beforeCommit: (tx) => keys.markCommitted(tx, holding.claim) }, done)
    }

    const storeAnswer: onSendHookHandler = (request, reply, payload, done) => {
      if (!held.has(request)) {
        done(null, payload)
        return
      }
      const contentType = reply.getHeader('content-type')
      const proceed = () => done(null, payload)
      void settle(request, reply.statusCode, typeof contentType === 'string' ? contentType : null, storableBody(payload)).then(proceed, proceed)
    }

    // A request that ended without passing onSend (an error while sending) gives its key back.
    const releaseUnanswered: onResponseHookHandler = (request, _reply, done) => {
      if (!held.has(request)) {
        done()
        return
      }
      const proceed = () => done()
      void settle(request, 500, null, undefined).then(proceed, proceed)
    }

    // Only POST routes carry these hooks: no other route pays for them.
    app.addHook('onRoute', (route) => {
      if (route.method !== 'POST') return
      route.preHandler = [...asArray(route.preHandler), claimKey, runInScope]
      route.onSend = [...asArray(route.onSend), storeAnswer]
      route.onResponse = [...asArray(route.onResponse), releaseUnanswered]
    })

    const purger = schedulePurge(keys, app.log, IDEMPOTENCY.purgeEveryMs)
    app.addHook('onReady', async () => purger.start())
    app.addHook('preClose', async () => purger.stop())
  },
  { name: 'idempotency', dependencies: ['database'] },
)

export interface LeaseTiming {
  leaseMs: number
  renewEveryMs: number
  maxHoldMs: number
}

/** Renews a claim's lease until the returned timer is cleared, the claim is no longer held, or maxHoldMs passes. */
export function renewWhileHeld(keys: IdempotencyKeysRepository, claim: Claim, log: FastifyBaseLogger, timing: LeaseTiming = IDEMPOTENCY): NodeJS.Timeout {
  const heldSince = Date.now()
  const renewal = setInterval(() => {
    if (Date.now() - heldSince > timing.maxHoldMs) {
      clearInterval(renewal)
      log.warn({ heldMs: Date.now() - heldSince }, 'request still running: its Idempotency-Key lease is no longer renewed')
      return
    }
    keys.renew(claim, timing.leaseMs).then(
      (renewed) => {
        if (!renewed) clearInterval(renewal)
      },
      (error: unknown) => log.warn({ err: error }, 'could not renew an Idempotency-Key lease'),
    )
  }, timing.renewEveryMs)
  renewal.unref()
  return renewal
}

export interface Purger {
  start(): void
  /** stops the schedule and waits for a purge under way */
  stop(): Promise<void>
}

/**
 * Deletes expired keys now and every `everyMs`, in the background: no request waits for it
 * (expired rows already count as absent). A failure is logged and tried again next time.
 */
export function schedulePurge(keys: IdempotencyKeysRepository, log: FastifyBaseLogger, everyMs: number): Purger {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  const purge = () => {
    if (running !== undefined) return // the last one is still deleting
    running = keys
      .purgeExpired(isoOf(Date.now() - IDEMPOTENCY.retentionMs))
      .then(
        (purged) => {
          if (purged > 0) log.info({ purged }, 'purged expired Idempotency-Keys')
        },
        (error: unknown) => log.warn({ err: error }, 'could not purge expired Idempotency-Keys; trying again later'),
      )
      .finally(() => {
        running = undefined
      })
  }
  return {
    start() {
      if (timer !== undefined) return
      purge()
      timer = setInterval(purge, everyMs)
      timer.unref()
    },
    async stop() {
      clearInterval(timer)
      timer = undefined
      await running
    },
  }
}
