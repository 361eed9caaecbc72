import { LATEST_MIGRATION } from '../../src/modules/database.js'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { dropFreshDatabases, freshDatabase, TEST_REDIS_URL } from '../backend.js'
import { cleanUp, exitWithin, launch, SERVER } from '../processes.js'
import { kill, startServer } from './limits-helpers.js'

afterAll(async () => {
  cleanUp()
  await dropFreshDatabases()
})

const WARNING = 'REDIS_URL is not set: rate limits are counted per instance'

describe('starting on PostgreSQL', () => {
  it('without REDIS_URL logs exactly one warning that limits are per instance; with it, none', async () => {
    const fresh = await freshDatabase('postgres')
    const alone = await startServer({ DATABASE_URL: fresh.url }, true)
    const lines = alone.stdout().split('\n').filter((line) => line.includes(WARNING))
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ level: 40 })
    await kill(alone)
    const shared = await startServer({ DATABASE_URL: fresh.url, REDIS_URL: TEST_REDIS_URL }, false)
    expect(shared.stdout()).not.toContain(WARNING)
    await kill(shared)
  })

  it('three instances starting at once on an empty database create one development key between them', async () => {
    const fresh = await freshDatabase('postgres')
    const servers = await Promise.all([1, 2, 3].map(() => startServer({ DATABASE_URL: fresh.url }, false)))
    await new Promise((resolve) => setTimeout(resolve, 500))
    const banners = servers.filter((server) => server.stdout().includes('Created a development application'))
    expect(banners).toHaveLength(1)
    expect(await fresh.count('select count(*) as n from apps')).toBe(1)
    expect(await fresh.count('select count(*) as n from api_keys')).toBe(1)
    for (const server of servers) await kill(server)
  })

  it('refuses a schema a newer version wrote: exit 1, one stderr line, nothing changed', async () => {
    const fresh = await freshDatabase('postgres')
    const first = await startServer({ DATABASE_URL: fresh.url }, true)
    await kill(first)
    const client = new pg.Client({ connectionString: fresh.url })
    await client.connect()
    const known = Number((await client.query('select count(*) as n from kysely_migration')).rows[0]?.n)
    await client.query("insert into kysely_migration (name, timestamp) values ('0099_future', '2030-01-01T00:00:00.000Z')")
    await client.end()
    const started = Date.now()
    const refused = launch(SERVER, [], { PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'development', DATABASE_URL: fresh.url })
    const exit = await exitWithin(refused, 10_000)
    expect(exit.code).toBe(1)
    expect(Date.now() - started).toBeLessThan(10_000)
    const stderr = refused.stderr().trim()
    expect(stderr.split('\n')).toHaveLength(1)
    expect(stderr).toBe(
      `devplatform: failed to start: DATABASE_URL: the database schema was written by a newer devplatform (migration 0099_future is unknown to this version, which knows up to ${LATEST_MIGRATION}); upgrade devplatform`,
    )
    expect(await fresh.count('select count(*) as n from kysely_migration')).toBe(known + 1)
  })

  it('an unroutable database host ends start-up within 10 s with one line naming DATABASE_URL', async () => {
    const started = Date.now()
    // 192.0.2.0/24 is TEST-NET-1: nothing answers, so the connection attempt must time out.
    const refused = launch(SERVER, [], { PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'development', DATABASE_URL: 'postgres://postgres@192.0.2.1:5432/test' })
    const exit = await exitWithin(refused, 12_000)
    expect(exit.code).toBe(1)
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(refused.stderr().trim().split('\n')).toHaveLength(1)
    expect(refused.stderr()).toMatch(/^devplatform: failed to start: DATABASE_URL: cannot connect to postgres:\/\/postgres@192\.0\.2\.1:5432\/test: /)
  })
})
