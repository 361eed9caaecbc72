// vitest: sqlite project only — the built server and CLI run on SQLite whatever the run.
import { fileURLToPath, pathToFileURL } from 'node:url'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { createRedisClient } from '../../src/auth/redis-rate-limiter.js'
import { RedisUnavailableError } from '../../src/auth/redis-circuit.js'
import { isBackendConnectionFault } from '../../src/db/errors.js'
import { startServerProcess } from '../helpers/server-process.js'
import { cleanUp, CLI, exitWithin, freshDb, launch, SERVER } from '../processes.js'

/**
 * The last resort for an error nothing handled (src/uncaught.ts): a backend connection fault is
 * logged and the process goes on; anything else is logged at fatal with its stack and the process
 * exits 1. Each process gets the fixture preloaded, which raises the error once the entry point
 * has installed its handlers.
 */

const FIXTURE = fileURLToPath(new URL('../fixtures/uncaught-at-start.mjs', import.meta.url))
const SECRET_PASSWORD = 'uncaught-fixture-password'
const GOING_ON = 'backend connection fault outside any request: going on'
const EXITING = 'uncaught error: exiting'

afterAll(() => cleanUp())

/** The variables that preload the fixture raising `kind`, on a fresh SQLite database. */
function raising(kind: 'backend' | 'defect-exception' | 'defect-rejection'): Record<string, string> {
  return { NODE_OPTIONS: `--import=${pathToFileURL(FIXTURE).href}`, UNCAUGHT: kind, DATABASE_URL: freshDb('uncaught-').url, LOG_LEVEL: 'info' }
}

interface LogLine {
  level: number
  msg: string
  origin?: string
  error?: { type: string; message: string; stack?: string; code?: string }
}

function logLines(text: string): LogLine[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)
}

describe('which errors are backend connection faults', () => {
  it('a terminated or refused connection of PostgreSQL, a socket error and a Redis connection that is down are; a defect and a query error are not', async () => {
    const terminated = new pg.DatabaseError('terminating connection due to administrator command', 79, 'error')
    terminated.code = '57P01'
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' })
    const redis = createRedisClient('redis://127.0.0.1:1')
    const redisDown = await redis.get('key').then(() => undefined, (error: unknown) => error)
    redis.disconnect()
    for (const fault of [terminated, reset, redisDown, new Error('Connection terminated unexpectedly'), new RedisUnavailableError('circuit open'), { code: '08006' }, { code: '57P03' }]) {
      expect(isBackendConnectionFault(fault), String(fault)).toBe(true)
    }
    const duplicate = new pg.DatabaseError('duplicate key value violates unique constraint', 90, 'error')
    duplicate.code = '23505'
    for (const defect of [new TypeError('x is undefined'), duplicate, { code: '42P01' }, { code: '57014' }, 'a string', undefined]) {
      expect(isBackendConnectionFault(defect), String(defect)).toBe(false)
    }
  })
})

describe('the server', () => {
  it('logs a PostgreSQL connection error nothing listened for, and an unawaited one, without secrets, and goes on serving', async () => {
    const server = await startServerProcess(raising('backend'))
    try {
      const res = await fetch(`${server.baseUrl}/api/v0/health/public`)
      expect(res.status).toBe(200)
      const faults = logLines(server.stdout()).filter((line) => line.msg === GOING_ON)
      expect(faults.map((line) => ({ level: line.level, origin: line.origin, code: line.error?.code, message: line.error?.message }))).toEqual([
        { level: 50, origin: 'uncaughtException', code: '57P01', message: 'terminating connection due to administrator command' },
        { level: 50, origin: 'unhandledRejection', code: undefined, message: 'Connection terminated unexpectedly' },
      ])
      expect(faults[0]?.error?.stack).toContain('uncaught-at-start.mjs')
      expect(server.stdout() + server.stderr()).not.toContain(SECRET_PASSWORD)
    } finally {
      server.child.kill('SIGTERM')
      await exitWithin(server)
    }
  })

  it('logs any other uncaught exception at fatal with its stack and exits 1', async () => {
    const running = launch(SERVER, [], { PORT: '0', ...raising('defect-exception') })
    expect(await exitWithin(running, 10_000)).toEqual({ code: 1, signal: null })
    const fatal = logLines(running.stdout()).filter((line) => line.level === 60)
    expect(fatal).toMatchObject([{ msg: EXITING, origin: 'uncaughtException', error: { type: 'TypeError', message: 'a defect thrown from a callback' } }])
    expect(fatal[0]?.error?.stack).toContain('uncaught-at-start.mjs')
  })
})

describe('the CLI', () => {
  it('the worker logs a PostgreSQL connection error nothing listened for and goes on; a SIGTERM still stops it with 0', async () => {
    const worker = launch(CLI, ['worker'], raising('backend'))
    await worker.waitFor(/webhook worker started/, 10_000)
    await worker.waitFor(/Connection terminated unexpectedly/, 5_000)
    expect(logLines(worker.stdout()).filter((line) => line.msg === GOING_ON)).toHaveLength(2)
    worker.child.kill('SIGTERM')
    expect(await exitWithin(worker, 10_000)).toEqual({ code: 0, signal: null })
    expect(worker.stdout()).not.toContain(SECRET_PASSWORD)
  })

  it('the worker logs a rejection nobody awaited at fatal and exits 1', async () => {
    const worker = launch(CLI, ['worker'], raising('defect-rejection'))
    expect(await exitWithin(worker, 10_000)).toEqual({ code: 1, signal: null })
    expect(logLines(worker.stdout()).filter((line) => line.level === 60)).toMatchObject([{ msg: EXITING, origin: 'unhandledRejection', error: { type: 'RangeError', message: 'a defect nobody awaited' } }])
  })

  it('a one-shot command logs a defect at fatal on stderr, keeping stdout for its answer, and exits 1', async () => {
    const command = launch(CLI, ['rates', 'list', '--json'], raising('defect-exception'))
    expect(await exitWithin(command, 10_000)).toEqual({ code: 1, signal: null })
    expect(logLines(command.stderr()).filter((line) => line.level === 60)).toMatchObject([{ msg: EXITING, error: { type: 'TypeError' } }])
    expect(logLines(command.stdout()).filter((line) => line.level !== undefined)).toEqual([])
  })
})
