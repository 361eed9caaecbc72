import { fileURLToPath } from 'node:url'
import { afterAll, expect, it } from 'vitest'
import { FakePostgres } from '../helpers/fake-postgres.js'
import { cleanUp, exitWithin, launch } from '../processes.js'

/**
 * A PostgreSQL connection error must never end a process: here the one moment pg-pool leaves a
 * connection without an 'error' listener, between handing a new connection over and the caller
 * getting it (a resolved promise, run only after the rest of the socket read is parsed).
 */

const POOL_CLIENT = fileURLToPath(new URL('../fixtures/postgres-pool-client.mjs', import.meta.url))

afterAll(() => cleanUp())

it('a new pooled connection whose ReadyForQuery and FATAL 57P01 arrive in one read fails its query, and the process goes on', async () => {
  // The first connection (openPostgres's check, then the slow query) answers; the second, opened
  // for the next query, is terminated as it becomes ready; the third answers.
  const fake = await FakePostgres.start((index) => (index === 1 ? 'terminate-when-ready' : 'answer'))
  try {
    const client = launch(POOL_CLIENT, [fake.url], {})
    const exit = await exitWithin(client, 15_000)
    expect({ exit, stderr: client.stderr() }).toEqual({ exit: { code: 0, signal: null }, stderr: '' })
    expect(JSON.parse(client.stdout())).toEqual({ slow: 'answered', raced: expect.stringMatching(/^error: /), after: 'answered' })
    expect(fake.connections).toEqual(['answer', 'terminate-when-ready', 'answer'])
  } finally {
    await fake.close()
  }
})
