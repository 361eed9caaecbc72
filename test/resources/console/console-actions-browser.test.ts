// vitest: sqlite project only — the pages are backend-independent and the owner tools and key functions they call have API and CLI tests on both backends; the replay's and the chart's two reads are tested only here (they pass on PostgreSQL too when this file is run there).
// Cost: one Chromium launch and a real dispatcher and receiver, about 10–20 s.
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Delivery } from '../../../src/resources/webhooks/delivery-schemas.js'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { type Browser, launchChromium, pageChecks } from '../../helpers/chromium.js'
import { type ConsoleRole, consoleLink, consoleSession, postForm } from '../../helpers/console.js'
import { waitUntil } from '../../processes.js'
import { type Receiver, startReceiver } from '../../receiver.js'

/**
 * The console's webhooks and API-keys pages in Debian's Chromium, signed in through an admin
 * link: resend, a test event and a replay reach a receiver on 127.0.0.1; a key rotated with a
 * grace keeps its old secret working; a viewer's action, a forged form and another
 * application's ids are refused and change nothing; axe-core and the 360 px layout. The
 * webhook page's screenshot in docs/images/ is refreshed by this test with CONSOLE_SCREENSHOTS=1.
 */

const SCREENSHOT = fileURLToPath(new URL('../../../docs/images/console-webhooks.png', import.meta.url))

let receiver: Receiver
let server: TestServer
let key: TestKey
let other: TestKey
/** a second key of the application, the one the keys page changes */
let spare: TestKey
let browser: Browser
let page: Page
let webhookId: string
let otherWebhookId: string
let answer = 500

const link = (role: ConsoleRole): Promise<string> => consoleLink(server, key, role)
const session = (role: ConsoleRole) => consoleSession(server, key, role)
const post = (path: string, cookie: string, form: Record<string, string>) => postForm(server, path, cookie, form)

async function deliveries(): Promise<Delivery[]> {
  return (await server.request<Delivery[]>('GET', `/api/v0/webhooks/${webhookId}/deliveries?take=50`, { key })).body
}

function settled(deliveryId: string, status: string, attempts: number): Promise<Delivery> {
  return waitUntil(`delivery ${deliveryId} ${status} after ${attempts} attempts`, async () => {
    const delivery = (await deliveries()).find((one) => one.id === deliveryId)
    return delivery?.status === status && delivery.attempt_log.length === attempts ? delivery : undefined
  })
}

const arrivals = () => receiver.arrivals.filter((arrival) => arrival.path === '/hooks').length


beforeAll(async () => {
  receiver = await startReceiver((arrival) => (arrival.path === '/hooks' ? { status: answer, body: `answer ${answer}` } : { status: 200 }))
  // One automatic retry after 50 ms, then failed.
  server = await startTestServer({ webhooks: { dispatcher: true, timeoutMs: 1000, pollIntervalMs: 20 }, delivery: { retrySchedule: [50] } })
  key = await server.createKey({ environment: 'development' })
  other = await server.createKey({ environment: 'development' })
  spare = await server.createKey({ appId: key.appId, environment: 'development' })
  const created = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'Orders', url: receiver.url('/hooks') } })
  expect(created.status, created.text).toBe(201)
  webhookId = created.body.id
  otherWebhookId = (await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key: other, body: { name: 'Theirs', url: receiver.url('/theirs') } })).body.id
  browser = await launchChromium()
  page = browser.page
  await page.goto(await link('admin'))
  await page.waitForURL(/\/console\/sandbox$/)
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await receiver?.close()
})

describe('the webhooks page', () => {
  it('lists the webhook; its page has the delivery log with attempts and answers, and the success-rate chart', async () => {
    const [first] = await deliveries()
    if (first === undefined) throw new Error('no delivery')
    await settled(first.id, 'failed', 2)
    await page.goto(`${server.baseUrl}/console/sandbox/webhooks`)
    await page.getByRole('link', { name: 'Orders' }).click()
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Orders')
    const row = page.locator(`#d-${first.id}`)
    expect(await row.innerText()).toContain('webhook.created')
    await row.locator('summary').click()
    expect(await row.locator('.timeline li').count()).toBe(2)
    expect(await row.locator('.timeline').innerText()).toContain('HTTP 500')
    expect(await row.locator('pre').first().innerText()).toBe('answer 500')
    expect(await page.locator('svg.chart rect').count()).toBeGreaterThan(0)
    expect(await page.locator('svg.chart').getAttribute('aria-label')).toContain('0.0% succeeded')
    expect(await page.locator('script').count()).toBe(0)
  })

  it('resend: one more attempt reaches the receiver and the log shows it succeeded', async () => {
    const [first] = await deliveries()
    if (first === undefined) throw new Error('no delivery')
    answer = 200
    const before = arrivals()
    await page.locator(`#d-${first.id}`).getByRole('button', { name: 'Resend' }).click()
    expect(await page.getByRole('status').innerText()).toContain('is being attempted once more')
    await receiver.waitFor(before + 1, { path: '/hooks' })
    const resent = await settled(first.id, 'succeeded', 3)
    expect(resent.attempt_log[2]).toMatchObject({ outcome: 'succeeded', status_code: 200 })
  })

  it('a test event, then "replay everything failed since": both reach the receiver', async () => {
    answer = 503
    const before = arrivals()
    await page.getByRole('button', { name: 'Send a test event' }).click()
    expect(await page.getByRole('status').innerText()).toContain('webhook.test')
    const test = await waitUntil('the test delivery', async () => (await deliveries()).find((one) => one.event.type === 'webhook.test'))
    await settled(test.id, 'failed', 2)
    expect(arrivals()).toBe(before + 2)
    answer = 200
    // The action's answer was a redirect: reloading the page it landed on sends nothing again.
    await page.reload()
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(arrivals()).toBe(before + 2)
    await page.getByRole('button', { name: 'Replay failed' }).click()
    expect(await page.getByRole('status').innerText()).toContain('1 failed delivery is being attempted once more')
    await receiver.waitFor(before + 3, { path: '/hooks' })
    const replayed = await settled(test.id, 'succeeded', 3)
    expect(receiver.arrivals.filter((arrival) => arrival.path === '/hooks').at(-1)?.headers['webhook-id']).toBe(replayed.event.id)
  })

  it('a viewer may look but not act (403 page); a forged form without the token is refused; another application’s webhook is 404; nothing is sent', async () => {
    const before = arrivals()
    const viewer = await session('viewer')
    expect((await fetch(`${server.baseUrl}/console/sandbox/webhooks/${webhookId}`, { headers: { cookie: viewer.cookie } })).status).toBe(200)
    const refused = await post(`/console/sandbox/webhooks/${webhookId}/test`, viewer.cookie, { _csrf: viewer.csrf })
    expect(refused.status).toBe(403)
    expect(refused.text).toContain('Admins only')
    const admin = await session('admin')
    const forged = await post(`/console/sandbox/webhooks/${webhookId}/replay`, admin.cookie, { since: '2020-01-01T00:00' })
    expect(forged.status).toBe(403)
    expect(forged.text).toContain('did not carry your session’s token')
    await page.goto(`${server.baseUrl}/console/sandbox/webhooks/${otherWebhookId}`).then((response) => expect(response?.status()).toBe(404))
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Not found')
    const theirs = await post(`/console/sandbox/webhooks/${otherWebhookId}/test`, admin.cookie, { _csrf: admin.csrf })
    expect(theirs.status).toBe(404)
    const [theirDelivery] = (await server.request<Delivery[]>('GET', `/api/v0/webhooks/${otherWebhookId}/deliveries`, { key: other })).body
    expect((await post(`/console/sandbox/webhooks/${webhookId}/deliveries/${theirDelivery?.id ?? ''}/resend`, admin.cookie, { _csrf: admin.csrf })).status).toBe(404)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(arrivals()).toBe(before)
    expect((await server.request<Delivery[]>('GET', `/api/v0/webhooks/${otherWebhookId}/deliveries`, { key: other })).body).toHaveLength(1)
  })

  it('axe-core: no serious or critical violation at 360 and 1280 px; no horizontal overflow at 360 px', async () => {
    await page.goto(`${server.baseUrl}/console/sandbox/webhooks/${webhookId}`)
    const narrow = await pageChecks(page, 360)
    expect(narrow.violations).toEqual([])
    expect(narrow.overflow).toBeLessThanOrEqual(0)
    const wide = await pageChecks(page, 1280)
    expect(wide.violations).toEqual([])
    if (process.env.CONSOLE_SCREENSHOTS === '1') await page.screenshot({ path: SCREENSHOT, fullPage: true })
  })
})

/** A real API call with a key's client key and a given secret. */
async function callWith(clientKey: string, secret: string, method = 'GET', path = '/api/v0/webhooks'): Promise<number> {
  const response = await fetch(`${server.baseUrl}${path}`, { method, headers: { 'x-client-key': clientKey, 'x-client-secret': secret, 'content-type': 'application/json' }, ...(method === 'POST' ? { body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }) } : {}) })
  await response.arrayBuffer()
  return response.status
}

describe('the API keys page', () => {
  it('a viewer sees the keys, never a secret, and no form; a viewer’s rotation is a 403 page and changes nothing', async () => {
    const viewer = await session('viewer')
    const listed = await (await fetch(`${server.baseUrl}/console/sandbox/keys`, { headers: { cookie: viewer.cookie } })).text()
    for (const one of [key, spare]) {
      expect(listed).toContain(one.clientKey)
      expect(listed).not.toContain(one.clientSecret)
    }
    expect(listed).not.toContain(other.clientKey)
    expect(listed).not.toContain('Rotate secret')
    const refused = await post(`/console/sandbox/keys/${spare.id}/rotate`, viewer.cookie, { _csrf: viewer.csrf, grace: '3600' })
    expect(refused.status).toBe(403)
    expect(refused.text).toContain('Admins only')
    const row = await server.app.db.selectFrom('api_keys').select(['previous_secret_expires_at']).where('id', '=', spare.id).executeTakeFirstOrThrow()
    expect(row.previous_secret_expires_at).toBeNull()
    expect(await callWith(spare.clientKey, spare.clientSecret)).toBe(200)
  })

  it('rotate with a grace: the new secret is shown once, and the old one still works within the grace (real HTTP calls)', async () => {
    await page.goto(`${server.baseUrl}/console/sandbox/keys`)
    const row = page.locator(`#k-${spare.id}`)
    await row.locator('summary').click()
    await row.getByLabel('Old secret keeps working for').selectOption(String(3600))
    await row.getByRole('button', { name: 'Rotate secret' }).click()
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('New secret')
    const secret = await page.locator('#new-secret').innerText()
    expect(secret).toMatch(/^sk_test_/)
    expect(secret).not.toBe(spare.clientSecret)
    expect(await page.getByRole('status').innerText()).toContain('The old secret keeps working until')
    expect(await callWith(spare.clientKey, secret)).toBe(200)
    expect(await callWith(spare.clientKey, spare.clientSecret)).toBe(200)
    const stored = await server.app.db.selectFrom('api_keys').select(['previous_secret_expires_at']).where('id', '=', spare.id).executeTakeFirstOrThrow()
    const grace = Date.parse(stored.previous_secret_expires_at ?? '') - Date.now()
    expect(grace).toBeGreaterThan(3500_000)
    expect(grace).toBeLessThanOrEqual(3600_000)
    // The list never shows it again.
    await page.goto(`${server.baseUrl}/console/sandbox/keys`)
    expect(await page.content()).not.toContain(secret)
    spare = { ...spare, clientSecret: secret }
  })

  it('re-scope, then expire: the key does only what its scopes say, then nothing', async () => {
    const row = page.locator(`#k-${spare.id}`)
    await row.locator('summary').click()
    for (const box of await row.locator('input[type="checkbox"]').all()) await box.uncheck()
    await row.getByLabel('webhook:read').check()
    await row.getByRole('button', { name: 'Save scopes' }).click()
    expect(await page.getByRole('status').innerText()).toContain('were replaced')
    expect(await page.locator(`#k-${spare.id}`).innerText()).toContain('webhook:read')
    expect(await callWith(spare.clientKey, spare.clientSecret)).toBe(200)
    expect(await callWith(spare.clientKey, spare.clientSecret, 'POST', '/api/v0/customers')).toBe(403)
    // No scope at all is refused, and changes nothing.
    const admin = await session('admin')
    const none = await post(`/console/sandbox/keys/${spare.id}/scopes`, admin.cookie, { _csrf: admin.csrf })
    expect(none.status).toBe(400)
    expect(none.text).toContain('at least one scope')
    await page.locator(`#k-${spare.id} summary`).click()
    await page.locator(`#k-${spare.id}`).getByLabel('Stops working').selectOption('0')
    await page.locator(`#k-${spare.id}`).getByRole('button', { name: 'Set expiry' }).click()
    expect(await page.getByRole('status').innerText()).toContain('expiry')
    expect(await page.locator(`#k-${spare.id}`).innerText()).toContain('expired')
    expect(await callWith(spare.clientKey, spare.clientSecret)).toBe(403)
  })

  it('another application’s key is 404 and a forged form is refused: neither changes anything', async () => {
    const admin = await session('admin')
    const theirs = await post(`/console/sandbox/keys/${other.id}/rotate`, admin.cookie, { _csrf: admin.csrf, grace: '0' })
    expect(theirs.status).toBe(404)
    expect(await callWith(other.clientKey, other.clientSecret)).toBe(200)
    const forged = await post(`/console/sandbox/keys/${key.id}/rotate`, admin.cookie, { grace: '0' })
    expect(forged.status).toBe(403)
    expect(await callWith(key.clientKey, key.clientSecret)).toBe(200)
  })

  it('axe-core: no serious or critical violation at 360 and 1280 px, a key’s forms open; no horizontal overflow at 360 px', async () => {
    await page.goto(`${server.baseUrl}/console/sandbox/keys`)
    await page.locator(`#k-${key.id} summary`).click()
    const narrow = await pageChecks(page, 360)
    expect(narrow.violations).toEqual([])
    expect(narrow.overflow).toBeLessThanOrEqual(0)
    const wide = await pageChecks(page, 1280)
    expect(wide.violations).toEqual([])
  })
})
