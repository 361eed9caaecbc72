import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeTransaction } from '../../src/db/database.js'
import { pipelined, PreparedInsert, PreparedQuery } from '../../src/db/prepared.js'
import { startTestServer, type TestServer } from '../helper.js'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.close()
})

const APP_BY_ID = new PreparedQuery<{ id: string; name: string }>(1, (db, id) => db.selectFrom('apps').select(['id', 'name']).where('id', '=', id))
/** one slot used twice, beside a value given to the builder directly */
const NAMED_TWICE = new PreparedQuery<{ id: string }>(1, (db, name) =>
  db
    .selectFrom('apps')
    .select('id')
    .where('name', '=', name)
    .where(sql<boolean>`${name} = name`)
    .where('created_at', '>', '2000-01-01'),
)

describe('PreparedQuery', () => {
  it('binds each run’s own values: the first run’s are not kept', async () => {
    const a = await server.app.repos.apps.createApp('prepared a')
    const b = await server.app.repos.apps.createApp('prepared b')
    expect(await APP_BY_ID.executeTakeFirst(server.app.db, a.id)).toEqual({ id: a.id, name: 'prepared a' })
    expect(await APP_BY_ID.executeTakeFirst(server.app.db, b.id)).toEqual({ id: b.id, name: 'prepared b' })
    expect(await APP_BY_ID.executeTakeFirst(server.app.db, '00000000-0000-4000-8000-000000000000')).toBeUndefined()
  })

  it('puts a slot’s value everywhere the slot was used, and keeps the values given to the builder', async () => {
    const app = await server.app.repos.apps.createApp('prepared twice')
    expect(await NAMED_TWICE.execute(server.app.db, 'prepared twice')).toEqual([{ id: app.id }])
    expect(await NAMED_TWICE.execute(server.app.db, 'no such name')).toEqual([])
  })

  it('runs on the transaction it is given: it sees the transaction’s own uncommitted row', async () => {
    const id = '11111111-1111-4111-8111-111111111111'
    const found = await writeTransaction(server.app.db, async (tx) => {
      await tx.insertInto('apps').values({ id, name: 'inside', created_at: new Date().toISOString() }).execute()
      return APP_BY_ID.executeTakeFirst(tx, id)
    })
    expect(found).toEqual({ id, name: 'inside' })
  })

  it('binds a number where the builder was given a slot (a limit): each run its own', async () => {
    const prefix = `prepared limit ${Date.now()}`
    for (const name of ['a', 'b', 'c']) await server.app.repos.apps.createApp(`${prefix} ${name}`)
    const named = new PreparedQuery<{ name: string }>(2, (db, like, limit) => ({
      compile: () => sql<{ name: string }>`select name from apps where name like ${like} order by name limit ${limit}`.compile(db),
    }))
    expect(await named.execute(server.app.db, `${prefix}%`, 2)).toEqual([{ name: `${prefix} a` }, { name: `${prefix} b` }])
    expect(await named.execute(server.app.db, `${prefix}%`, 1)).toEqual([{ name: `${prefix} a` }])
    expect(await named.execute(server.app.db, `${prefix}%`, 3)).toHaveLength(3)
  })

  it('refuses a run with more or fewer values than slots', async () => {
    await expect(APP_BY_ID.execute(server.app.db)).rejects.toThrow('1 values expected, 0 given')
    await expect(APP_BY_ID.execute(server.app.db, 'a', 'b')).rejects.toThrow('1 values expected, 2 given')
  })

  it('PreparedInsert stores each row’s own values (strings, numbers, nulls), and a row naming other columns gets its own statement', async () => {
    const insert = new PreparedInsert('taxes')
    const app = await server.app.repos.apps.createApp('prepared insert')
    const base = { app_id: app.id, active: 1, app_ids: '[]', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' }
    await insert.execute(server.app.db, { id: '22222222-2222-4222-8222-222222222221', name: 'one', description: null, percentage: 5, ...base })
    await insert.execute(server.app.db, { id: '22222222-2222-4222-8222-222222222222', name: 'two', description: 'second', percentage: 7.5, ...base })
    // no description column at all: another column list, another statement
    await insert.execute(server.app.db, { id: '22222222-2222-4222-8222-222222222223', name: 'three', percentage: 1, ...base })
    const rows = await server.app.db.selectFrom('taxes').select(['name', 'description', 'percentage']).where('app_id', '=', app.id).orderBy('id').execute()
    expect(rows).toEqual([
      { name: 'one', description: null, percentage: 5 },
      { name: 'two', description: 'second', percentage: 7.5 },
      { name: 'three', description: null, percentage: 1 },
    ])
  })
})

const INSERT_APP = new PreparedQuery<{ id: string }>(2, (db, id, name) => db.insertInto('apps').values({ id, name, created_at: '2026-01-01T00:00:00.000Z' }).returning('id'))
const APP_NAMES_LIKE = new PreparedQuery<{ name: string }>(1, (db, like) => db.selectFrom('apps').select('name').where('name', 'like', like).orderBy('name'))

describe('pipelined', () => {
  it('runs its statements in order in the transaction, each answering its rows, and they commit together', async () => {
    const db = server.app.db
    const [first, second, both] = await writeTransaction(db, (tx) =>
      pipelined(
        tx,
        INSERT_APP.bind(tx, '33333333-3333-4333-8333-333333333331', 'pipelined a'),
        INSERT_APP.bind(tx, '33333333-3333-4333-8333-333333333332', 'pipelined b'),
        APP_NAMES_LIKE.bind(tx, 'pipelined %'),
      ),
    )
    expect(first).toEqual([{ id: '33333333-3333-4333-8333-333333333331' }])
    expect(second).toEqual([{ id: '33333333-3333-4333-8333-333333333332' }])
    // the third statement sees the first two's rows: they ran before it, in the same transaction
    expect(both).toEqual([{ name: 'pipelined a' }, { name: 'pipelined b' }])
    expect(await APP_NAMES_LIKE.execute(db, 'pipelined %')).toEqual([{ name: 'pipelined a' }, { name: 'pipelined b' }])
  })

  it('throws the first failure, and the transaction around it commits nothing, not even the statements before it', async () => {
    const db = server.app.db
    const id = '33333333-3333-4333-8333-333333333341'
    const failure: unknown = await writeTransaction(db, (tx) =>
      pipelined(tx, INSERT_APP.bind(tx, id, 'failing a'), INSERT_APP.bind(tx, id, 'failing b'), INSERT_APP.bind(tx, '33333333-3333-4333-8333-333333333342', 'failing c')),
    ).catch((error: unknown) => error)
    expect(String(failure)).toMatch(/unique|UNIQUE/)
    expect(await APP_NAMES_LIKE.execute(db, 'failing %')).toEqual([])
    // the connection is fine afterwards
    expect(await writeTransaction(db, (tx) => pipelined(tx, INSERT_APP.bind(tx, id, 'failing d')))).toEqual([[{ id }]])
  })
})
