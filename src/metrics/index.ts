import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import { circuitOf } from '../auth/redis-circuit.js'
import type { ChainsConfig } from '../chains/config.js'
import { readChainsStatus } from '../chains/status.js'
import type { Db } from '../db/database.js'
import { Incident } from '../incident.js'
import { errorsPlugin } from '../http/error-handler.js'
import { readQueueState } from './deliveries.js'
import { Metrics } from './metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** the metrics listener's address once the app is ready; null without METRICS_PORT */
    metricsAddress?: () => AddressInfo | null
  }
}

export interface MetricsOptions {
  /** METRICS_PORT (0: any free port, for tests) */
  port: number
  /** HOST: the API's own interface */
  host: string
  db: Db
  redis: Redis | undefined
  /** CHAINS_FILE's chains: shown even before any instance read them */
  chains: ChainsConfig | undefined
}

/**
 * Prometheus metrics on a listener of their own (METRICS_PORT, on HOST), never on the API's port:
 * nothing about them is reachable where the API is, so they need no credential and add no route
 * to the API's contract. Counts every answer of `app` (call before any route is registered).
 */
export async function registerMetrics(app: FastifyInstance, options: MetricsOptions): Promise<void> {
  const { redis } = options
  const metrics = new Metrics(redis === undefined ? {} : { redisAvailable: () => circuitOf(redis).available })
  // A callback hook, on the root: it runs on every answer, 404s included.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observe(request, reply)
    done()
  })

  // Its own logger is off: Fastify's "Server listening at" line is the API's (tests and scripts read the port from it).
  const listener = Fastify({ logger: false })
  await listener.register(errorsPlugin)
  const failures = new Incident()
  const chainFailures = new Incident()
  listener.get('/metrics', async (_request, reply) => {
    try {
      metrics.setQueue(await readQueueState(options.db))
      const ended = failures.ended()
      if (ended !== undefined) app.log.info(ended, 'metrics: reading the delivery queue works again')
    } catch (error) {
      // The process's own series still answer; the queue's are left out until a read succeeds.
      metrics.setQueue(undefined)
      const report = failures.failed()
      if (report !== undefined) app.log.error({ err: error, ...report }, 'metrics: reading the delivery queue failed; its series are left out')
    }
    try {
      metrics.setChains(await readChainsStatus(options.db, options.chains))
      const ended = chainFailures.ended()
      if (ended !== undefined) app.log.info(ended, 'metrics: reading the chains works again')
    } catch (error) {
      metrics.setChains(undefined)
      const report = chainFailures.failed()
      if (report !== undefined) app.log.error({ err: error, ...report }, 'metrics: reading the chains failed; their series are left out')
    }
    return reply.type(metrics.contentType).send(await metrics.exposition())
  })

  let address: AddressInfo | null = null
  app.decorate('metricsAddress', () => address)
  app.addHook('onReady', async () => {
    await listener.listen({ port: options.port, host: options.host })
    const bound = listener.server.address()
    address = bound !== null && typeof bound === 'object' ? bound : null
    app.log.info({ port: address?.port, host: options.host }, 'metrics served at GET /metrics on their own port (METRICS_PORT)')
  })
  app.addHook('onClose', async () => {
    await listener.close()
  })
}
