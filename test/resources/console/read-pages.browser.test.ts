import { copyFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ExchangeRates } from '../../../src/ledger/rates.js'
import { receiveFunds } from '../../../src/resources/transfers/public.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { testChainsConfig } from '../../helpers/chains.js'
import { type Browser, launchChromium, pageChecks } from '../../helpers/chromium.js'

/**
 * The console's read-only pages in Debian's Chromium (one launch; about 30 s on each backend, a
 * third of it axe-core). Both backends: the console's list reads (each resource's `recent…` in its
 * public.ts) serve no API route, so they run here. Signed in through a link, each page shows the
 * data of its environment and not the other's; another application's ids answer 404; no serious
 * or critical axe-core violation at 360 and 1280 px, no horizontal overflow at 360 px. Screenshots
 * of each page go to SCREENSHOTS; with CONSOLE_SCREENSHOTS=1, three replace docs/images/console-*.png.
 */

const SCREENSHOTS = join(tmpdir(), 'devplatform-console-pages')
const DOC_IMAGES = fileURLToPath(new URL('../../../docs/images', import.meta.url))

type Environment = 'sandbox' | 'live'

/** What was made in one environment, by what the pages show. */
interface World {
  key: TestKey
  intent: string
  invoice: string
  invoiceName: string
  link: string
  linkTitle: string
  drain?: string
  testPayment?: string
  refundedPayment?: string
}

let server: TestServer
let browser: Browser
let page: Page
const worlds = {} as Record<Environment, World>
let otherIntent: string
let otherEvent: string
const idempotency = () => ({ 'idempotency-key': crypto.randomUUID() })

async function created<T extends { id: string }>(key: TestKey, path: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<T> {
  const res = await server.request<T>('POST', path, { key, body, headers })
  expect(res.status, `${path}: ${res.text}`).toBe(201)
  return res.body
}

async function makeWorld(key: TestKey, environment: Environment, customer: string, product: string): Promise<World> {
  const intent = (await created(key, '/api/v0/payment-intents/stablecoin', { sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base', amount: environment === 'sandbox' ? '3' : '7' }, idempotency())).id
  // Its funds arrive, so it has ledger entries and more than one event.
  const context = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 20, achDelayMs: 20 }, now: Date.now }
  await server.app.transact((tx) => receiveFunds(tx, context, 'payment_intent', environment, key.appId, intent, undefined))
  const invoiceName = `${environment} March services`
  const invoice = (
    await created(key, '/api/v0/invoices', {
      name: invoiceName,
      email: 'billing@example.com',
      customer_id: customer,
      currency: 'usdc',
      items: [{ product_id: product, quantity: 1 }],
      due_date: '2099-01-31T00:00:00.000Z',
      delivery: 'EMAIL',
      payment_link: false,
      payment_methods: ['CRYPTO'],
      status: 'OPEN',
      partial_payment: false,
    })
  ).id
  const linkTitle = `${environment} donations`
  const link = (await created(key, '/api/v0/payment-links', { title: linkTitle, url: `${environment}-${crypto.randomUUID().slice(0, 8)}`, linkType: 'DONATION', allowQuantityAdjustment: false, collectTax: false, collectAddress: false, allowMobilePayment: false, currency: 'usdc', amount: '5' })).id
  return { key, intent, invoice, invoiceName, link, linkTitle }
}

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  server = await startTestServer({ config: { chains: testChainsConfig(), drains: { scheduler: true, fastDelayMs: 20, achDelayMs: 20, pollIntervalMs: 20, concurrency: 2 } } })
  const sandboxKey = await server.createKey({ environment: 'development' })
  const liveKey = await server.createKey({ appId: sandboxKey.appId, environment: 'production' })
  const customer = (await created(sandboxKey, '/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100', email: 'ada@example.com' })).id
  const product = (await created(sandboxKey, '/api/v0/products', { name: 'Widget', price: '10.00' })).id
  worlds.sandbox = await makeWorld(sandboxKey, 'sandbox', customer, product)
  worlds.live = await makeWorld(liveKey, 'live', customer, product)
  worlds.sandbox.testPayment = (await created(sandboxKey, '/api/v0/test-payment', { amount: 10, currency: 'USD', description: 'Order 1' }, idempotency())).id
  const refunded = (await created(sandboxKey, '/api/v0/test-payment', { amount: 4, currency: 'USD', description: 'Order 2' }, idempotency())).id
  expect((await server.request('POST', `/api/v0/test-payment/${refunded}/refund`, { key: sandboxKey, headers: idempotency() })).status).toBe(200)
  worlds.sandbox.refundedPayment = refunded
  const address = (await created(sandboxKey, `/api/v0/customers/${customer}/liquidation_addresses`, { chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), destination_payment_rail: 'bridge_wallet', bridge_wallet_id: await baseWallet(sandboxKey), destination_currency: 'usdc' })).id
  worlds.sandbox.drain = (await created(sandboxKey, `/api/v0/customers/${customer}/liquidation_addresses/${address}/simulate_deposit`, { amount: '2' })).id
  // Another application, whose ids the console must not show.
  const other = await server.createKey({ environment: 'development' })
  otherIntent = (await created(other, '/api/v0/payment-intents/stablecoin', { sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base', amount: '1' }, idempotency())).id
  otherEvent = (await server.request<{ data: { id: string }[] }>('GET', '/api/v0/events', { key: other })).body.data[0]?.id ?? ''

  browser = await launchChromium()
  page = browser.page
  const link = await server.request<{ url: string }>('POST', '/api/v0/console/links', { key: sandboxKey, body: { role: 'viewer' } })
  expect(link.status, link.text).toBe(201)
  await page.goto(`${server.baseUrl}${new URL(link.body.url).pathname}`)
  await page.waitForURL(`${server.baseUrl}/console/sandbox`)
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

async function baseWallet(key: TestKey): Promise<string> {
  const wallets = await server.request<{ data: { id: string; chain: string }[] }>('GET', '/api/v0/wallets', { key })
  return wallets.body.data.find((wallet) => wallet.chain === 'base')?.id ?? ''
}

/** Opens a console page; its status and main's text. */
async function open(path: string): Promise<{ status: number; text: string }> {
  const response = await page.goto(`${server.baseUrl}/console${path}`)
  return { status: response?.status() ?? 0, text: await page.locator('main').innerText() }
}

function screenshotPath(name: string): string {
  return join(SCREENSHOTS, `${name}.png`)
}

/** axe-core's serious or critical violations and the page's overflow, at one width. */
async function measure(width: number, name: string): Promise<{ overflow: number; violations: string[] }> {
  await page.setViewportSize({ width, height: 900 })
  await page.screenshot({ path: screenshotPath(`${name}-${width}`), fullPage: true })
  return pageChecks(page, width)
}

const other = (environment: Environment): Environment => (environment === 'sandbox' ? 'live' : 'sandbox')

describe('the console read-only pages in Chromium', () => {
  for (const environment of ['sandbox', 'live'] as const) {
    it(`${environment}: payments, invoices, payment links and events show ${environment}'s objects and not the other's`, async () => {
      const mine = worlds[environment]
      const theirs = worlds[other(environment)]
      const payments = await open(`/${environment}/payments`)
      expect(payments.status).toBe(200)
      expect(payments.text).toContain(mine.intent)
      expect(payments.text).not.toContain(theirs.intent)
      if (environment === 'sandbox') {
        expect(payments.text).toContain(mine.drain ?? 'a drain')
        expect(payments.text).toContain(mine.testPayment ?? 'a test payment')
      } else {
        expect(payments.text).not.toContain(worlds.sandbox.testPayment ?? 'a test payment')
        expect(payments.text).not.toContain(worlds.sandbox.drain ?? 'a drain')
      }
      const invoices = await open(`/${environment}/invoices`)
      expect(invoices.text).toContain(mine.invoiceName)
      expect(invoices.text).not.toContain(theirs.invoiceName)
      expect(await page.locator(`a[href$="/invoices/${mine.invoice}/pay"]`).count()).toBe(1)
      const links = await open(`/${environment}/payment-links`)
      expect(links.text).toContain(mine.linkTitle)
      expect(links.text).not.toContain(theirs.linkTitle)
      const events = await open(`/${environment}/events`)
      expect(events.text).toContain(mine.intent)
      expect(events.text).not.toContain(theirs.intent)
    })

    it(`${environment}: a payment intent's page shows its timeline and balanced ledger entries; the other environment's answers 404`, async () => {
      const mine = worlds[environment]
      const detail = await open(`/${environment}/payments/payment-intent/${mine.intent}`)
      expect(detail.status).toBe(200)
      expect(detail.text).toContain('payment_intent.created')
      expect(await page.locator('.timeline li').count()).toBeGreaterThanOrEqual(2)
      expect(await page.locator('caption .badge.good', { hasText: 'balanced' }).count()).toBeGreaterThanOrEqual(1)
      expect(await page.locator('caption .badge.bad').count()).toBe(0)
      // From its timeline to an event's page, with its JSON.
      await page.locator('.timeline a').first().click()
      expect(await page.locator('pre').innerText()).toContain(`"id": "${mine.intent}"`)
      expect((await open(`/${other(environment)}/payments/payment-intent/${mine.intent}`)).status).toBe(404)
    })
  }

  it('the filters: by kind, by state, by dates; a bad date is a 400 page', async () => {
    const byKind = await open('/sandbox/payments?kind=test-payment')
    expect(byKind.text).toContain(worlds.sandbox.testPayment ?? 'a test payment')
    expect(byKind.text).not.toContain(worlds.sandbox.intent)
    const byState = await open('/sandbox/payments?state=refunded')
    expect(byState.text).not.toContain(worlds.sandbox.testPayment ?? 'a test payment')
    expect(byState.text).toContain(worlds.sandbox.refundedPayment ?? 'a refunded test payment')
    // A refunded test payment: its refund in its timeline, and the refund's entry beside the payment's.
    const refunded = await open(`/sandbox/payments/test-payment/${worlds.sandbox.refundedPayment ?? ''}`)
    expect(refunded.text).toContain('test_payment.refunded')
    expect(await page.locator('caption .badge.good', { hasText: 'balanced' }).count()).toBe(2)
    const today = new Date().toISOString().slice(0, 10)
    expect((await open(`/sandbox/payments?from=${today}&to=${today}`)).text).toContain(worlds.sandbox.intent)
    expect((await open('/sandbox/payments?to=2000-01-01')).text).not.toContain(worlds.sandbox.intent)
    expect((await open('/sandbox/payments?from=yesterday')).status).toBe(400)
    // The form itself, as a person uses it (no script: a GET).
    await open('/sandbox/payments')
    await page.selectOption('#kind', 'drain')
    await page.locator('form.filters button').click()
    await page.waitForURL(/kind=drain/)
    expect(await page.locator('main').innerText()).toContain(worlds.sandbox.drain ?? 'a drain')
    const drain = await open(`/sandbox/payments/drain/${worlds.sandbox.drain ?? ''}`)
    expect(drain.status).toBe(200)
  })

  it("the overview: live's balances per wallet and the fee account, not the sandbox's", async () => {
    const live = await open('/live')
    expect(live.text).toContain('Developer fee account')
    // The live intent brought 7 USDC; the sandbox's 3 USDC, a 2 USDC drain and test payments are not here.
    expect(await page.locator('.cards .amount').allInnerTexts()).toEqual(['7.00 USDC'])
    expect(await page.getByRole('region', { name: 'Balances per wallet' }).innerText()).toContain('7.00 USDC')
    await open('/sandbox')
    expect(await page.locator('.cards .amount').allInnerTexts()).not.toContain('7.00 USDC')
  })

  it("customers: the application's, in both environments", async () => {
    for (const environment of ['sandbox', 'live'] as const) expect((await open(`/${environment}/customers`)).text).toContain('Ada Lovelace')
  })

  it("another application's payment and event answer 404", async () => {
    expect((await open(`/sandbox/payments/payment-intent/${otherIntent}`)).status).toBe(404)
    expect((await open(`/sandbox/events/${otherEvent}`)).status).toBe(404)
    expect((await open(`/sandbox/payments/nonsense/${otherIntent}`)).status).toBe(404)
  })

  it('no serious or critical axe-core violation at 360 and 1280 px, no horizontal overflow at 360 px', async () => {
    const pages: [string, string][] = [
      ['overview', '/live'],
      ['payments', '/sandbox/payments'],
      ['payment', `/sandbox/payments/payment-intent/${worlds.sandbox.intent}`],
      ['invoices', '/live/invoices'],
      ['payment-links', '/sandbox/payment-links'],
      ['customers', '/sandbox/customers'],
      ['events', '/sandbox/events'],
      ['event', `/sandbox/events/${(await server.request<{ data: { id: string }[] }>('GET', '/api/v0/events', { key: worlds.sandbox.key })).body.data[0]?.id ?? ''}`],
    ]
    const found: string[] = []
    for (const [name, path] of pages) {
      expect((await open(path)).status, path).toBe(200)
      for (const width of [360, 1280]) {
        const { overflow, violations } = await measure(width, name)
        if (width === 360 && overflow > 0) found.push(`${name} at 360 px overflows by ${overflow} px`)
        found.push(...violations.map((violation) => `${name} at ${width} px: ${violation}`))
      }
    }
    expect(found).toEqual([])
    if (process.env.CONSOLE_SCREENSHOTS === '1') {
      for (const name of ['payments', 'payment', 'events']) copyFileSync(screenshotPath(`${name}-1280`), join(DOC_IMAGES, `console-${name}.png`))
    }
  })
})
