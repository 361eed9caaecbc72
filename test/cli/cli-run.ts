import { spawn } from 'node:child_process'
import { expect } from 'vitest'
import { CLI, ROOT, serviceEnv, track } from '../processes.js'

/** Running the built CLI as a child process, and the shapes of its answers: what the CLI's test files share. */

export const RUN_TIMEOUT_MS = 10_000
/** npx loads the whole project's dependency tree before it runs anything: slow under a loaded CI. */
export const NPX_TIMEOUT_MS = 60_000


export interface RunResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export interface AppOut {
  id: string
  name: string
  created_at: string
}

export function run(command: string, args: string[], databaseUrl: string, cwd: string = ROOT, vars: Record<string, string> = {}, timeoutMs = RUN_TIMEOUT_MS): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = track(spawn(command, args, { cwd, env: serviceEnv({ DATABASE_URL: databaseUrl, ...vars }), stdio: ['ignore', 'pipe', 'pipe'] }))
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs} ms`))
    }, timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

export function cli(databaseUrl: string, ...args: string[]): Promise<RunResult> {
  return run(process.execPath, [CLI, ...args], databaseUrl)
}

/** The CLI with more environment variables than DATABASE_URL. */
export function cliWith(vars: Record<string, string>, databaseUrl: string, ...args: string[]): Promise<RunResult> {
  return run(process.execPath, [CLI, ...args], databaseUrl, ROOT, vars)
}

/** Asserts a successful --json run printed exactly one JSON document (one line) and returns it. */
export function oneJson(result: RunResult): unknown {
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  expect(result.stdout.endsWith('\n')).toBe(true)
  const lines = result.stdout.split('\n')
  expect(lines).toHaveLength(2)
  expect(lines[1]).toBe('')
  return JSON.parse(result.stdout)
}

/** Asserts a usage failure: exit 2, exactly one non-empty line on stderr, nothing on stdout. */
export function expectUsageError(result: RunResult): void {
  expect(result.stdout).toBe('')
  expect(result.code).toBe(2)
  const lines = result.stderr.split('\n')
  expect(lines, `stderr was ${JSON.stringify(result.stderr)}`).toHaveLength(2)
  expect(lines[0]?.trim()).not.toBe('')
  expect(lines[1]).toBe('')
}

export async function createApp(url: string, name: string): Promise<AppOut> {
  return oneJson(await cli(url, 'apps', 'create', '--name', name, '--json')) as AppOut
}
