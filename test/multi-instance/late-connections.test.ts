import { WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { ResolvedAddress } from '../../src/delivery/address-guard.js'
import { startTestServer, type TestServer } from '../helper.js'
import { waitUntil } from '../processes.js'
import { type Receiver, startReceiver } from '../receiver.js'

// PostgreSQL only (this folder runs on the PostgreSQL + Redis half): there a claim's commit waits
// for its connecting requests to be written, but not for a host still being looked up; a request
// whose host resolves after the claim committed connects under a guard of its own.
let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver.close()
})

/** A resolver whose answers for `late.test` wait until released; asked: how many lookups it has received. */
function heldResolver(): { resolve: (hostname: string) => Promise<ResolvedAddress[]>; asked: () => number; release: () => void } {
  let release: () => void = () => undefined
  const released = new Promise<void>((settle) => {
    release = settle
  })
  let asked = 0
  return {
    resolve: async (hostname) => {
      if (hostname !== 'late.test') throw Object.assign(new Error(`unknown host ${hostname}`), { code: 'ENOTFOUND' })
      asked++
      await released
      return [{ address: '127.0.0.1', family: 4 }]
    },
    asked: () => asked,
    release: () => release(),
  }
}

/** A server delivering to one webhook on `late.test` (the receiver's port); its one event emitted. */
async function lateWebhook(resolver: ReturnType<typeof heldResolver>, path: string): Promise<{ server: TestServer; webhookId: string; deliveryId: string }> {
  const server = await startTestServer({
    // A long poll: the periodic check for deletions elsewhere runs once, at the start, and never again.
    webhooks: { dispatcher: true, timeoutMs: 10_000, pollIntervalMs: 60_000 },
    delivery: { resolveHost: resolver.resolve },
  })
  const appId = (await server.app.repos.apps.createApp('late')).id
  const port = new URL(receiver.url('/')).port
  const webhook = await new WebhooksRepository(server.app.db).create(appId, {
    name: 'late',
    url: `http://late.test:${port}${path}`,
    isActive: true,
    encrypted: false,
    signingSecret: `whsec_${Buffer.alloc(32, 2).toString('base64')}`,
  })
  await server.app.transact((tx) => tx.events.emit(appId, 'tax.updated', { n: 1 }))
  const [delivery] = await server.database.query<{ id: string }>('select id from deliveries where webhook_id = ?', webhook.id)
  return { server, webhookId: webhook.id, deliveryId: delivery?.id ?? '' }
}

const claimCommitted = (server: TestServer, deliveryId: string) => async () =>
  (await server.database.count('select count(*) from deliveries where id = ? and claim_token is not null', deliveryId)) === 1 ? true : undefined

it('a claim commits without waiting for a host still being looked up; resolved later, the request goes out under its own guard', async () => {
  const resolver = heldResolver()
  const { server, deliveryId } = await lateWebhook(resolver, '/late-live')
  try {
    await waitUntil('the lookup', () => (resolver.asked() === 1 ? true : undefined))
    await waitUntil('the claim committed', claimCommitted(server, deliveryId))
    expect(resolver.asked()).toBe(1)
    // The lookup was not counted as a request left unwritten: the claim did not wait for it.
    expect(server.logs()).not.toContain('claim committed before all its requests were written')
    resolver.release()
    await receiver.waitFor(1, { path: '/late-live' })
    await waitUntil('the success recorded', async () =>
      (await server.database.count("select count(*) from deliveries where id = ? and status = 'succeeded'", deliveryId)) === 1 ? true : undefined,
    )
  } finally {
    resolver.release()
    await server.close()
  }
})

it('a host that resolves after its claim committed is not connected to when its webhook was deleted meanwhile, even unannounced', async () => {
  const resolver = heldResolver()
  const { server, webhookId, deliveryId } = await lateWebhook(resolver, '/late-deleted')
  try {
    await waitUntil('the lookup', () => (resolver.asked() === 1 ? true : undefined))
    await waitUntil('the claim committed', claimCommitted(server, deliveryId))
    // Deleted behind the dispatcher's back: no NOTIFY, and the periodic check is a minute away.
    await server.database.query('update webhooks set deleted_at = ?, is_active = 0 where id = ?', new Date().toISOString(), webhookId)
    const connections = receiver.connections()
    resolver.release()
    const [attempt] = await waitUntil('the attempt recorded', async () => {
      const rows = await server.database.query<{ outcome: string; error: string }>('select outcome, error from delivery_attempts where delivery_id = ?', deliveryId)
      return rows.length > 0 ? rows : undefined
    })
    expect(attempt).toEqual({ outcome: 'canceled', error: 'aborted: webhook deleted or deactivated' })
    expect(receiver.arrivals.filter((arrival) => arrival.path === '/late-deleted')).toHaveLength(0)
    expect(receiver.connections()).toBe(connections)
  } finally {
    resolver.release()
    await server.close()
  }
})
