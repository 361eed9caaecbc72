import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ResolvedAddress } from '../../src/delivery/address-guard.js'
import { type Receiver, startReceiver } from '../receiver.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { waitUntil } from '../processes.js'

/** A DNS of our own: production resolves webhook hosts, and tests have no real DNS. */
const zone = new Map<string, ResolvedAddress[]>()
let lookups = 0
async function fakeDns(hostname: string): Promise<ResolvedAddress[]> {
  lookups++
  const answer = zone.get(hostname)
  if (answer === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
  return answer
}
const v4 = (address: string): ResolvedAddress[] => [{ address, family: 4 }]
const v6 = (address: string): ResolvedAddress[] => [{ address, family: 6 }]

let receiver: Receiver
let production: TestServer
let key: TestKey
beforeAll(async () => {
  receiver = await startReceiver()
  production = await startTestServer({
    config: { nodeEnv: 'production' },
    webhooks: { dispatcher: true, timeoutMs: 1000, pollIntervalMs: 20 },
    delivery: { resolveHost: fakeDns, retrySchedule: [60_000] },
  })
  key = await production.createKey()
})
afterAll(async () => {
  await production.close()
  await receiver.close()
})

describe('production: webhook urls that reach internal networks are refused at creation and update', () => {
  const refused: [string, ResolvedAddress[], string][] = [
    ['loopback', v4('127.0.0.1'), '127.0.0.1 is a loopback address'],
    ['private 10/8', v4('10.1.2.3'), '10.1.2.3 is a private address'],
    ['private 172.16/12', v4('172.31.255.255'), '172.31.255.255 is a private address'],
    ['private 192.168/16', v4('192.168.0.1'), '192.168.0.1 is a private address'],
    ['link-local', v4('169.254.1.1'), '169.254.1.1 is a link-local address'],
    ['cloud metadata', v4('169.254.169.254'), '169.254.169.254 is a cloud metadata address'],
    ['IPv6 loopback', v6('::1'), '::1 is a loopback address'],
    ['IPv6 unique-local', v6('fd12:3456::1'), 'fd12:3456::1 is a unique-local address'],
    ['IPv6 link-local', v6('fe80::1'), 'fe80::1 is a link-local address'],
    ['IPv4-mapped private', v6('::ffff:10.0.0.1'), '::ffff:10.0.0.1 is a private address'],
    ['IPv4-mapped loopback (hex)', v6('::ffff:7f00:1'), '::ffff:7f00:1 is a loopback address'],
    ['one private among public answers', [...v4('93.184.215.14'), ...v4('10.0.0.7')], '10.0.0.7 is a private address'],
  ]
  it.each(refused)('%s: 400 naming the address, nothing stored', async (name, answer, reason) => {
    const host = `${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.example`
    zone.set(host, answer)
    const before = await production.app.db.selectFrom('webhooks').select('id').execute()
    const res = await production.request<{ message: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'w', url: `https://${host}/hook` } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: `url must not point to a private or internal network: ${reason}` })
    expect(await production.app.db.selectFrom('webhooks').select('id').execute()).toEqual(before)
  })

  it('IP literals are checked too, without a lookup', async () => {
    const before = lookups
    for (const url of ['https://127.0.0.1/h', 'https://[::1]/h', 'https://10.0.0.1/h', 'https://169.254.169.254/latest', 'https://[::ffff:192.168.1.1]/h']) {
      const res = await production.request('POST', '/api/v0/webhooks', { key, body: { name: 'w', url } })
      expect(res.status, url).toBe(400)
    }
    expect(lookups).toBe(before)
  })

  it('a public host is accepted; an unresolvable one is refused; updates are checked the same way', async () => {
    zone.set('public.example', v4('93.184.215.14'))
    zone.set('internal.example', v4('10.9.9.9'))
    const created = await production.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'ok', url: 'https://public.example/h' } })
    expect(created.status).toBe(201)
    const unresolvable = await production.request<{ message: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'w', url: 'https://nowhere.example/h' } })
    expect(unresolvable.status).toBe(400)
    expect(unresolvable.body.message).toBe('url host nowhere.example could not be resolved')
    const update = await production.request<{ message: string }>('PATCH', `/api/v0/webhooks/${created.body.id}`, { key, body: { url: 'https://internal.example/h' } })
    expect(update.status).toBe(400)
    expect(update.body.message).toBe('url must not point to a private or internal network: 10.9.9.9 is a private address')
    const stored = await production.request<{ url: string }>('GET', `/api/v0/webhooks/${created.body.id}`, { key })
    expect(stored.body.url).toBe('https://public.example/h')
  })
})

describe('production: every connection is checked again, against the address it connects to', () => {
  it('DNS rebinding: a host that was public at creation and resolves to loopback at delivery is never connected to', async () => {
    const port = new URL(receiver.url('/')).port
    zone.set('rebind.example', v4('93.184.215.14'))
    // Created inactive, so nothing is delivered before the DNS answer changes.
    const created = await production.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'rebind', url: `https://rebind.example:${port}/hook`, isActive: false } })
    expect(created.status).toBe(201)
    zone.set('rebind.example', v4('127.0.0.1'))
    const connectionsBefore = receiver.connections()
    expect((await production.request('PATCH', `/api/v0/webhooks/${created.body.id}`, { key, body: { isActive: true } })).status).toBe(200)
    await production.request('POST', '/api/v0/taxes', { key, body: { name: 'VAT', percentage: 20 } })
    const attempts = await waitUntil('two attempts', async () => {
      const rows = await production.app.db.selectFrom('delivery_attempts').select(['outcome', 'error', 'status_code']).where('webhook_id', '=', created.body.id).execute()
      return rows.length >= 2 ? rows : undefined
    })
    expect(attempts).toHaveLength(2) // webhook.updated and tax.created
    for (const attempt of attempts) expect(attempt).toEqual({ outcome: 'failed', error: 'refused: 127.0.0.1 is a loopback address', status_code: null })
    expect(receiver.connections()).toBe(connectionsBefore)
  })
})

describe('outside production', () => {
  it('loopback receivers are allowed; other internal addresses are still refused at connection', async () => {
    const zoneDev = new Map<string, ResolvedAddress[]>([['private.example', v4('192.168.1.20')]])
    const dev = await startTestServer({
      webhooks: { dispatcher: true, timeoutMs: 1000, pollIntervalMs: 20 },
      delivery: {
        retrySchedule: [60_000],
        resolveHost: async (host) => zoneDev.get(host) ?? [],
      },
    })
    try {
      const devKey = await dev.createKey()
      const local = await dev.request<{ id: string }>('POST', '/api/v0/webhooks', { key: devKey, body: { name: 'local', url: receiver.url('/dev-local') } })
      expect(local.status).toBe(201)
      const internal = await dev.request<{ id: string }>('POST', '/api/v0/webhooks', { key: devKey, body: { name: 'internal', url: 'https://private.example/h' } })
      expect(internal.status).toBe(201) // no DNS check at creation outside production
      await receiver.waitFor(1, { path: '/dev-local' })
      const attempt = await waitUntil('an attempt', () =>
        dev.app.db.selectFrom('delivery_attempts').select('error').where('webhook_id', '=', internal.body.id).executeTakeFirst(),
      )
      expect(attempt.error).toBe('refused: 192.168.1.20 is a private address')
    } finally {
      await dev.close()
    }
  })
})
