import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { insertDeposit } from './fixtures.js'

let server: TestServer
let live: TestKey
let sandbox: TestKey

beforeAll(async () => {
  server = await startTestServer()
  live = await server.createKey({ environment: 'production' })
  sandbox = await server.createKey({ appId: live.appId, environment: 'development' })
})
afterAll(async () => server?.close())

describe('GET /api/v0/deposits', () => {
  it("lists the application's live deposits newest first, filtered by status and chain, paged", async () => {
    const other = await server.createKey({ environment: 'production' })
    const first = await insertDeposit(server, live.appId, { status: 'confirmed', confirmations: 3, credited_type: 'drain', credited_id: 'd-1' })
    const second = await insertDeposit(server, live.appId, { status: 'pending', chain: 'ethereum' })
    await insertDeposit(server, other.appId)
    const all = await server.request<{ data: { id: string }[]; total: number }>('GET', '/api/v0/deposits', { key: live })
    expect(all.status).toBe(200)
    expect(all.body.total).toBe(2)
    expect(all.body.data.map((deposit) => deposit.id)).toEqual([second.id, first.id])
    const confirmed = await server.request<{ data: Record<string, unknown>[] }>('GET', '/api/v0/deposits?status=confirmed', { key: live })
    expect(confirmed.body.data).toEqual([
      expect.objectContaining({ id: first.id, status: 'confirmed', confirmations: 1, confirmations_required: 1, credited_to: { type: 'drain', id: 'd-1' }, destination: { type: 'wallet', id: first.owner_id } }),
    ])
    const onEthereum = await server.request<{ data: { id: string }[] }>('GET', '/api/v0/deposits?chain=ethereum&take=1&skip=0', { key: live })
    expect(onEthereum.body.data.map((deposit) => deposit.id)).toEqual([second.id])
  })

  it('shows a development key no live deposit, and answers another environment\'s id as missing', async () => {
    const deposit = await insertDeposit(server, live.appId)
    expect((await server.request<{ total: number }>('GET', '/api/v0/deposits', { key: sandbox })).body.total).toBe(0)
    const missing = await server.request<{ message: string }>('GET', `/api/v0/deposits/${deposit.id}`, { key: sandbox })
    expect(missing.status).toBe(404)
    expect(missing.body.message).toBe('Deposit not found')
    expect((await server.request('GET', `/api/v0/deposits/${deposit.id}`, { key: live })).status).toBe(200)
  })

  it('refuses a status outside the list and an id that is not a UUID, with 400', async () => {
    expect((await server.request('GET', '/api/v0/deposits?status=credited', { key: live })).status).toBe(400)
    expect((await server.request('GET', '/api/v0/deposits?take=101', { key: live })).status).toBe(400)
    expect((await server.request('GET', '/api/v0/deposits?take=100', { key: live })).status).toBe(200)
    const bad = await server.request<{ message: string }>('GET', '/api/v0/deposits/not-a-uuid', { key: live })
    expect(bad.status).toBe(400)
    expect(bad.body.message).toBe('Invalid deposit ID format')
  })
})
