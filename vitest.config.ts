import { readdirSync, readFileSync } from 'node:fs'
import { Socket } from 'node:net'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test'
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'

/** Whether something accepts TCP connections at the URL's host and port (within 1 s). */
function answers(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = new Socket()
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once('error', () => done(false))
    socket.connect(Number(port || defaultPort), hostname, () => done(true))
  })
}

/**
 * A test file whose outcome cannot depend on the backend (pure functions, the documents, a child
 * process always on SQLite) or that only exercises Redis runs in one project, named by a line
 * `// vitest: sqlite project only — why` or `// vitest: postgres project only — why`:
 * the other run would repeat it on the same code and the same services.
 */
const ONE_PROJECT_MARKER = /^\/\/ vitest: (sqlite|postgres) project only\b/m

/** The test files marked for one project, by project, as paths relative to the repository root. */
function oneProjectFiles(): Record<'sqlite' | 'postgres', string[]> {
  const root = fileURLToPath(new URL('.', import.meta.url))
  const files: Record<'sqlite' | 'postgres', string[]> = { sqlite: [], postgres: [] }
  for (const entry of readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })) {
    if (!entry.endsWith('.test.ts')) continue
    const path = join(root, 'test', entry)
    const project = ONE_PROJECT_MARKER.exec(readFileSync(path, 'utf8'))?.[1]
    if (project === 'sqlite' || project === 'postgres') files[project].push(relative(root, path))
  }
  return files
}

/**
 * The suite on SQLite, the same on PostgreSQL + Redis, and the multi-instance files on PostgreSQL +
 * Redis (docs/testing.md). The last two run when TEST_DATABASE_URL / TEST_REDIS_URL are set (then
 * a missing server fails the run, as in CI) or when both answer on their local defaults;
 * otherwise one line says they did not run.
 */
export default defineConfig(async () => {
  const required = Boolean(process.env.TEST_DATABASE_URL) || Boolean(process.env.TEST_REDIS_URL)
  const databaseUrl = process.env.TEST_DATABASE_URL || DEFAULT_DATABASE_URL
  const redisUrl = process.env.TEST_REDIS_URL || DEFAULT_REDIS_URL
  const postgres = required || ((await answers(databaseUrl, 5432)) && (await answers(redisUrl, 6379)))
  if (!postgres) {
    process.stdout.write(`PostgreSQL + Redis half not run: nothing answers at ${new URL(databaseUrl).host} and ${new URL(redisUrl).host} (set TEST_DATABASE_URL and TEST_REDIS_URL)\n`)
  }
  const only = oneProjectFiles()
  const shared = {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Each test file gets its own database (SQLite file or PostgreSQL database) and its own worker process.
    pool: 'forks' as const,
    // Once per project: the migrated database test servers' databases are copied from.
    globalSetup: ['test/global-setup.ts'],
  }
  const postgresEnv = { TEST_BACKEND: 'postgres', TEST_DATABASE_URL: databaseUrl, TEST_REDIS_URL: redisUrl }
  return {
    test: {
      projects: [
        // Two files at a time: most of a file's time is waiting on its child processes (servers, the
        // CLI, anvil, Chromium), so a second worker uses the core the first leaves idle.
        // test/multi-instance/ runs on PostgreSQL + Redis only (below).
        { test: { ...shared, name: 'sqlite', maxWorkers: 2, sequence: { groupOrder: 0 }, exclude: ['test/multi-instance/**', ...only.postgres], env: { TEST_BACKEND: 'sqlite' } } },
        // test/sqlite/ is about SQLite's own locking (another process holding the file's lock): the first run only.
        ...(postgres
          ? [
              {
                test: {
                  ...shared,
                  name: 'postgres',
                  maxWorkers: 2,
                  sequence: { groupOrder: 0 },
                  exclude: ['test/sqlite/**', 'test/multi-instance/**', ...only.sqlite],
                  env: postgresEnv,
                },
              },
              // Several processes on one PostgreSQL + Redis, racing, killed and failed over, with
              // bounds in seconds: one file at a time, after the rest, on a machine nothing else loads.
              { test: { ...shared, name: 'multi-instance', maxWorkers: 1, sequence: { groupOrder: 1 }, include: ['test/multi-instance/**/*.test.ts'], env: postgresEnv } },
            ]
          : []),
      ],
    },
  }
})
