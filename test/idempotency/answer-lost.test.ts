import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_BACKEND } from '../backend.js'
import { startTestServer, type TestServer } from '../helper.js'
import { countRows, errorBody, freshKey, postWithKey } from './helpers.js'

const ANSWER_LOST = 'The first request with this Idempotency-Key was carried out, but its answer was lost; it is not carried out again'
const CUSTOMER = { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }
const MISSING_CUSTOMERS_ADDRESSES = '/api/v0/customers/00000000-0000-4000-8000-000000000000/liquidation_addresses'
const ADDRESS = { chain: 'ethereum', currency: 'usdc', address: '0x4d0280da2f2fDA5103914bCc5aad114743152A9c', external_account_id: 'ext_1' }

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => server.close())

/**
 * The answer can't be stored (as when the process dies between the commit and storing it): a
 * trigger on the server's own database refuses every write of a response into idempotency_keys.
 */
async function refuseStoredAnswers(): Promise<() => Promise<void>> {
  if (TEST_BACKEND === 'postgres') {
    await sql.raw(`create or replace function refuse_answer() returns trigger language plpgsql as $$ begin raise exception 'injected fault'; end $$`).execute(server.app.db)
    await sql`create trigger refuse_answer before update on idempotency_keys for each row when (new.status_code is not null) execute function refuse_answer()`.execute(server.app.db)
  } else {
    await sql`create trigger refuse_answer before update of status_code on idempotency_keys when new.status_code is not null begin select raise(abort, 'injected fault'); end`.execute(server.app.db)
  }
  return async () => {
    await sql`drop trigger refuse_answer${sql.raw(TEST_BACKEND === 'postgres' ? ' on idempotency_keys' : '')}`.execute(server.app.db)
  }
}

async function keyRow(appId: string, key: string) {
  return server.app.db.selectFrom('idempotency_keys').selectAll().where('app_id', '=', appId).where('key', '=', key).executeTakeFirst()
}

async function lapse(appId: string, key: string): Promise<void> {
  await server.app.db.updateTable('idempotency_keys').set({ lease_until: new Date(Date.now() - 1000).toISOString() }).where('app_id', '=', appId).where('key', '=', key).execute()
}

describe('a change that committed is never carried out twice, even when its answer is lost', () => {
  it('the claim is marked in the change\'s own transaction; once its lease lapses, a retry gets 409 and nothing runs', async () => {
    const caller = await server.createKey()
    const key = freshKey()
    const allow = await refuseStoredAnswers()
    try {
      const first = await postWithKey(server, caller, '/api/v0/customers', key, CUSTOMER)
      // The answer went out; only storing it failed.
      expect(first.status).toBe(201)
      const row = await keyRow(caller.appId, key)
      expect(row?.status_code).toBeNull()
      expect(row?.committed_at).not.toBeNull()
      // While its lease runs it is "in progress"; when it lapses (its process died), it is not run again.
      await lapse(caller.appId, key)
      const retried = await postWithKey(server, caller, '/api/v0/customers', key, CUSTOMER)
      expect(retried.status).toBe(409)
      expect(retried.body).toEqual(errorBody(409, 'Conflict', ANSWER_LOST))
      expect(await countRows(server, 'customers', caller.appId)).toBe(1)
      expect(await countRows(server, 'events', caller.appId)).toBe(1)
      // Another request with the key is still a mismatch.
      const other = await postWithKey(server, caller, '/api/v0/customers', key, { ...CUSTOMER, first_name: 'Grace' })
      expect(other.status).toBe(422)
    } finally {
      await allow()
    }
  })

  it('a claim whose transaction rolled back is not marked: once its lease lapses the key runs again', async () => {
    const caller = await server.createKey()
    const key = freshKey()
    const allow = await refuseStoredAnswers()
    try {
      // 404 in the handler: the transaction never committed a change.
      const missing = await postWithKey(server, caller, MISSING_CUSTOMERS_ADDRESSES, key, ADDRESS)
      expect(missing.status).toBe(404)
      expect((await keyRow(caller.appId, key))?.committed_at).toBeNull()
    } finally {
      await allow()
    }
    await lapse(caller.appId, key)
    const again = await postWithKey(server, caller, MISSING_CUSTOMERS_ADDRESSES, key, ADDRESS)
    expect(again.status).toBe(404)
    expect(again.headers.get('idempotent-replayed')).toBeNull()
  })

  it('without a key, nothing is marked and nothing changes in how routes commit', async () => {
    const caller = await server.createKey()
    const res = await server.request('POST', '/api/v0/customers', { key: caller, body: CUSTOMER })
    expect(res.status).toBe(201)
    expect(await countRows(server, 'idempotency_keys', caller.appId)).toBe(0)
  })
})
