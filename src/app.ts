import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import type { DestinationStream } from 'pino'
import { authenticate } from './auth/authenticate.js'
import type { Redis } from 'ioredis'
import { MemoryRateLimiter, type RateLimiter } from './auth/rate-limiter.js'
import { FailureThrottle, MAX_TRACKED } from './auth/failure-throttle.js'
import { FallbackPeekableRateLimiter, FallbackRateLimiter, RedisRateLimiter, redisAnswers } from './auth/redis-rate-limiter.js'
import { circuitOf } from './auth/redis-circuit.js'
import { Receiving } from './chains/receiving.js'
import { LivePayoutQueue } from './chains/payouts.js'
import { chainSenders } from './chains/sender.js'
import { chainWatchers } from './chains/watcher.js'
import { type Config, defaultPublicUrl } from './config.js'
import type { Db } from './db/database.js'
import { answerClientError } from './http/client-errors.js'
import { requestIdFrom } from './http/request-id.js'
import { requestLogger } from './http/request-logger.js'
import { idempotencyPlugin } from './idempotency/plugin.js'
import { registerMetrics } from './metrics/index.js'
import { databasePlugin } from './http/database-plugin.js'
import { answerFrameworkError, errorsPlugin, MAX_PATH_PARAMETER_LENGTH } from './http/error-handler.js'
import { openapiPlugin, serveDocument } from './http/openapi.js'
import type { RedisState } from './resources/resource.js'
import { domainHooks } from './resources/index.js'
import { applyManifest, registerPages, registerResources } from './resources/register.js'
import { createRules } from './validation/rules.js'
import { ExchangeRates } from './ledger/rates.js'
import { RatesFile } from './ledger/rates-file.js'
import type { MoneyContext } from './ledger/money-context.js'
import { MoneyScheduler } from './scheduler/money-scheduler.js'
import { createValidatorCompiler } from './validation/validator.js'
import { webhookUrlAddressProblem } from './delivery/address-guard.js'
import { CachingDnsResolver } from './delivery/dns-resolver.js'
import { createDispatcher, type DispatcherOverrides, shutdownGraceMs } from './delivery/dispatcher.js'
import { DeliveryNotifier, PostgresSignalListener } from './delivery/notifier.js'

export interface AppOptions {
  config: Config
  /** an open, migrated database; the app closes it when it closes */
  db: Db
  /** a connected Redis client for the shared rate limiter (REDIS_URL); the app closes it when it closes */
  redis?: Redis
  /** tests: a rate limiter to use instead of the configured one */
  rateLimiter?: RateLimiter
  /** tests: the clock of the in-memory failed-authentication throttle */
  now?: () => number
  /** where log lines go (tests capture them); stdout by default */
  logStream?: DestinationStream
  /** the webhook dispatcher's injected parts (tests: a fake DNS, a short retry schedule) */
  delivery?: DispatcherOverrides
}

const BODY_LIMIT = 1024 * 1024

/**
 * How often Node looks for requests over their time limit (its default is 30 s, which would let a
 * request run up to twice its limit): a quarter of the limit, at most 1 s. Walking the list of
 * connections with a request arriving is cheap.
 */
export function connectionsCheckingInterval(requestTimeoutMs: number): number {
  return Math.min(1_000, Math.ceil(requestTimeoutMs / 4))
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // Secrets never reach a log line, even if a serializer starts logging headers.
      redact: { paths: ['req.headers["x-client-secret"]', 'req.headers["x-client-key"]', 'req.headers.authorization'], censor: '[redacted]' },
      ...(options.logStream === undefined ? {} : { stream: options.logStream }),
    },
    bodyLimit: BODY_LIMIT,
    // A caller's x-request-id is kept when it is a sane token, so traces can be joined up.
    requestIdHeader: false,
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']),
    // Each request's logger makes its pino child only once it writes a line.
    childLoggerFactory: requestLogger,
    routerOptions: { maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    // Every answer in the contract's body with an x-request-id, also those given before routing:
    // the router's (bad percent-encoding, an over-long path parameter), Node's parser's (malformed
    // request, headers too large), and the ones Node and Fastify would write themselves (a missing
    // Host, 503 while closing), which the errors plugin answers instead.
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: (error, socket): void => answerClientError(error, socket, app.log),
    // A request's line, headers and body must all arrive within REQUEST_TIMEOUT_MS: Node checks
    // every connection with a request still arriving each checking interval and reports the late
    // ones to clientErrorHandler (408 in the contract's body, socket closed). A request read whole
    // is off that list, so a slow handler, the response being written and keep-alive idling are
    // not cut; headersTimeout is the same limit, as it must not exceed requestTimeout.
    requestTimeout: config.requestTimeoutMs,
    http: {
      requireHostHeader: false,
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: connectionsCheckingInterval(config.requestTimeoutMs),
    },
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.setValidatorCompiler(createValidatorCompiler(createRules({ allowHttpLoopback: config.nodeEnv !== 'production' })))
  app.decorateRequest('auth', null)
  app.decorateRequest('jsonText', '')
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })

  await app.register(errorsPlugin)
  const notifier = new DeliveryNotifier()
  const publicUrl = () => config.publicUrl ?? defaultPublicUrl(listeningPort(app) ?? config.port)
  const exchangeRates = new ExchangeRates({ maxAgeMs: config.exchangeRateMaxAgeMs })
  // What every movement of money in this process runs with: the scheduler's, the watchers', the domain events' handlers'.
  const payouts = new LivePayoutQueue(config.chains)
  const money: MoneyContext = { rates: exchangeRates, timings: config.drains, now: Date.now, payouts }
  await app.register(databasePlugin, { db: options.db, notifier, hooks: domainHooks({ publicUrl, money }) })
  // Before any route: the metrics' onResponse hook counts every answer.
  if (config.metricsPort !== undefined) await registerMetrics(app, { port: config.metricsPort, host: config.host, db: options.db, redis: options.redis, chains: config.chains })
  if (config.webhooks.dispatcher) {
    const dispatcher = createDispatcher(config, options.db, notifier, app.log, options.delivery)
    notifier.attach(dispatcher)
    // Other instances' commits reach this dispatcher through LISTEN/NOTIFY on PostgreSQL.
    const listener = config.database.kind === 'postgres' ? new PostgresSignalListener(config.database.url, dispatcher, app.log, notifier.origin) : undefined
    app.addHook('onReady', async () => {
      await listener?.start()
      dispatcher.start()
    })
    // Before the database closes (onClose): stop claiming, finish or abort attempts, write their outcomes.
    app.addHook('preClose', async () => {
      notifier.detach()
      await listener?.close()
      await dispatcher.stop(shutdownGraceMs(config))
    })
  }
  // Creation's own resolver (not the dispatcher's): a short deadline, never queued behind deliveries.
  const resolveHost = options.delivery?.resolveHost ?? new CachingDnsResolver({ timeoutMs: 3000 }).resolve
  const urlAddressProblem = config.nodeEnv === 'production' ? (url: string) => webhookUrlAddressProblem(url, resolveHost) : undefined
  if (config.exchangeRatesFile !== undefined) {
    // Loaded before the server listens (a bad file stops start-up), then again whenever it changes.
    const ratesFile = new RatesFile(config.exchangeRatesFile, options.db, app.log)
    app.addHook('onReady', async () => ratesFile.start())
    app.addHook('preClose', async () => ratesFile.stop())
  }
  if (config.drains.scheduler) {
    const scheduler = new MoneyScheduler(options.db, app.transact, money, app.log, config.drains)
    app.addHook('onReady', async () => scheduler.start())
    // Before the database closes: the step under way commits or rolls back first.
    app.addHook('preClose', async () => scheduler.stop())
    // Where the scheduler runs, the chains are watched too (one reader per chain across instances: a lease).
    const watchers = chainWatchers(config.chains, { db: options.db, transact: app.transact, log: app.log })
    app.addHook('onReady', async () => {
      for (const watcher of watchers) await watcher.start()
    })
    const senders = chainSenders(config.chains, { db: options.db, transact: app.transact, log: app.log })
    app.addHook('onReady', async () => {
      for (const sender of senders) sender.start()
    })
    app.addHook('preClose', async () => {
      await Promise.all([...watchers.map((watcher) => watcher.stop()), ...senders.map((sender) => sender.stop())])
    })
  }
  // Before any route is registered: every route gets its manifest's operationId and scope.
  app.addHook('onRoute', applyManifest)
  await app.register(openapiPlugin)

  // The one circuit of the Redis client, with the configured budget, before anything calls Redis.
  if (options.redis !== undefined) circuitOf(options.redis, { budgetMs: config.redisTimeoutMs })
  const rateLimiter = options.rateLimiter ?? createRateLimiter(app, config, options.redis)
  const failureThrottle = createFailureThrottle(app, config, options.redis, options.now)
  const redis = options.redis
  const redisState = async (): Promise<RedisState> =>
    redis === undefined ? 'not configured' : (await redisAnswers(redis)) ? 'ok' : 'error'
  if (redis !== undefined) {
    app.addHook('onClose', async () => {
      circuitOf(redis).close()
      redis.disconnect()
    })
  }
  // What every resource configures itself from (each resource's index.ts takes what it needs).
  const platform = {
    config,
    exchangeRates,
    publicUrl,
    redisState,
    urlAddressProblem,
    receiving: new Receiving(config.chains),
    payouts,
  }
  await app.register(
    async (api) => {
      api.get('/openapi.json', { schema: { hide: true } }, serveDocument(app))
      await registerResources(
        api,
        // Behind authentication: one hook authenticates every request before it is routed on.
        async (register) =>
          api.register(async (authenticated) => {
            authenticated.addHook('onRequest', authenticate(app.repos.apps, rateLimiter, failureThrottle))
            await authenticated.register(idempotencyPlugin)
            await register(authenticated)
          }),
        platform,
      )
    },
    { prefix: '/api/v0' },
  )
  // Pages for people (the hosted checkout), at the root and outside the API document.
  await registerPages(app, platform)
  return app
}

/** The port the server listens on, once it does (PORT=0 picks one). */
function listeningPort(app: FastifyInstance): number | undefined {
  const address = app.server.address()
  return address === null || typeof address === 'string' ? undefined : address.port
}

/**
 * The rate limiter: shared and exact in Redis when REDIS_URL is set, falling back to this
 * process's own exact limiter while Redis is down (see FallbackRateLimiter for why fail-open);
 * in this process alone otherwise.
 */
function createRateLimiter(app: FastifyInstance, config: Config, redis: Redis | undefined): RateLimiter {
  const memory = new MemoryRateLimiter()
  if (redis === undefined) {
    if (config.database.kind === 'postgres') {
      app.log.warn('REDIS_URL is not set: rate limits are counted per instance; with several instances a key gets its limit at each one')
    }
    return memory
  }
  return new FallbackRateLimiter(new RedisRateLimiter(redis), memory, {
    onFallback: (error) => app.log.error({ err: error }, 'Redis is unavailable: rate limits are counted per instance until it answers again'),
    onRecover: () => app.log.info('Redis answers again: rate limits are shared across instances again'),
  })
}

/**
 * The failed-authentication throttle (config.authFailures), counted like the rate limiter: in
 * Redis when REDIS_URL is set (shared by every instance, falling back to this process while Redis
 * is down), in this process otherwise, holding at most MAX_TRACKED addresses and keys.
 * request.ip is the socket's address: behind a proxy every caller shares the proxy's address
 * unless Fastify's trustProxy is set to that proxy (it is not).
 */
function createFailureThrottle(app: FastifyInstance, config: Config, redis: Redis | undefined, now: (() => number) | undefined): FailureThrottle | undefined {
  const limits = config.authFailures
  if (limits.perAddress === 0 && limits.perKey === 0) return undefined
  const windowMs = limits.windowSeconds * 1000
  const memory = new MemoryRateLimiter({ windowMs, maxKeys: MAX_TRACKED, ...(now === undefined ? {} : { now }) })
  const counter =
    redis === undefined
      ? memory
      : new FallbackPeekableRateLimiter(new RedisRateLimiter(redis, { windowMs, prefix: 'devplatform:authfail:' }), memory, {
          onFallback: (error) => app.log.error({ err: error }, 'Redis is unavailable: failed authentications are counted per instance until it answers again'),
          onRecover: () => app.log.info('Redis answers again: failed authentications are counted across instances again'),
        })
  return new FailureThrottle(
    counter,
    limits,
    // Key id only for a known key; never the secret or the presented key text.
    (event) =>
      app.log.warn(
        { event: 'auth_failures_throttled', scope: event.scope, clientAddress: event.clientAddress, keyId: event.keyId, limit: event.limit, windowSeconds: event.windowSeconds },
        'Too many failed authentication attempts: further attempts are refused with 429 until the window passes',
      ),
    now === undefined ? {} : { now },
  )
}
