import { type ServerProcess, startServerProcess } from '../helpers/server-process.js'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { dropFreshDatabases, freshDatabase } from '../backend.js'
import { CLI, cleanUp, type Exit, exitWithin, freshDb, launch, type Running, SERVER } from '../processes.js'

const EXIT_TIMEOUT_MS = 5_000

const CURL_LINE = /^\s*(curl .*)$/m
const KEY_LINE = /x-client-key:\s+(\S+)/
const SECRET_LINE = /x-client-secret:\s+(\S+)/

afterAll(async () => {
  cleanUp()
  await dropFreshDatabases()
})

async function startServer(vars: Record<string, string>): Promise<ServerProcess> {
  const started = await startServerProcess(vars, { timeoutMs: 8_000 })
  // The banner (if any) is written right after listening; a served request guarantees it was written.
  const res = await fetch(`${started.baseUrl}/api/v0/health/public`)
  expect(res.status).toBe(200)
  await res.arrayBuffer()
  await sleep(150)
  return started
}

async function stop(running: Running): Promise<Exit> {
  running.child.kill('SIGTERM')
  return exitWithin(running)
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Headers (-H 'name: value') and the URL of a printed curl line. */
function parseCurl(line: string): { url: string; headers: Record<string, string> } {
  const headers: Record<string, string> = {}
  for (const match of line.matchAll(/-H '([^':]+):\s*([^']*)'/g)) {
    const [, name, value] = match
    if (name !== undefined && value !== undefined) headers[name] = value
  }
  const url = line.match(/(https?:\/\/\S+)\s*$/)?.[1]
  if (url === undefined) throw new Error(`no URL in ${line}`)
  return { url, headers }
}

const curlAvailable = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0

describe('start-up on an empty database', () => {
  it('prints a development key pair and a curl line that works as printed; a second start prints no new key', async () => {
    const { url: databaseUrl } = await freshDatabase()
    const first = await startServer({ DATABASE_URL: databaseUrl })
    try {
      const out = first.stdout()
      const clientKey = out.match(KEY_LINE)?.[1]
      const clientSecret = out.match(SECRET_LINE)?.[1]
      expect(clientKey).toMatch(/^pk_test_[A-Za-z0-9_-]{22,}$/)
      expect(clientSecret).toMatch(/^sk_test_[A-Za-z0-9_-]{22,}$/)
      const curlLine = out.match(CURL_LINE)?.[1]
      expect(curlLine).toBeDefined()
      const line = curlLine ?? ''
      expect(line).toContain(clientKey ?? '-')
      expect(line).toContain(clientSecret ?? '-')

      const { url, headers } = parseCurl(line)
      expect(url.startsWith(`${first.baseUrl}/`)).toBe(true)
      expect(headers['x-client-key']).toBe(clientKey)
      expect(headers['x-client-secret']).toBe(clientSecret)
      const res = await fetch(url, { headers })
      expect(res.status).toBe(200)
      await res.arrayBuffer()

      if (curlAvailable) {
        // Run the line exactly as printed, through a shell, and also have curl report the status.
        const printed = spawnSync('sh', ['-c', line], { encoding: 'utf8', timeout: 5_000 })
        expect(printed.status).toBe(0)
        expect(JSON.parse(printed.stdout)).toMatchObject({ status: 'ok', database: 'connected', message: 'Service is up and running', authenticated: true })
        const status = spawnSync('sh', ['-c', `${line} -o /dev/null -w '%{http_code}'`], { encoding: 'utf8', timeout: 5_000 })
        expect(status.stdout).toBe('200')
      }

      // The secret never reaches a log line, only the banner.
      const logLines = out.split('\n').filter((l) => l.startsWith('{'))
      expect(logLines.length).toBeGreaterThan(0)
      for (const logLine of logLines) expect(logLine).not.toContain(clientSecret ?? '-')
    } finally {
      expect(await stop(first)).toEqual({ code: 0, signal: null })
    }

    const second = await startServer({ DATABASE_URL: databaseUrl })
    try {
      const out = second.stdout()
      expect(out).not.toMatch(/pk_test_|sk_test_|pk_live_|sk_live_/)
      expect(out).not.toMatch(CURL_LINE)
      // The key printed by the first start still works against the same database.
      const firstCurl = first.stdout().match(CURL_LINE)?.[1] ?? ''
      const { headers } = parseCurl(firstCurl)
      const res = await fetch(`${second.baseUrl}/api/v0/health`, { headers })
      expect(res.status).toBe(200)
      await res.arrayBuffer()
    } finally {
      expect(await stop(second)).toEqual({ code: 0, signal: null })
    }
  })

  it('with NODE_ENV=production prints no key and creates no application', async () => {
    const { url: databaseUrl } = await freshDatabase()
    const server = await startServer({ DATABASE_URL: databaseUrl, NODE_ENV: 'production', PUBLIC_URL: 'https://pay.example.com' })
    try {
      expect(server.stdout()).not.toMatch(/pk_test_|sk_test_|pk_live_|sk_live_/)
      expect(server.stdout()).not.toMatch(CURL_LINE)
    } finally {
      expect(await stop(server)).toEqual({ code: 0, signal: null })
    }
    const list = launch(CLI, ['apps', 'list', '--json'], { DATABASE_URL: databaseUrl })
    expect(await exitWithin(list)).toEqual({ code: 0, signal: null })
    expect(JSON.parse(list.stdout())).toEqual([])
  })
})

interface InFlightOutcome {
  /** the raw HTTP response to the request that was in flight at SIGTERM */
  response: string
  /** whether the process was still running 300 ms after SIGTERM, with the request unfinished */
  aliveWhileInFlight: boolean
  /** status of a new request sent after SIGTERM, or 'refused' */
  late: number | 'refused'
  /** how the process ended, or 'timeout' when it was still running 5 s after SIGTERM */
  exit: Exit | 'timeout'
  headers: Record<string, string>
}

/**
 * Starts a server on `databaseUrl`, sends POST /api/v0/customers with only half its body, sends
 * SIGTERM, then the rest of the body. With `keepAlive` the client keeps its connection open
 * afterwards (as a proxy or a connection pool does); without it the request says Connection: close.
 */
async function shutdownWithRequestInFlight(databaseUrl: string, keepAlive: boolean): Promise<InFlightOutcome> {
  const server = await startServer({ DATABASE_URL: databaseUrl })
  const { headers } = parseCurl(server.stdout().match(CURL_LINE)?.[1] ?? '')
  const socket = connect(server.port, '127.0.0.1')
  try {
    const body = JSON.stringify({ first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' })
    const half = Math.floor(body.length / 2)
    socket.setEncoding('utf8')
    let response = ''
    const responseWatchers = new Set<() => void>()
    socket.on('data', (chunk: string) => {
      response += chunk
      for (const watcher of responseWatchers) watcher()
    })
    socket.on('error', () => undefined)
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))

    // Headers sent, body still on its way: the request is in flight when SIGTERM arrives.
    socket.write(
      [
        'POST /api/v0/customers HTTP/1.1',
        `Host: 127.0.0.1:${server.port}`,
        `x-client-key: ${headers['x-client-key'] ?? ''}`,
        `x-client-secret: ${headers['x-client-secret'] ?? ''}`,
        'content-type: application/json',
        `content-length: ${Buffer.byteLength(body)}`,
        `connection: ${keepAlive ? 'keep-alive' : 'close'}`,
        '',
        body.slice(0, half),
      ].join('\r\n'),
    )
    await sleep(300)

    server.child.kill('SIGTERM')
    const signalledAt = Date.now()
    await sleep(300)
    const aliveWhileInFlight = server.child.exitCode === null && server.child.signalCode === null

    const late = await fetch(`${server.baseUrl}/api/v0/health/public`, { headers: { connection: 'close' } }).then(
      async (res): Promise<number | 'refused'> => {
        await res.arrayBuffer()
        return res.status
      },
      (): 'refused' => 'refused',
    )

    socket.write(body.slice(half))
    const complete = () => {
      const end = response.indexOf('\r\n\r\n')
      if (end < 0) return false
      const length = Number(response.slice(0, end).match(/content-length:\s*(\d+)/i)?.[1] ?? NaN)
      return Buffer.byteLength(response.slice(end + 4)) >= length
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, EXIT_TIMEOUT_MS)
      function done() {
        clearTimeout(timer)
        responseWatchers.delete(check)
        resolve()
      }
      function check() {
        if (complete()) done()
      }
      responseWatchers.add(check)
      check()
    })

    const exit = await exitWithin(server, Math.max(EXIT_TIMEOUT_MS - (Date.now() - signalledAt), 0)).catch((): 'timeout' => 'timeout')
    return { response, aliveWhileInFlight, late, exit, headers }
  } finally {
    socket.destroy()
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL')
      await server.exited
    }
  }
}

describe('SIGTERM', () => {
  it('stops accepting, finishes the in-flight request, closes the database intact and exits 0', async () => {
    const { url: databaseUrl } = await freshDatabase()
    const outcome = await shutdownWithRequestInFlight(databaseUrl, false)
    expect(outcome.aliveWhileInFlight).toBe(true)
    // New connections are no longer served (refused, or 503 while closing).
    expect(['refused', 503]).toContain(outcome.late)
    expect(outcome.response).toMatch(/^HTTP\/1\.1 201 /)
    expect(outcome.response.slice(outcome.response.indexOf('\r\n\r\n') + 4)).toContain('"first_name":"Ada"')
    expect(outcome.exit).toEqual({ code: 0, signal: null })

    // The database is intact: a second start on it serves the customer written during shutdown.
    const again = await startServer({ DATABASE_URL: databaseUrl })
    try {
      expect(again.stdout()).not.toMatch(/sk_test_/)
      const res = await fetch(`${again.baseUrl}/api/v0/customers`, { headers: outcome.headers })
      expect(res.status).toBe(200)
      const list = (await res.json()) as { data: { first_name: string }[]; total: number }
      expect(list.total).toBe(1)
      expect(list.data[0]?.first_name).toBe('Ada')
    } finally {
      expect(await stop(again)).toEqual({ code: 0, signal: null })
    }
  })

  it('exits 0 within 5 s even when the client keeps its keep-alive connection open after the in-flight response', async () => {
    const { url: databaseUrl } = await freshDatabase()
    const outcome = await shutdownWithRequestInFlight(databaseUrl, true)
    expect(outcome.aliveWhileInFlight).toBe(true)
    expect(outcome.response).toMatch(/^HTTP\/1\.1 201 /)
    expect(outcome.exit).toEqual({ code: 0, signal: null })
  })

  it('on an idle server exits 0 within 5 s', async () => {
    const { url: databaseUrl } = await freshDatabase()
    const server = await startServer({ DATABASE_URL: databaseUrl })
    const started = Date.now()
    expect(await stop(server)).toEqual({ code: 0, signal: null })
    expect(Date.now() - started).toBeLessThan(EXIT_TIMEOUT_MS)
  })
})

describe('bad configuration stops start-up with one line naming the variable', () => {
  const cases: [string, Record<string, string>][] = [
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['PORT', { PORT: '-1' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['NODE_ENV', { NODE_ENV: 'staging' }],
    ['HOST', { HOST: 'not a host' }],
  ]

  it.each(cases)('%s=%o', async (name, vars) => {
    const { file, url } = freshDb('devplatform-server-')
    const running = launch(SERVER, [], { PORT: '0', DATABASE_URL: url, ...vars })
    const exit = await exitWithin(running)
    expect(exit.signal).toBeNull()
    expect(exit.code).toBe(1)
    const lines = running.stderr().split('\n')
    expect(lines, `stderr was ${JSON.stringify(running.stderr())}`).toHaveLength(2)
    expect(lines[1]).toBe('')
    expect(lines[0]).toContain(name)
    expect(running.stdout()).toBe('')
    expect(existsSync(file)).toBe(false)
  })
})

describe('a database directory that cannot be used stops start-up with one line naming the path and why', () => {
  // As root, permission bits do not stop a write: sysfs refuses new directories and files whoever asks.
  const cases: [string, string, RegExp][] = [
    ['a directory that cannot be created', 'sqlite:/sys/devplatform-test/x.db', /^devplatform: failed to start: DATABASE_URL: cannot create the directory \/sys\/devplatform-test for the SQLite database: E[A-Z]+: /],
    ['a directory that takes no new file', 'sqlite:/sys/kernel/devplatform-test.db', /^devplatform: failed to start: DATABASE_URL: the directory \/sys\/kernel of the SQLite database is not writable: E[A-Z]+: /],
  ]

  it.each(cases)('%s', async (_what, url, message) => {
    const running = launch(SERVER, [], { PORT: '0', DATABASE_URL: url })
    const exit = await exitWithin(running)
    expect(exit.code).toBe(1)
    const lines = running.stderr().split('\n')
    expect(lines, `stderr was ${JSON.stringify(running.stderr())}`).toHaveLength(2)
    expect(lines[0]).toMatch(message)
  })
})
