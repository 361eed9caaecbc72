#!/usr/bin/env node
import { buildApp } from './app.js'
import { ensureDevelopmentKey } from './bootstrap.js'
import type { Redis } from 'ioredis'
import { connectRedis } from './auth/redis-rate-limiter.js'
import type { Socket } from 'node:net'
import { ConfigError, loadConfig, startError } from './config.js'
import { openDatabase } from './modules/database.js'
import { cutArrivingRequest } from './http/client-errors.js'
import { pino } from 'pino'
import { handleUncaughtErrors } from './uncaught.js'

/**
 * After a stop signal, requests still arriving (head or body) get this long, at most
 * REQUEST_TIMEOUT_MS, before they are answered 408 and their connection closed.
 */
const ARRIVAL_GRACE_MS = 3_000

async function main(): Promise<void> {
  let config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`devplatform: invalid configuration: ${error.message}\n`)
      process.exit(1)
    }
    throw error
  }
  handleUncaughtErrors(pino({ level: config.logLevel }))

  // Each connection attempt is bounded (a few seconds), so a bad or unreachable URL ends start-up
  // with one line naming the variable instead of a hang. Redis first: a start that fails on it
  // must not have migrated the database.
  let redis: Redis | undefined
  if (config.redisUrl !== undefined) redis = await connectRedis(config.redisUrl).catch(startError('REDIS_URL'))
  const db = await openDatabase(config.database).catch((error: unknown) => {
    redis?.disconnect()
    return startError('DATABASE_URL')(error)
  })
  const devKey = await ensureDevelopmentKey(db, config.nodeEnv)
  const app = await buildApp({ config, db, ...(redis === undefined ? {} : { redis }) })
  // Node's own check of request time limits stops with server.close(), so shutdown does its own.
  const sockets = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  const arrivalGraceMs = Math.min(ARRIVAL_GRACE_MS, config.requestTimeoutMs)

  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    // close() stops accepting, waits for in-flight requests, then runs onClose (the database).
    // Keep-alive connections that go idle after close() began would hold it open until the
    // client hangs up, so close them as they go idle. A slow sender would hold it until the
    // hard deadline, so requests still arriving after the grace are answered 408 and closed.
    // After 30 s (a handler that never finishes), close whatever is left.
    const signalledAt = Date.now()
    const closeIdle = setInterval(() => {
      app.server.closeIdleConnections()
      if (Date.now() - signalledAt < arrivalGraceMs) return
      for (const socket of sockets) cutArrivingRequest(socket, app.log)
    }, 100)
    const deadline = setTimeout(() => app.server.closeAllConnections(), 30_000)
    deadline.unref()
    app.close().then(
      () => {
        clearInterval(closeIdle)
        process.exit(0)
      },
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))

  const address = await app.listen({ port: config.port, host: config.host })
  if (devKey !== undefined) {
    // Printed once, outside the logger: the secret is shown here and never stored or logged.
    const base = address.replace('0.0.0.0', '127.0.0.1')
    process.stdout.write(
      [
        '',
        'Created a development application and API key (shown once; the secret is stored only as a digest):',
        `  x-client-key:    ${devKey.client_key}`,
        `  x-client-secret: ${devKey.client_secret}`,
        'Try it:',
        `  curl -s -H 'x-client-key: ${devKey.client_key}' -H 'x-client-secret: ${devKey.client_secret}' ${base}/api/v0/health`,
        `API reference: ${base}/docs`,
        '',
      ].join('\n') + '\n',
    )
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`devplatform: failed to start: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
