import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** What the tests that run the built CLI and server as child processes share. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const CLI = join(ROOT, 'dist', 'cli', 'index.js')
export const SERVER = join(ROOT, 'dist', 'server.js')

const children = new Set<ChildProcess>()
const dirs: string[] = []

/** Follows a child so cleanUp() can kill it if a test leaves it running. */
export function track<T extends ChildProcess>(child: T): T {
  children.add(child)
  child.on('close', () => children.delete(child))
  return child
}

/** A fresh temporary directory and the DATABASE_URL of a SQLite file inside it. */
/** A new temporary directory, removed by cleanUp(). */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}

export function freshDb(prefix: string): { dir: string; file: string; url: string } {
  const dir = tempDir(prefix)
  const file = join(dir, 'x.db')
  return { dir, file, url: `sqlite:${file}` }
}

/** Every variable the server, the CLI and the worker read. */
const SERVICE_VARIABLES = [
  'PORT',
  'HOST',
  'DATABASE_URL',
  'DATABASE_POOL_SIZE',
  'REDIS_URL',
  'REDIS_TIMEOUT_MS',
  'METRICS_PORT',
  'PRODUCT_IMAGES_DIR',
  'CHECKOUT_ENVIRONMENT',
  'PUBLIC_URL',
  'LOG_LEVEL',
  'REQUEST_TIMEOUT_MS',
  'AUTH_FAILURES_PER_ADDRESS',
  'AUTH_FAILURES_PER_KEY',
  'AUTH_FAILURE_WINDOW_SECONDS',
  'NODE_ENV',
  'WEBHOOK_DISPATCHER',
  'WEBHOOK_TIMEOUT_MS',
  'WEBHOOK_CONCURRENCY',
  'WEBHOOK_CONCURRENCY_PER_WEBHOOK',
  'WEBHOOK_POLL_MS',
  'DRAIN_SCHEDULER',
  'DRAIN_DELAY_FAST_MS',
  'DRAIN_DELAY_ACH_MS',
  'DRAIN_POLL_MS',
  'DRAIN_CONCURRENCY',
  'EXCHANGE_RATE_MAX_AGE_SECONDS',
  'EXCHANGE_RATES_FILE',
  'CHAINS_FILE',
]

/** The parent's environment without any of the service's variables, plus the given ones. */
export function serviceEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of SERVICE_VARIABLES) delete env[name]
  return { ...env, ...vars }
}

/** For afterAll: kills what is still running and removes the temporary directories. */
export function cleanUp(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface Running {
  child: ChildProcessWithoutNullStreams
  stdout: () => string
  stderr: () => string
  exited: Promise<Exit>
  /** resolves when stdout matches, rejects on exit or timeout */
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>
}

/** Starts `node script args` (tracked) in the repository root with serviceEnv(vars), collecting its output. */
export function launch(script: string, args: string[], vars: Record<string, string>): Running {
  const child = track(spawn(process.execPath, [script, ...args], { cwd: ROOT, env: serviceEnv(vars) }))
  let out = ''
  let err = ''
  const watchers = new Set<() => void>()
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
    for (const watcher of watchers) watcher()
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => {
      for (const watcher of watchers) watcher()
      resolve({ code, signal })
    })
  })
  const waitFor = (pattern: RegExp, timeoutMs = 8_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = out.match(pattern)
        if (match !== null) {
          done()
          resolve(match)
        } else if (child.exitCode !== null || child.signalCode !== null) {
          done()
          reject(new Error(`process exited before printing ${String(pattern)}; stdout=${out} stderr=${err}`))
        }
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`no ${String(pattern)} within ${timeoutMs} ms; stdout=${out} stderr=${err}`))
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        watchers.delete(check)
      }
      watchers.add(check)
      check()
    })
  return { child, stdout: () => out, stderr: () => err, exited, waitFor }
}

/** Waits for exit within `ms`; kills and fails otherwise. */
export async function exitWithin(running: Running, ms = 5_000): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms)
  })
  const result = await Promise.race([running.exited, timeout])
  clearTimeout(timer)
  if (result === 'timeout') {
    running.child.kill('SIGKILL')
    throw new Error(`process did not exit within ${ms} ms; stdout=${running.stdout()} stderr=${running.stderr()}`)
  }
  return result
}

/**
 * Polls `probe` every `intervalMs` until it returns something other than undefined, and returns
 * that; fails with `what` (and the last probe's error, if it threw) once `timeoutMs` has passed.
 */
export async function waitUntil<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined) return value
      lastError = undefined
    } catch (error) {
      lastError = error
    }
    if (Date.now() >= deadline) {
      const detail = lastError === undefined ? '' : ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`)
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
