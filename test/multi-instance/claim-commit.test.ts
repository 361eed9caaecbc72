import { WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startTestServer } from '../helper.js'
import { type Receiver, startReceiver } from '../receiver.js'

// PostgreSQL only (this folder runs on the PostgreSQL + Redis half): there a claim's commit waits
// for its requests to be written, and that wait must not hold up the next claim.
let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver.close()
})

it("a claim still waiting to commit does not hold up the next one: B's delivery goes out meanwhile", async () => {
  let release: () => void = () => undefined
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  let claims = 0
  const server = await startTestServer({
    webhooks: { dispatcher: true, timeoutMs: 5_000, pollIntervalMs: 20 },
    // The first claim with attempts stays uncommitted until released; later claims commit at once.
    delivery: { beforeClaimCommit: async (started) => (started > 0 && ++claims === 1 ? held : undefined) },
  })
  try {
    const appIds: string[] = []
    for (const name of ['A', 'B']) {
      const appId = (await server.app.repos.apps.createApp(name)).id
      await new WebhooksRepository(server.app.db).create(appId, { name, url: receiver.url(`/${name}`), isActive: true, encrypted: false, signingSecret: `whsec_${Buffer.alloc(32, 1).toString('base64')}` })
      appIds.push(appId)
    }
    const [a = '', b = ''] = appIds
    await server.app.transact((tx) => tx.events.emit(a, 'tax.updated', { n: 1 }))
    await receiver.waitFor(1, { path: '/A' })
    await server.app.transact((tx) => tx.events.emit(b, 'tax.updated', { n: 2 }))
    await receiver.waitFor(1, { path: '/B', timeoutMs: 5_000 })
    expect(claims).toBeGreaterThanOrEqual(2)
    const aClaimed = await server.database.count("select count(*) from deliveries where app_id = ? and claim_token is not null", a)
    expect(aClaimed).toBe(0) // A's claim has not committed yet
  } finally {
    release()
    await server.close()
  }
})
