import { Socket } from 'node:net'
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
 * Two runs of the same suite: on SQLite, and on PostgreSQL + Redis. The second runs when
 * TEST_DATABASE_URL / TEST_REDIS_URL are set (then a missing server fails the run, as in CI) or
 * when both answer on their local defaults; otherwise one line says it did not run.
 */
export default defineConfig(async () => {
  const required = Boolean(process.env.TEST_DATABASE_URL) || Boolean(process.env.TEST_REDIS_URL)
  const databaseUrl = process.env.TEST_DATABASE_URL || DEFAULT_DATABASE_URL
  const redisUrl = process.env.TEST_REDIS_URL || DEFAULT_REDIS_URL
  const postgres = required || ((await answers(databaseUrl, 5432)) && (await answers(redisUrl, 6379)))
  if (!postgres) {
    process.stdout.write(`PostgreSQL + Redis half not run: nothing answers at ${new URL(databaseUrl).host} and ${new URL(redisUrl).host} (set TEST_DATABASE_URL and TEST_REDIS_URL)\n`)
  }
  const shared = {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Each test file gets its own database (SQLite file or PostgreSQL database); files run in parallel worker processes.
    pool: 'forks' as const,
  }
  return {
    test: {
      projects: [
        // test/multi-instance/ starts several processes on one PostgreSQL + Redis: the second run only.
        { test: { ...shared, name: 'sqlite', exclude: ['test/multi-instance/**'], env: { TEST_BACKEND: 'sqlite' } } },
        // test/sqlite/ is about SQLite's own locking (another process holding the file's lock): the first run only;
        // so are the docs page in Chromium, which reads no data, and the guide's resource followed in a copy (it runs SQLite),
        // and the anvil harness's own tests (a chain and a token, no database); the platform's chain tests run on both.
        ...(postgres
          ? [
              {
                test: {
                  ...shared,
                  name: 'postgres',
                  exclude: ['test/sqlite/**', 'test/docs/docs-page.test.ts', 'test/docs/add-a-resource.test.ts', 'test/chains/anvil-*.test.ts'],
                  env: { TEST_BACKEND: 'postgres', TEST_DATABASE_URL: databaseUrl, TEST_REDIS_URL: redisUrl },
                },
              },
            ]
          : []),
      ],
    },
  }
})
