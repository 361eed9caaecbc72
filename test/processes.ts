import type { ChildProcess } from 'node:child_process'
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
export function freshDb(prefix: string): { dir: string; file: string; url: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  const file = join(dir, 'x.db')
  return { dir, file, url: `sqlite:${file}` }
}

/** The parent's environment without any of the service's variables, plus the given ones. */
export function serviceEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['PORT', 'HOST', 'DATABASE_URL', 'LOG_LEVEL', 'NODE_ENV']) delete env[name]
  return { ...env, ...vars }
}

/** For afterAll: kills what is still running and removes the temporary directories. */
export function cleanUp(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}
