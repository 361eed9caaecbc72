import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateSync } from 'node:zlib'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Invoice } from '../../../src/resources/invoices/schemas.js'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'

/**
 * The pages a payer sees, in Debian's Chromium as a payer and a designer look at them: each page
 * (invoice, product link, donation link, checkout before and after payment) at 360, 390 and 1280 px
 * wide without horizontal overflow and with no serious or critical axe-core violation; the
 * product link's total following its quantities at once; the checkout turning to its receipt by
 * itself. Screenshots and the measured widths are kept in test-artifacts/pages/ (ignored by git);
 * two of the screenshots are in docs/images/, refreshed by this test with UPDATE_DOCS_IMAGES=1. And the docs' button text and Markdown rule, read from
 * the docs, checked against the pages.
 */

const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--hide-scrollbars']
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'pages')
const WIDTHS = [360, 390, 1280] as const
const TEST_BACKEND = process.env.TEST_BACKEND ?? 'sqlite'

let server: TestServer
let key: TestKey
let userDataDir: string
let browser: BrowserContext
let page: Page
const pageErrors: string[] = []
const foreignRequests: string[] = []
/** What each page measured at each width, written beside the screenshots. */
const measurements: Record<string, { scrollWidth: number; clientWidth: number; seriousOrCritical: number }> = {}
let customer: string
let widget: string
let gadget: string
let tax: string

async function created<T extends { id: string }>(path: string, body: Record<string, unknown>): Promise<T> {
  const res = await server.request<T>('POST', path, { key, body })
  expect(res.status, res.text).toBe(201)
  return res.body
}

/** A PNG logo: a 64×64 teal square with a white band, drawn here (no file of anyone else's). */
function logoPng(): Buffer {
  const size = 64
  const rows: number[] = []
  for (let y = 0; y < size; y += 1) {
    rows.push(0)
    for (let x = 0; x < size; x += 1) rows.push(...(y > 26 && y < 38 ? [255, 255, 255] : [15, 118, 110]))
  }
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    return c >>> 0
  })
  const crc = (bytes: Buffer): number => {
    let c = 0xffffffff
    for (const byte of bytes) c = (crcTable[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8)
    return (c ^ 0xffffffff) >>> 0
  }
  const chunk = (type: string, data: Buffer): Buffer => {
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
    const sum = Buffer.alloc(4)
    sum.writeUInt32BE(crc(body))
    return Buffer.concat([length, body, sum])
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(size, 0)
  header.writeUInt32BE(size, 4)
  header.set([8, 2, 0, 0, 0], 8)
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.from(rows))), chunk('IEND', Buffer.alloc(0))])
}

/** What a page measures at one width: its document's width against the viewport's, and axe-core's serious or critical violations. */
interface Measured {
  scrollWidth: number
  clientWidth: number
  violations: string[]
}

/** Screenshots the open page at `width` (whole page) and measures it. */
async function measure(name: string, width: number): Promise<Measured> {
  await page.setViewportSize({ width, height: 900 })
  await page.waitForLoadState('load')
  await page.screenshot({ path: join(ARTIFACTS, `${TEST_BACKEND}-${name}-${width}.png`), fullPage: true })
  const { scrollWidth, clientWidth } = await page.evaluate<{ scrollWidth: number; clientWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth })')
  await page.evaluate(AXE)
  const violations = await page.evaluate<string[]>(
    `axe.run(document).then((result) => result.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => violation.id + ': ' + violation.nodes.map((node) => node.html).join(' | ')))`,
  )
  return { scrollWidth, clientWidth, violations }
}

/** Every width: no horizontal overflow, no serious or critical violation. */
async function checkAtEveryWidth(name: string): Promise<void> {
  for (const width of WIDTHS) {
    const measured = await measure(name, width)
    measurements[`${name}-${width}`] = { scrollWidth: measured.scrollWidth, clientWidth: measured.clientWidth, seriousOrCritical: measured.violations.length }
    expect(measured.scrollWidth, `${name} at ${width} px`).toBeLessThanOrEqual(measured.clientWidth)
    expect(measured.violations, `${name} at ${width} px`).toEqual([])
  }
}

/** The docs' text of `file`, for the rules the pages must match. */
function docs(file: string): string {
  return readFileSync(join(process.cwd(), 'docs', file), 'utf8')
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's Chromium (apt-get install -y --no-install-recommends chromium; .ci/run does)`)
  mkdirSync(ARTIFACTS, { recursive: true })
  server = await startTestServer()
  key = await server.createKey({ environment: 'development' })
  const branded = await server.request('PUT', '/api/v0/branding', { key, body: { display_name: 'Acme Widgets', brand_color: '#0f766e', support_email: 'billing@acme.example' } })
  expect(branded.status, branded.text).toBe(200)
  const logo = await fetch(`${server.baseUrl}/api/v0/branding/logo`, { method: 'PUT', headers: { ...key.headers, 'content-type': 'image/png' }, body: logoPng() })
  expect(logo.status).toBe(200)
  customer = (await created<{ id: string }>('/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' })).id
  widget = (await created<{ id: string }>('/api/v0/products', { name: 'Widget', price: '10.00' })).id
  gadget = (await created<{ id: string }>('/api/v0/products', { name: 'Gadget with a long name for a narrow screen', price: '26.81' })).id
  tax = (await created<{ id: string }>('/api/v0/taxes', { name: 'Sales tax', percentage: 7.25 })).id
  userDataDir = mkdtempSync(join(tmpdir(), 'devplatform-chromium-'))
  browser = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 } })
  // Nothing but this server: a page that fetched a font, a script or an image elsewhere fails here.
  await browser.route('**/*', (route) => {
    if (route.request().url().startsWith(server.baseUrl)) return route.continue()
    foreignRequests.push(route.request().url())
    return route.abort()
  })
  page = browser.pages()[0] ?? (await browser.newPage())
  page.on('pageerror', (error) => pageErrors.push(error.message))
}, 60_000)

afterAll(async () => {
  if (Object.keys(measurements).length > 0) writeFileSync(join(ARTIFACTS, `${TEST_BACKEND}-measurements.json`), `${JSON.stringify(measurements, null, 2)}\n`)
  await browser?.close()
  if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true })
  await server?.close()
})

async function newInvoice(): Promise<Invoice> {
  return created<Invoice>('/api/v0/invoices', {
    name: 'April services',
    email: 'billing@example.com',
    customer_id: customer,
    currency: 'usdc',
    items: [{ product_id: widget, quantity: 2 }],
    taxId: tax,
    due_date: '2099-04-30T00:00:00Z',
    delivery: 'EMAIL',
    payment_link: false,
    payment_methods: ['CRYPTO'],
    status: 'OPEN',
    partial_payment: false,
  })
}

describe('the pages a payer sees, in Chromium at 360 and 1280 px', () => {
  it('the invoice page: the merchant, number, headline amount, status in words, and the Pay button the docs name', async () => {
    const invoice = await newInvoice()
    await page.goto(String(invoice.hosted_invoice_url))
    expect(await page.locator('.brand-name').innerText()).toBe('Acme Widgets')
    expect(await page.locator('img.brand-logo').evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth)).toBe(64)
    expect(await page.locator('.headline').innerText()).toBe('21.45 USDC')
    expect(await page.getByText(`Invoice INV-${invoice.id.slice(0, 8).toUpperCase()} from Acme Widgets`).count()).toBe(1)
    // docs/checkout.md names the button's text for this invoice (2 × 10.00 and 7.25 % tax): the page says the same.
    const documented = /the button reads \*\*(Pay [0-9.]+ USDC)\*\*/.exec(docs('checkout.md'))?.[1]
    expect(documented).toBe('Pay 21.45 USDC')
    expect(await page.getByRole('button', { name: documented }).count()).toBe(1)
    await checkAtEveryWidth('invoice')
    // Printed, the form and buttons go: what is left is the invoice for the payer's records.
    await page.emulateMedia({ media: 'print' })
    expect(await page.getByRole('button', { name: documented }).isVisible()).toBe(false)
    expect(await page.locator('.headline').isVisible()).toBe(true)
    await page.emulateMedia({ media: 'screen' })
  })

  it('a product link: the total follows the quantities at once, and is what the checkout asks', async () => {
    const link = await created<{ id: string; checkout_url: string }>('/api/v0/payment-links', {
      title: 'Widgets and gadgets',
      url: 'widgets-and-gadgets',
      linkType: 'PRODUCT',
      allowQuantityAdjustment: true,
      collectTax: true,
      taxId: tax,
      collectAddress: false,
      allowMobilePayment: false,
      currency: 'usdc',
      description: 'Our **best** widgets, shipped in a day.',
      paymentLinkProducts: [
        { productId: widget, quantity: 1 },
        { productId: gadget, quantity: 2 },
      ],
    })
    await page.goto(link.checkout_url)
    // 10.00 + 2 × 26.81 = 63.62, 7.25 %: 4.612…, 4.61; 68.23
    expect(await page.locator('td[data-total]').innerText()).toBe('68.23')
    expect(await page.getByRole('button', { name: 'Update total' }).isVisible()).toBe(false)
    await checkAtEveryWidth('product-link')
    await page.getByLabel('Quantity of Gadget with a long name for a narrow screen').fill('3')
    // 10.00 + 80.43 = 90.43, 7.25 %: 6.556…, 6.56; 96.99, without a reload.
    await expect.poll(() => page.locator('td[data-total]').innerText()).toBe('96.99')
    expect(await page.getByRole('button', { name: /^Pay/ }).innerText()).toBe('Pay 96.99 USDC')
    expect(await page.locator('td[data-tax-amount]').innerText()).toBe('6.56')
    await page.getByLabel('Email').fill('ada@example.com')
    await page.getByRole('button', { name: /^Pay/ }).click()
    await page.waitForURL(/\/checkout\/[0-9a-f-]{36}$/)
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Pay 96.99 USDC')
  })

  it("a donation link's description is Markdown with raw HTML shown as text, as docs/payment-links.md says", async () => {
    const rule = /<!-- markdown example -->\s*```text\n([\s\S]*?)\n```\s*shows as\s*```html\n([\s\S]*?)\n```/.exec(docs('payment-links.md'))
    expect(rule, 'docs/payment-links.md has the Markdown example').not.toBeNull()
    const [, description = '', rendered = ''] = rule ?? []
    const link = await created<{ id: string; checkout_url: string }>('/api/v0/payment-links', {
      title: 'Support the workshop',
      url: 'support-the-workshop',
      linkType: 'DONATION',
      allowQuantityAdjustment: false,
      collectTax: false,
      collectAddress: false,
      allowMobilePayment: false,
      currency: 'usdc',
      description,
    })
    await page.goto(link.checkout_url)
    expect(await page.locator('.description').innerHTML()).toBe(rendered)
    expect(await page.locator('.description script, .description img, .description [onerror]').count()).toBe(0)
    await checkAtEveryWidth('donation-link')
  })

  it('the checkout: copy button, network warning, then by itself the receipt with the merchant, items, amount, time and reference', async () => {
    const invoice = await newInvoice()
    await page.goto(String(invoice.hosted_invoice_url))
    await page.getByRole('button', { name: 'Pay 21.45 USDC' }).click()
    await page.waitForURL(/\/checkout\/[0-9a-f-]{36}$/)
    const intentId = page.url().split('/').at(-1) ?? ''
    expect(await page.getByRole('button', { name: 'Copy address' }).isVisible()).toBe(true)
    expect(await page.locator('.warning').innerText()).toContain('Only USDC on Base.')
    await checkAtEveryWidth('checkout')
    await page.setViewportSize({ width: 1280, height: 900 })

    // Paid elsewhere (the API's simulate_funds, as the sandbox's rail): the open page turns to its receipt by itself.
    const simulated = await server.request('POST', `/api/v0/payment-intents/${intentId}/simulate_funds`, { key, headers: { 'idempotency-key': crypto.randomUUID() } })
    expect(simulated.status, simulated.text).toBeLessThan(300)
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText(), { timeout: 15_000 }).toBe('Payment received')
    const receipt = await page.locator('.receipt').innerText()
    expect(receipt).toContain('Acme Widgets')
    expect(receipt).toMatch(/Widget\s+2\s+20\.00/)
    expect(receipt).toContain('21.45 USDC')
    expect(receipt).toMatch(/Paid on\s+\d{1,2} [A-Z][a-z]+ \d{4}, \d\d:\d\d UTC/)
    expect(await page.locator('#payment-reference').innerText()).toBe(intentId)
    await checkAtEveryWidth('receipt')

    // Two of the screenshots illustrate docs/checkout.md: refreshed when asked (their ids and times change on every run).
    if (process.env.UPDATE_DOCS_IMAGES === '1') {
      copyFileSync(join(ARTIFACTS, `${TEST_BACKEND}-invoice-360.png`), join(process.cwd(), 'docs', 'images', 'checkout-invoice-360.png'))
      copyFileSync(join(ARTIFACTS, `${TEST_BACKEND}-receipt-1280.png`), join(process.cwd(), 'docs', 'images', 'checkout-receipt-1280.png'))
    }
    expect(foreignRequests).toEqual([])
    expect(pageErrors).toEqual([])
  })
})
