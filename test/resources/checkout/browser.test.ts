import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Invoice } from '../../../src/resources/invoices/schemas.js'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { type Receiver, startReceiver } from '../../receiver.js'

/**
 * An invoice paid in Debian's Chromium as a customer pays it: open its page, fill it, pay, complete
 * the payment in the sandbox; then the invoice is PAID through the API and its invoice.paid event
 * reaches a webhook receiver. And the same with the keyboard alone.
 */

const CHROMIUM = '/usr/bin/chromium'
/** Headless, and quiet on a closed network (as test/docs/docs-page.test.ts launches it). */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

let server: TestServer
let receiver: Receiver
let key: TestKey
let userDataDir: string
let browser: BrowserContext
let page: Page
const pageErrors: string[] = []
let customer: string
let product: string

async function created<T extends { id: string }>(path: string, body: Record<string, unknown>): Promise<T> {
  const res = await server.request<T>('POST', path, { key, body })
  expect(res.status, res.text).toBe(201)
  return res.body
}

async function newInvoice(fields: Record<string, unknown> = {}): Promise<Invoice> {
  return created<Invoice>('/api/v0/invoices', {
    name: 'April services',
    email: 'billing@example.com',
    customer_id: customer,
    currency: 'usdc',
    items: [{ product_id: product, quantity: 3 }],
    due_date: '2099-04-30T00:00:00Z',
    delivery: 'EMAIL',
    payment_link: false,
    payment_methods: ['CRYPTO'],
    status: 'OPEN',
    partial_payment: false,
    ...fields,
  })
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's Chromium (apt-get install -y --no-install-recommends chromium; .ci/run does)`)
  receiver = await startReceiver()
  server = await startTestServer({ webhooks: { dispatcher: true, timeoutMs: 2000, pollIntervalMs: 20 } })
  key = await server.createKey({ environment: 'development' })
  const webhook = await server.request('POST', '/api/v0/webhooks', { key, body: { name: 'paid', url: receiver.url('/paid'), event_types: ['invoice.paid'] } })
  expect(webhook.status, webhook.text).toBe(201)
  customer = (await created<{ id: string }>('/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' })).id
  product = (await created<{ id: string }>('/api/v0/products', { name: 'Consulting hour', price: '120.00' })).id
  userDataDir = mkdtempSync(join(tmpdir(), 'devplatform-chromium-'))
  browser = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, args: CHROMIUM_ARGS, viewport: { width: 1024, height: 800 } })
  // Nothing but this server: a page that fetched a framework or a font would fail here.
  await browser.route('**/*', (route) => (route.request().url().startsWith(server.baseUrl) ? route.continue() : route.abort()))
  page = browser.pages()[0] ?? (await browser.newPage())
  page.on('pageerror', (error) => pageErrors.push(error.message))
}, 60_000)

afterAll(async () => {
  await browser?.close()
  if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true })
  await server?.close()
  await receiver?.close()
})

/** The invoice.paid events the receiver got for `invoiceId`. */
function paidEvents(invoiceId: string): Array<{ type: string; data: Invoice & { payment: { email: string } } }> {
  return receiver.arrivals
    .filter((arrival) => arrival.complete && arrival.path === '/paid')
    .map((arrival) => JSON.parse(arrival.body) as { type: string; data: Invoice & { payment: { email: string } } })
    .filter((event) => event.data.id === invoiceId)
}

describe('paying an invoice in Chromium', () => {
  it('open the page, fill it, pay, complete in the sandbox: the invoice is PAID and invoice.paid is delivered', async () => {
    const invoice = await newInvoice()
    const requests: string[] = []
    page.on('request', (request) => requests.push(request.url()))
    await page.goto(`${server.baseUrl}/invoices/${invoice.id}/pay`)
    expect(await page.title()).toMatch(/^Invoice INV-[0-9A-F]{8}: April services · /)
    await expect.poll(() => page.getByRole('main').getByRole('heading', { level: 1 }).innerText()).toBe('April services')
    expect(await page.getByRole('row', { name: /Consulting hour/ }).innerText()).toMatch(/Consulting hour\s+3\s+120\.00\s+360\.00/)
    expect(await page.getByRole('row', { name: /Amount due/ }).innerText()).toMatch(/Amount due \(USDC\)\s+360\.00/)

    const email = page.getByLabel('Email')
    expect(await email.inputValue()).toBe('billing@example.com')
    await email.fill('ada@example.com')
    await page.getByRole('button', { name: 'Pay 360.00 USDC' }).click()

    await page.waitForURL(/\/checkout\/[0-9a-f-]{36}$/)
    const intentId = page.url().split('/').at(-1) ?? ''
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Pay 360.00 USDC')
    const address = await page.locator('#deposit-address').innerText()
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    const intent = await server.request<{ state: string; source_deposit_instructions: { to_address: string; amount: string } }>('GET', `/api/v0/payment-intents/${intentId}`, { key })
    expect(intent.body).toMatchObject({ state: 'awaiting_funds', source_deposit_instructions: { to_address: address, amount: '360.000000' } })

    await page.getByRole('button', { name: 'Complete payment (sandbox)' }).click()
    await expect.poll(() => page.getByRole('status').innerText()).toContain('Payment received')
    expect(await page.getByRole('button', { name: 'Complete payment (sandbox)' }).count()).toBe(0)
    expect(await page.locator('#payment-reference').innerText()).toBe(intentId)

    const paid = await server.request<Invoice>('GET', `/api/v0/invoices/${invoice.id}`, { key })
    expect(paid.body).toMatchObject({ status: 'PAID', amount_paid: '360.00', amount_due: '0.00' })
    await expect.poll(() => paidEvents(invoice.id).length, { timeout: 10_000 }).toBe(1)
    const [event] = paidEvents(invoice.id)
    expect(event).toMatchObject({ type: 'invoice.paid', data: { id: invoice.id, status: 'PAID', payment: { email: 'ada@example.com' } } })

    await page.goto(`${server.baseUrl}/invoices/${invoice.id}/pay`)
    expect(await page.getByRole('status').innerText()).toContain('Paid in full')
    expect(requests.every((url) => url.startsWith(server.baseUrl))).toBe(true)
    expect(pageErrors).toEqual([])
  })

  it('with the keyboard alone: every control is reached by Tab, labelled, and pays', async () => {
    const invoice = await newInvoice({ partial_payment: true })
    await page.goto(`${server.baseUrl}/invoices/${invoice.id}/pay`)
    expect(await page.getByRole('main').count()).toBe(1)
    expect(await page.getByRole('banner').count()).toBe(1)
    expect(await page.getByRole('contentinfo').count()).toBe(1)

    /** Tab to the next control and describe it as assistive technology would: role, accessible name. */
    const tab = async () => {
      await page.keyboard.press('Tab')
      // Run in the page: the focused element and its label's text, or its own (a button's).
      return page.evaluate<{ tag: string; name: string }>(
        `(() => { const e = document.activeElement; const text = (e.labels && e.labels[0] ? e.labels[0].textContent : e.textContent) || ''; return { tag: e.tagName.toLowerCase(), name: text.trim() } })()`,
      )
    }
    expect(await tab()).toEqual({ tag: 'input', name: 'Email' })
    await page.keyboard.press('Control+A')
    await page.keyboard.type('keys@example.com')
    expect(await tab()).toEqual({ tag: 'input', name: 'Amount to pay (USDC)' })
    await page.keyboard.press('Control+A')
    await page.keyboard.type('100.00')
    expect(await tab()).toEqual({ tag: 'button', name: 'Pay' })
    await page.keyboard.press('Enter')

    await page.waitForURL(/\/checkout\/[0-9a-f-]{36}$/)
    // The links of the page come first (the invoice's page), then the address's copy button, then the sandbox's button.
    let focused = await tab()
    for (let i = 0; i < 6 && focused.name !== 'Complete payment (sandbox)'; i += 1) focused = await tab()
    expect(focused).toEqual({ tag: 'button', name: 'Complete payment (sandbox)' })
    expect(await page.getByRole('button', { name: 'Complete payment (sandbox)' }).getAttribute('aria-describedby')).toBe('sandbox-help')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.getByRole('status').innerText()).toContain('Payment received')
    const partly = await server.request<Invoice>('GET', `/api/v0/invoices/${invoice.id}`, { key })
    expect(partly.body).toMatchObject({ status: 'PARTIALLYPAID', amount_paid: '100.00', amount_due: '260.00' })

    // The focus is visible: the stylesheet outlines a focused control.
    await page.goto(`${server.baseUrl}/invoices/${invoice.id}/pay`)
    await page.keyboard.press('Tab')
    const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle')
    expect(outline).toBe('solid')
    expect(pageErrors).toEqual([])
  })
})
