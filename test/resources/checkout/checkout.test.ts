import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deleteApp } from '../../../src/cli/delete-app.js'
import type { Invoice } from '../../../src/resources/invoices/schemas.js'
import type { PaymentLink } from '../../../src/resources/payment-links/schemas.js'
import type { Transfer } from '../../../src/resources/transfers/schemas.js'
import type { ChainConfig } from '../../../src/chains/config.js'
import { ChainsRepository } from '../../../src/chains/repository.js'
import { loadConfig, parseDatabaseUrl } from '../../../src/config.js'
import { openDatabase } from '../../../src/modules/database.js'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { testXpub } from '../../helpers/receiving-key.js'
import { decodedQr } from './qr-decode.js'

/**
 * The hosted checkout pages over real HTTP, as a browser's forms use them (url-encoded POSTs,
 * 303 redirects): paying invoices and payment links in the sandbox, and every rule of paying.
 */

/** A made-up USDC contract on Base for the tests' configuration (no node is asked about it). */
const USDC_ON_BASE = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'

let server: TestServer
/** a development key: the checkout's sandbox intents are its to read */
let key: TestKey
let customer: string
/** a 10.00 USD product */
let product: string

interface Page {
  status: number
  location: string | null
  text: string
  headers: Headers
}

async function page(method: 'GET' | 'POST', path: string, form?: Record<string, string>, on: TestServer = server): Promise<Page> {
  const response = await fetch(`${on.baseUrl}${path}`, {
    method,
    redirect: 'manual',
    ...(form === undefined ? {} : { body: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
  })
  return { status: response.status, location: response.headers.get('location'), text: await response.text(), headers: response.headers }
}

async function created<T extends { id: string }>(path: string, body: Record<string, unknown>, caller: TestKey = key): Promise<T> {
  const res = await server.request<T>('POST', path, { key: caller, body })
  expect(res.status, res.text).toBe(201)
  return res.body
}

async function newInvoice(fields: Record<string, unknown> = {}, caller: TestKey = key, customerId: string = customer, productId: string = product): Promise<Invoice> {
  return created<Invoice>(
    '/api/v0/invoices',
    {
      name: 'March services',
      email: 'billing@example.com',
      customer_id: customerId,
      currency: 'usdc',
      items: [{ product_id: productId, quantity: 1 }],
      due_date: '2099-01-31T00:00:00.000Z',
      delivery: 'EMAIL',
      payment_link: false,
      payment_methods: ['CRYPTO'],
      status: 'OPEN',
      partial_payment: false,
      ...fields,
    },
    caller,
  )
}

let slugs = 0
async function newLink(fields: Record<string, unknown> = {}, caller: TestKey = key): Promise<PaymentLink> {
  slugs += 1
  return created<PaymentLink>(
    '/api/v0/payment-links',
    { title: 'Support us', url: `pay-${slugs}-${crypto.randomUUID().slice(0, 8)}`, linkType: 'DONATION', allowQuantityAdjustment: false, collectTax: false, collectAddress: false, allowMobilePayment: false, currency: 'usdc', ...fields },
    caller,
  )
}

async function getInvoice(id: string): Promise<Invoice> {
  const res = await server.request<Invoice>('GET', `/api/v0/invoices/${id}`, { key })
  expect(res.status).toBe(200)
  return res.body
}

async function getLink(id: string): Promise<PaymentLink> {
  const res = await server.request<PaymentLink>('GET', `/api/v0/payment-links/${id}`, { key })
  expect(res.status).toBe(200)
  return res.body
}

async function getIntent(id: string): Promise<Transfer> {
  const res = await server.request<Transfer>('GET', `/api/v0/payment-intents/${id}`, { key })
  expect(res.status, res.text).toBe(200)
  return res.body
}

async function eventsOf<T>(appId: string, type: string): Promise<T[]> {
  const rows = await server.database.query<{ payload: string }>('select payload from events where app_id = ? and type = ? order by created_at, id', appId, type)
  return rows.map((row) => (JSON.parse(row.payload) as { data: T }).data)
}

async function intentsOf(appId: string): Promise<number> {
  const rows = await server.database.query<{ n: number | string }>('select count(*) as n from transfers where app_id = ?', appId)
  return Number(rows[0]?.n ?? 0)
}

/** Pays through the page: the form's POST answers 303 to the payment's page; its id is the intent's. */
async function pay(path: string, form: Record<string, string>): Promise<string> {
  const res = await page('POST', path, form)
  expect(res.status, res.text).toBe(303)
  const match = /^\/checkout\/([0-9a-f-]{36})$/.exec(res.location ?? '')
  expect(match, res.location ?? '').not.toBeNull()
  return match?.[1] ?? ''
}

async function complete(intentId: string): Promise<Page> {
  return page('POST', `/checkout/${intentId}/complete`)
}

beforeAll(async () => {
  // Live receiving on Base for USDC only (no watcher reads it here: its node is never asked): EURC is a token that is off.
  const base: ChainConfig = { chain: 'base', chainId: 8453, rpcUrls: ['http://127.0.0.1:9'], tokens: { usdc: USDC_ON_BASE }, confirmations: 3, pollIntervalMs: 60_000, maxBlockRange: 500, startBlock: 0, rpcTimeoutMs: 1_000 }
  const defaults = loadConfig({ NODE_ENV: 'test' })
  server = await startTestServer({ config: { chains: { file: 'test', receivingXpub: testXpub(), chains: [base] }, drains: { ...defaults.drains, scheduler: false } } })
  key = await server.createKey({ environment: 'development' })
  customer = (await created<{ id: string }>('/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' })).id
  product = (await created<{ id: string }>('/api/v0/products', { name: 'Widget', price: '10.00' })).id
})

afterAll(async () => server?.close())

describe('paying an invoice on its page', () => {
  it('shows what is due, pays it through a stablecoin intent, and the sandbox button marks it PAID with invoice.paid', async () => {
    const tax = (await created<{ id: string }>('/api/v0/taxes', { name: 'Sales tax', percentage: 7.25 })).id
    const invoice = await newInvoice({ items: [{ product_id: product, quantity: 2 }], taxId: tax })
    expect(invoice.hosted_invoice_url).toBe(`${server.baseUrl}/invoices/${invoice.id}/pay`)
    const shown = await page('GET', `/invoices/${invoice.id}/pay`)
    expect(shown.status).toBe(200)
    expect(shown.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(shown.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(shown.text).toContain('<main id="main">')
    expect(shown.text).toContain('<th scope="row">Widget</th><td class="number">2</td><td class="number">10.00</td><td class="number" data-line-amount>20.00</td>')
    expect(shown.text).toContain('Sales tax (7.25 %)')
    expect(shown.text).toContain('<td class="number" data-tax-amount>1.45</td>')
    expect(shown.text).toContain('<p class="headline">21.45 <span class="currency">USDC</span></p>')
    expect(shown.text).toContain(`Invoice INV-${invoice.id.slice(0, 8).toUpperCase()} from`)
    expect(shown.text).toContain('<span class="badge">Due</span>')
    expect(shown.text).toContain('<label for="email">Email</label>')
    expect(shown.text).toContain('value="billing@example.com"')
    expect(shown.text).toContain('<button type="submit" class="pay">Pay 21.45 USDC</button>')

    const intentId = await pay(`/invoices/${invoice.id}/pay`, { email: 'payer@example.com' })
    const intent = await getIntent(intentId)
    expect(intent).toMatchObject({ type: 'payment_intent_stablecoin', state: 'awaiting_funds', amount: '21.450000', currency: 'usdc', customer: { email: 'payer@example.com' } })
    expect(intent.source_deposit_instructions).toMatchObject({ payment_rail: 'base', currency: 'usdc', amount: '21.450000' })
    const address = intent.source_deposit_instructions?.to_address ?? ''
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    const wallets = await server.request<{ data: Array<{ id: string; chain: string }> }>('GET', '/api/v0/wallets', { key })
    expect(intent.destination.bridge_wallet_id).toBe(wallets.body.data.find((wallet) => wallet.chain === 'base')?.id)
    expect((await getInvoice(invoice.id)).status).toBe('OPEN')

    const before = await page('GET', `/checkout/${intentId}`)
    expect(before.status).toBe(200)
    expect(before.text).toContain(`<code id="deposit-address" class="address">${address}</code>`)
    expect(before.text).toContain('<button type="button" class="secondary" data-copy="deposit-address" hidden>Copy address</button>')
    expect(before.text).toContain('<strong>Only USDC on Base.</strong>')
    expect(before.text).toContain('Send exactly <strong>21.45 USDC</strong> on <strong>Base</strong>')
    expect(before.text).toContain('<button type="submit" class="pay" aria-describedby="sandbox-help">Complete payment (sandbox)</button>')

    const done = await complete(intentId)
    expect(done.status, done.text).toBe(303)
    expect(done.location).toBe(`/checkout/${intentId}`)
    const paid = await getInvoice(invoice.id)
    expect(paid).toMatchObject({ status: 'PAID', amount_paid: '21.45', amount_due: '0.00' })
    expect((await getIntent(intentId)).state).toBe('funds_received')
    const events = await eventsOf<Invoice & { payment: Record<string, unknown> }>(key.appId, 'invoice.paid')
    const event = events.find((data) => data.id === invoice.id)
    expect(event).toMatchObject({ id: invoice.id, status: 'PAID', amount_paid: '21.45' })
    expect(event?.payment).toEqual({ payment_intent_id: intentId, amount: '21.450000', currency: 'usdc', email: 'payer@example.com', address: null, items: [], paid_at: expect.any(String) })

    const after = await page('GET', `/checkout/${intentId}`)
    expect(after.text).toContain('<h1>Payment received</h1>')
    expect(after.text).not.toContain('<h1>Pay ')
    expect(after.text).toContain(`<code id="payment-reference">${intentId}</code>`)
    expect(after.text).toContain('<th scope="row">Widget</th><td class="number">2</td><td class="number">20.00</td>')
    expect(after.text).toContain('<dt>Paid by</dt><dd>payer@example.com</dd>')
    expect(after.text).not.toContain('Complete payment (sandbox)')
    const again = await complete(intentId)
    expect(again.status).toBe(409)
    expect(again.text).toContain('role="alert"')
    const paidPage = (await page('GET', `/invoices/${invoice.id}/pay`)).text
    expect(paidPage).toContain('<h2>Paid in full</h2>')
    expect(paidPage).toContain('<span class="badge badge-paid">Paid</span>')
    expect(paidPage).not.toContain('This invoice is already paid')
  })

  it('a PAID invoice cannot be paid again, and a DRAFT is not payable: 409 and no intent', async () => {
    const invoice = await newInvoice()
    await complete(await pay(`/invoices/${invoice.id}/pay`, { email: 'payer@example.com' }))
    const count = await intentsOf(key.appId)
    const refused = await page('POST', `/invoices/${invoice.id}/pay`, { email: 'payer@example.com' })
    expect(refused.status).toBe(409)
    expect(refused.text).toContain('This invoice is already paid')
    const draft = await newInvoice({ status: 'DRAFT' })
    // A draft's page does not exist yet, and its answer names no page.
    expect(draft.hosted_invoice_url).toBeNull()
    const shown = await page('GET', `/invoices/${draft.id}/pay`)
    expect(shown.status).toBe(404)
    expect(shown.text).not.toContain('<form')
    const draftRefused = await page('POST', `/invoices/${draft.id}/pay`, { email: 'payer@example.com' })
    expect(draftRefused.status).toBe(404)
    expect(await intentsOf(key.appId)).toBe(count)
    expect((await getInvoice(draft.id)).status).toBe('DRAFT')
  })

  it('two intents for the whole amount: the second to arrive is refused (409) and the invoice is paid once', async () => {
    const invoice = await newInvoice()
    const first = await pay(`/invoices/${invoice.id}/pay`, { email: 'a@example.com' })
    const second = await pay(`/invoices/${invoice.id}/pay`, { email: 'b@example.com' })
    expect((await complete(first)).status).toBe(303)
    const refused = await complete(second)
    expect(refused.status).toBe(409)
    expect(refused.text).toContain('This invoice is already paid')
    expect(await getInvoice(invoice.id)).toMatchObject({ status: 'PAID', amount_paid: '10.00' })
    expect((await getIntent(second)).state).toBe('awaiting_funds')
    expect((await eventsOf<Invoice>(key.appId, 'invoice.paid')).filter((data) => data.id === invoice.id)).toHaveLength(1)
  })

  it('partial payments: an amount from 0.01 to the amount due, PARTIALLYPAID with invoice.updated, then PAID', async () => {
    const invoice = await newInvoice({ partial_payment: true })
    const path = `/invoices/${invoice.id}/pay`
    expect((await page('GET', path)).text).toContain('<label for="amount">Amount to pay (USDC)</label>')
    for (const amount of ['0', '0.00', '10.01', 'ten', '1.001']) {
      const refused = await page('POST', path, { email: 'payer@example.com', amount })
      expect(refused.status, amount).toBe(400)
      expect(refused.text).toContain('role="alert"')
    }
    const count = await intentsOf(key.appId)
    expect(count).toBeGreaterThan(0)
    await complete(await pay(path, { email: 'payer@example.com', amount: '0.01' }))
    expect(await getInvoice(invoice.id)).toMatchObject({ status: 'PARTIALLYPAID', amount_paid: '0.01', amount_due: '9.99' })
    expect((await eventsOf<Invoice>(key.appId, 'invoice.updated')).some((data) => data.id === invoice.id && data.status === 'PARTIALLYPAID')).toBe(true)
    expect((await page('POST', path, { email: 'payer@example.com', amount: '10.00' })).status).toBe(400)
    await complete(await pay(path, { email: 'payer@example.com', amount: '9.99' }))
    expect(await getInvoice(invoice.id)).toMatchObject({ status: 'PAID', amount_paid: '10.00', amount_due: '0.00' })
    expect((await eventsOf<Invoice>(key.appId, 'invoice.paid')).filter((data) => data.id === invoice.id)).toHaveLength(1)
  })

  it('an email is required and checked; the page keeps what was typed and escapes it', async () => {
    const invoice = await newInvoice({ name: '<script>alert(1)</script> & co' })
    const shown = await page('GET', `/invoices/${invoice.id}/pay`)
    expect(shown.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; co')
    expect(shown.text).not.toContain('<script>')
    for (const email of ['', 'not-an-email', `${'a'.repeat(250)}@x.io`]) {
      const refused = await page('POST', `/invoices/${invoice.id}/pay`, { email })
      expect(refused.status, email).toBe(400)
      expect(refused.text).toContain('Enter an email address')
    }
    const refused = await page('POST', `/invoices/${invoice.id}/pay`, { email: '"><b>x' })
    expect(refused.text).toContain('value="&quot;&gt;&lt;b&gt;x"')
  })

  it("the API's simulate_funds on a checkout intent pays the invoice as the page's button does", async () => {
    const invoice = await newInvoice()
    const intentId = await pay(`/invoices/${invoice.id}/pay`, { email: 'payer@example.com' })
    const res = await server.request('POST', `/api/v0/payment-intents/${intentId}/simulate_funds`, { key, body: {} })
    expect(res.status, res.text).toBe(200)
    expect((await getInvoice(invoice.id)).status).toBe('PAID')
  })

  it('an unknown invoice, payment or link, and a link under another application, answer a 404 page', async () => {
    const link = await newLink({ amount: '5' })
    const other = await server.createKey({ environment: 'development' })
    for (const path of [`/invoices/${MISSING_UUID}/pay`, '/invoices/not-an-id/pay', `/checkout/${MISSING_UUID}`, `/pay/${other.appId}/${link.url}`, `/pay/${key.appId}/no-such-link`]) {
      const res = await page('GET', path)
      expect(res.status, path).toBe(404)
      expect(res.text).toContain('This payment page does not exist')
    }
    expect((await page('POST', `/checkout/${MISSING_UUID}/complete`)).status).toBe(404)
  })

  it('the pages are not operations of the API document', async () => {
    const res = await server.request<{ paths: Record<string, unknown> }>('GET', '/api/v0/openapi.json')
    expect(Object.keys(res.body.paths).filter((path) => !path.startsWith('/api/v0/') || path.endsWith('/pay') || path.includes('/checkout'))).toEqual([])
  })
})

describe('paying a payment link on its page', () => {
  it("a DONATION: the payer's amount, email and address; payments_count and payment_link.paid", async () => {
    const link = await newLink({ collectAddress: true })
    expect(link.checkout_url).toBe(`${server.baseUrl}/pay/${key.appId}/${link.url}`)
    const path = `/pay/${key.appId}/${link.url}`
    const shown = await page('GET', new URL(link.checkout_url).pathname)
    expect(shown.status).toBe(200)
    expect(shown.text).toContain('<label for="amount">Amount (USDC)</label>')
    expect(shown.text).toContain('<label for="address">Billing address</label>')
    const missingAddress = await page('POST', path, { amount: '12.5', email: 'payer@example.com' })
    expect(missingAddress.status).toBe(400)
    expect(missingAddress.text).toContain('Enter your billing address')
    expect((await page('POST', path, { amount: '', email: 'payer@example.com', address: '1 Main St' })).status).toBe(400)
    const intentId = await pay(path, { amount: '12.5', email: 'payer@example.com', address: '1 Main St\nSpringfield' })
    expect(await getIntent(intentId)).toMatchObject({ amount: '12.500000', customer: { email: 'payer@example.com', address: '1 Main St\nSpringfield' } })
    expect((await complete(intentId)).status).toBe(303)
    expect((await getLink(link.id)).payments_count).toBe(1)
    const events = await eventsOf<PaymentLink & { payment: Record<string, unknown> }>(key.appId, 'payment_link.paid')
    const event = events.find((data) => data.id === link.id)
    expect(event).toMatchObject({ id: link.id, payments_count: 1, checkout_url: link.checkout_url })
    expect(event?.payment).toMatchObject({ payment_intent_id: intentId, amount: '12.500000', email: 'payer@example.com', address: '1 Main St\nSpringfield', items: [] })
  })

  it('a PRODUCT link: its products, tax and total; adjustable quantities, 0 leaving a product out', async () => {
    const gadget = (await created<{ id: string }>('/api/v0/products', { name: 'Gadget', price: '0.10' })).id
    const tax = (await created<{ id: string }>('/api/v0/taxes', { name: 'VAT', percentage: 5 })).id
    const link = await newLink({ linkType: 'PRODUCT', allowQuantityAdjustment: true, collectTax: true, taxId: tax, paymentLinkProducts: [{ productId: product, quantity: 2 }, { productId: gadget, quantity: 3 }] })
    const path = `/pay/${key.appId}/${link.url}`
    const shown = await page('GET', path)
    // 20.00 + 0.30 = 20.30, 5 % once on the subtotal: 1.015, half up: 1.02
    expect(shown.text).toContain('<td class="number" data-subtotal>20.30</td>')
    expect(shown.text).toContain('<td class="number" data-tax-amount>1.02</td>')
    expect(shown.text).toContain('<button type="submit" class="pay">Pay <span data-total>21.32</span> USDC</button>')
    expect(shown.text).toContain('<table data-live-total data-tax-percent="5">')
    // Without a script, "Update total" posts the quantities back and the page comes counted with them; nothing is paid.
    const intentsBefore = await intentsOf(key.appId)
    const updated = await page('POST', path, { [`qty_${product}`]: '1', [`qty_${gadget}`]: '5', email: '', action: 'update-total' })
    expect(updated.status).toBe(200)
    // 10.00 + 0.50 = 10.50, 5 %: 0.525, half up: 0.53
    expect(updated.text).toContain('<td class="number" data-subtotal>10.50</td>')
    expect(updated.text).toContain('<td class="number" data-tax-amount>0.53</td>')
    expect(updated.text).toContain('Pay <span data-total>11.03</span> USDC')
    expect(updated.text).toContain(`name="qty_${gadget}" type="number" inputmode="numeric" min="0" max="10000" step="1" value="5"`)
    expect(updated.text).not.toContain('role="alert"')
    expect(await intentsOf(key.appId)).toBe(intentsBefore)
    expect(shown.text).toContain(`<label for="qty-${gadget}" class="visually-hidden">Quantity of Gadget</label>`)
    const none = await page('POST', path, { [`qty_${product}`]: '0', [`qty_${gadget}`]: '0', email: 'payer@example.com' })
    expect(none.status).toBe(400)
    expect(none.text).toContain('Choose at least one product')
    expect((await page('POST', path, { [`qty_${product}`]: '10001', email: 'payer@example.com' })).status).toBe(400)
    const intentId = await pay(path, { [`qty_${product}`]: '1', [`qty_${gadget}`]: '0', email: 'payer@example.com' })
    // 10.00 + 5 % = 10.50
    expect((await getIntent(intentId)).amount).toBe('10.500000')
    await complete(intentId)
    const event = (await eventsOf<PaymentLink & { payment: { items: unknown[] } }>(key.appId, 'payment_link.paid')).find((data) => data.id === link.id)
    expect(event?.payment.items).toEqual([{ product_id: product, name: 'Widget', quantity: 1, unit_price: '10.00' }])
  })

  it('an expired link is refused with a clear message (410); one that expires later is payable', async () => {
    const link = await newLink({ amount: '5', expiration_date: new Date(Date.now() + 3_600_000).toISOString() })
    const path = `/pay/${key.appId}/${link.url}`
    expect((await page('GET', path)).status).toBe(200)
    await pay(path, { email: 'payer@example.com' })
    const past = new Date(Date.now() - 1000).toISOString()
    await server.app.db.updateTable('payment_links').set({ expires_at: past }).where('id', '=', link.id).execute()
    const count = await intentsOf(key.appId)
    const shown = await page('GET', path)
    expect(shown.status).toBe(410)
    expect(shown.text).toContain(`This payment link expired on ${past.slice(0, 10)}: it can no longer be paid`)
    expect(shown.text).not.toContain('<form')
    expect((await page('POST', path, { email: 'payer@example.com' })).status).toBe(410)
    expect(await intentsOf(key.appId)).toBe(count)
  })

  it('maxPayments: 1 and 20 payers completing at once: exactly one payment, the others 409', async () => {
    const link = await newLink({ amount: '3', limitPayments: true, maxPayments: 1 })
    const path = `/pay/${key.appId}/${link.url}`
    const intents = await Promise.all(Array.from({ length: 20 }, (_, i) => pay(path, { email: `payer${i}@example.com` })))
    const answers = await Promise.all(intents.map((id) => complete(id)))
    expect(answers.filter((answer) => answer.status === 303)).toHaveLength(1)
    const refused = answers.filter((answer) => answer.status === 409)
    expect(refused).toHaveLength(19)
    expect(refused[0]?.text).toContain('This payment link has had its one payment: it takes no more')
    expect((await getLink(link.id)).payments_count).toBe(1)
    expect((await eventsOf<PaymentLink>(key.appId, 'payment_link.paid')).filter((data) => data.id === link.id)).toHaveLength(1)
    const states = await Promise.all(intents.map(async (id) => (await getIntent(id)).state))
    expect(states.filter((state) => state === 'funds_received')).toHaveLength(1)
    expect(states.filter((state) => state === 'awaiting_funds')).toHaveLength(19)
    const closed = await page('GET', path)
    expect(closed.status).toBe(409)
    expect(closed.text).toContain('This payment link has had its one payment: it takes no more')
    expect((await page('POST', path, { email: 'late@example.com' })).status).toBe(409)
  })

  it('maxPayments: 2 takes two payments and refuses the third', async () => {
    const link = await newLink({ amount: '1', limitPayments: true, maxPayments: 2 })
    const path = `/pay/${key.appId}/${link.url}`
    const [a, b, c] = [await pay(path, { email: 'a@example.com' }), await pay(path, { email: 'b@example.com' }), await pay(path, { email: 'c@example.com' })]
    expect((await complete(a)).status).toBe(303)
    expect((await complete(b)).status).toBe(303)
    expect((await complete(c)).status).toBe(409)
    expect((await getLink(link.id)).payments_count).toBe(2)
  })
})

describe("a hosted payment takes the money of the key that made its invoice or link", () => {
  /** An application with a production key, its customer and a 10.00 USD product: everything it makes is live. */
  let live: TestKey
  let liveCustomer: string
  let liveProduct: string
  beforeAll(async () => {
    live = await server.createKey({ environment: 'production' })
    liveCustomer = (await created<{ id: string }>('/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }, live)).id
    liveProduct = (await created<{ id: string }>('/api/v0/products', { name: 'Widget', price: '10.00' }, live)).id
  })

  async function liveIntent(id: string): Promise<Transfer> {
    const res = await server.request<Transfer>('GET', `/api/v0/payment-intents/${id}`, { key: live })
    expect(res.status, res.text).toBe(200)
    return res.body
  }

  it("a production key's invoice is live: its pages offer no sandbox completion, and completing answers 403 and changes nothing", async () => {
    const invoice = await newInvoice({ payment_link: true }, live, liveCustomer, liveProduct)
    expect(invoice.livemode).toBe(true)
    // The invoice's own link takes the invoice's money.
    expect((await server.request<PaymentLink>('GET', `/api/v0/payment-links/${invoice.payment_link_id ?? ''}`, { key: live })).body.livemode).toBe(true)
    const shown = await page('GET', `/invoices/${invoice.id}/pay`)
    expect(shown.status).toBe(200)
    expect(shown.text).not.toContain('no real money moves')
    const intentId = await pay(`/invoices/${invoice.id}/pay`, { email: 'payer@example.com' })
    // A live intent: the production key reads it, the development key of the sandbox does not.
    expect(await liveIntent(intentId)).toMatchObject({ state: 'awaiting_funds', livemode: true, amount: '10.000000' })
    const checkout = await page('GET', `/checkout/${intentId}`)
    expect(checkout.status).toBe(200)
    expect(checkout.text).not.toContain('Complete payment (sandbox)')
    expect(checkout.text).not.toContain('/complete')
    expect(checkout.text).not.toContain('no real money moves')
    // Live USDC on Base is on: the address of the intent's instructions, the EIP-681 request as a link and as a QR code.
    const to = (await liveIntent(intentId)).source_deposit_instructions?.to_address ?? ''
    expect(checkout.text).toContain(`<code id="deposit-address" class="address">${to}</code>`)
    const uri = `ethereum:${USDC_ON_BASE}@8453/transfer?address=${to}&amp;uint256=10000000`
    expect(checkout.text).toContain(`href="${uri}"`)
    expect(decodedQr(checkout.text)).toBe(uri.replace('&amp;', '&'))
    expect(checkout.text).toContain('Only USDC on Base.')
    expect(checkout.text).toContain(`data-status-url="/checkout/${intentId}/status" data-state="awaiting"`)
    expect(checkout.headers.get('content-security-policy')).toContain("script-src 'self';")

    const refused = await complete(intentId)
    expect(refused.status).toBe(403)
    expect(refused.text).toContain('role="alert"')
    expect(refused.text).toContain('This is a payment in real money: only the payer&#39;s funds arriving on the chain complete it, never a button')
    expect(refused.text).not.toContain('Complete payment (sandbox)')
    expect(await server.request<Invoice>('GET', `/api/v0/invoices/${invoice.id}`, { key: live }).then((res) => res.body)).toMatchObject({ status: 'OPEN', amount_paid: '0.00' })
    expect((await liveIntent(intentId)).state).toBe('awaiting_funds')
    expect(await eventsOf(live.appId, 'invoice.paid')).toEqual([])
    const stored = await server.database.query<{ state: string }>('select state from checkout_payments where transfer_id = ?', intentId)
    expect(stored).toEqual([{ state: 'awaiting_funds' }])
  })

  it("a production key's payment link is live: no sandbox completion, 403, payments_count 0 and no payment_link.paid", async () => {
    const link = await newLink({ amount: '5' }, live)
    expect(link.livemode).toBe(true)
    const intentId = await pay(`/pay/${live.appId}/${link.url}`, { email: 'payer@example.com' })
    expect((await liveIntent(intentId)).livemode).toBe(true)
    const checkout = await page('GET', `/checkout/${intentId}`)
    expect(checkout.text).not.toContain('Complete payment (sandbox)')
    expect(checkout.text).toContain('id="payment-uri"')
    expect((await complete(intentId)).status).toBe(403)
    expect((await server.request<PaymentLink>('GET', `/api/v0/payment-links/${link.id}`, { key: live })).body.payments_count).toBe(0)
    expect(await eventsOf(live.appId, 'payment_link.paid')).toEqual([])
  })

  it('a live payment in a token that is off is refused on the page, clearly, and makes no intent', async () => {
    const link = await newLink({ amount: '5', currency: 'eurc' }, live)
    const before = await server.database.query<{ n: number }>('select count(*) as n from checkout_payments')
    const refused = await page('POST', `/pay/${live.appId}/${link.url}`, { email: 'payer@example.com' })
    expect(refused.status).toBe(409)
    expect(refused.text).toContain('role="alert"')
    expect(refused.text).toContain('Live payments of EURC on Base are not enabled on this platform')
    expect(await server.database.query<{ n: number }>('select count(*) as n from checkout_payments')).toEqual(before)
  })

  it('a live deposit the watcher recorded to the address shows on the page as seen, with its confirmations, and in the status', async () => {
    const link = await newLink({ amount: '5' }, live)
    const intentId = await pay(`/pay/${live.appId}/${link.url}`, { email: 'payer@example.com' })
    const to = (await liveIntent(intentId)).source_deposit_instructions?.to_address ?? ''
    expect(JSON.parse((await page('GET', `/checkout/${intentId}/status`)).text)).toEqual({ state: 'awaiting' })
    // The row the chain watcher writes when it sees the transfer's log (src/chains/deposits.ts recordSeen), one block deep of the 3 required.
    const db = await openDatabase(parseDatabaseUrl(server.database.url, 'DATABASE_URL', 1))
    try {
      const chains = new ChainsRepository(db)
      const at = new Date().toISOString()
      const deposit = { id: crypto.randomUUID(), chain: 'base', tx_hash: `0x${'ab'.repeat(32)}`, log_index: 0, block_number: 100, block_hash: `0x${'cd'.repeat(32)}`, token: USDC_ON_BASE, currency: 'usdc', from_address: `0x${'11'.repeat(20)}`, to_address: to.toLowerCase(), amount: '5000000', environment: 'live', app_id: live.appId, owner_type: 'transfer', owner_id: intentId, status: 'pending', confirmations: 1, reason: null, credited_type: null, credited_id: null, sweep_id: null, created_at: at, updated_at: at }
      expect(await chains.insertDeposit(deposit)).toBe(true)
      const seen = await page('GET', `/checkout/${intentId}`)
      expect(seen.text).toContain('Payment seen, 1 of 3 confirmations')
      expect(JSON.parse((await page('GET', `/checkout/${intentId}/status`)).text)).toEqual({ state: 'seen:1' })
      expect(await chains.move(deposit.id, 'pending', { confirmations: 2 })).toBe(true)
    } finally {
      await db.destroy()
    }
    expect(JSON.parse((await page('GET', `/checkout/${intentId}/status`)).text)).toEqual({ state: 'seen:2' })
  })

  it('the status route answers the page state as JSON under the page rule, and the page script is served from here', async () => {
    const link = await newLink({ amount: '5' }, live)
    const intentId = await pay(`/pay/${live.appId}/${link.url}`, { email: 'payer@example.com' })
    const status = await page('GET', `/checkout/${intentId}/status`)
    expect(status.status).toBe(200)
    expect(JSON.parse(status.text)).toEqual({ state: 'awaiting' })
    expect(status.headers.get('cache-control')).toBe('no-store')
    expect((await page('GET', `/checkout/${MISSING_UUID}/status`)).status).toBe(404)
    const script = await page('GET', '/checkout/page.js')
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toContain('text/javascript')
    expect(script.text).toContain('data-status-url')
  })

  it("a development key's invoice and link are sandbox: the button is offered and pays them", async () => {
    const invoice = await newInvoice()
    expect(invoice.livemode).toBe(false)
    const intentId = await pay(`/invoices/${invoice.id}/pay`, { email: 'payer@example.com' })
    expect((await getIntent(intentId)).livemode).toBe(false)
    const checkout = await page('GET', `/checkout/${intentId}`)
    expect(checkout.text).toContain('Complete payment (sandbox)')
    expect(checkout.text).toContain('no real money moves')
    expect((await complete(intentId)).status).toBe(303)
    expect((await getInvoice(invoice.id)).status).toBe('PAID')
    const link = await newLink({ amount: '2' })
    expect(link.livemode).toBe(false)
    expect((await complete(await pay(`/pay/${key.appId}/${link.url}`, { email: 'payer@example.com' }))).status).toBe(303)
    expect((await getLink(link.id)).payments_count).toBe(1)
  })

  it('sandbox money never pays a live invoice or link: an intent of the other money is refused, by the page (403) and by simulate_funds (409)', async () => {
    // As an intent made before invoices and links recorded their money: a sandbox intent for what is live.
    const invoice = await newInvoice()
    const intentId = await pay(`/invoices/${invoice.id}/pay`, { email: 'payer@example.com' })
    await server.app.db.updateTable('invoices').set({ environment: 'live' }).where('id', '=', invoice.id).execute()
    expect((await page('GET', `/checkout/${intentId}`)).text).not.toContain('Complete payment (sandbox)')
    expect((await complete(intentId)).status).toBe(403)
    const simulated = await server.request<{ message: string }>('POST', `/api/v0/payment-intents/${intentId}/simulate_funds`, { key, body: {} })
    expect(simulated.status, simulated.text).toBe(409)
    expect(simulated.body.message).toBe('This payment is sandbox money and the invoice is live: sandbox money never pays live, nor live sandbox')
    expect((await getInvoice(invoice.id)).status).toBe('OPEN')
    expect((await getIntent(intentId)).state).toBe('awaiting_funds')

    const link = await newLink({ amount: '3' })
    const linkIntent = await pay(`/pay/${key.appId}/${link.url}`, { email: 'payer@example.com' })
    await server.app.db.updateTable('payment_links').set({ environment: 'live' }).where('id', '=', link.id).execute()
    expect((await complete(linkIntent)).status).toBe(403)
    const linkSimulated = await server.request<{ message: string }>('POST', `/api/v0/payment-intents/${linkIntent}/simulate_funds`, { key, body: {} })
    expect(linkSimulated.status).toBe(409)
    expect(linkSimulated.body.message).toBe('This payment is sandbox money and the payment link is live: sandbox money never pays live, nor live sandbox')
    expect((await getLink(link.id)).payments_count).toBe(0)
    expect((await getIntent(linkIntent)).state).toBe('awaiting_funds')
  })
})

describe('the sandbox button takes a POST from its own page only', () => {
  it('a cross-site POST (Sec-Fetch-Site, or a foreign Origin without it) answers 403 and pays nothing; a same-origin one pays', async () => {
    const invoice = await newInvoice()
    const intentId = await pay(`/invoices/${invoice.id}/pay`, { email: 'payer@example.com' })
    const path = `${server.baseUrl}/checkout/${intentId}/complete`
    const crossSite: Record<string, string>[] = [{ 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, { origin: 'https://evil.example' }, { origin: 'null' }]
    for (const headers of crossSite) {
      const res = await fetch(path, { method: 'POST', redirect: 'manual', headers })
      expect(res.status, JSON.stringify(headers)).toBe(403)
      expect(await res.text()).toContain('a request from another site was refused')
    }
    expect((await getInvoice(invoice.id)).status).toBe('OPEN')
    expect((await getIntent(intentId)).state).toBe('awaiting_funds')
    const own = await fetch(path, { method: 'POST', redirect: 'manual', headers: { 'sec-fetch-site': 'same-origin', origin: server.baseUrl } })
    expect(own.status).toBe(303)
    expect((await getInvoice(invoice.id)).status).toBe('PAID')
  })
})

describe('what a page takes', () => {
  it('a JSON body is read for its text fields only: a number for the email is no email (400), not a failure', async () => {
    const invoice = await newInvoice()
    const res = await fetch(`${server.baseUrl}/invoices/${invoice.id}/pay`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 5 }) })
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('Enter an email address')
  })
})

describe("an invoice's payment link (payment_link: true)", () => {
  it('is made with the invoice, once: an INVOICE link for its total whose page leads to the invoice\'s, which pays it', async () => {
    const invoice = await newInvoice({ payment_link: true })
    expect(invoice.payment_link_id).toMatch(/^[0-9a-f-]{36}$/)
    const link = await getLink(invoice.payment_link_id ?? '')
    expect(link).toMatchObject({ linkType: 'INVOICE', url: `invoice-${invoice.id}`, paymentForId: invoice.id, currency: 'usdc', amount: '10.000000', title: 'March services' })
    expect((await eventsOf<PaymentLink>(key.appId, 'payment_link.created')).filter((event) => event.id === link.id)).toHaveLength(1)
    expect((await eventsOf<Invoice>(key.appId, 'invoice.created')).find((event) => event.id === invoice.id)?.payment_link_id).toBe(link.id)
    // Its page is the invoice's.
    const opened = await page('GET', `/pay/${key.appId}/invoice-${invoice.id}`)
    expect(opened.status).toBe(303)
    expect(opened.location).toBe(`/invoices/${invoice.id}/pay`)
    const intent = await pay(`/invoices/${invoice.id}/pay`, { email: 'payer@example.com' })
    expect((await complete(intent)).status).toBe(303)
    expect((await getInvoice(invoice.id)).status).toBe('PAID')
  })

  it('is not made without payment_link; a PUT that turns it on makes it, and one that keeps it makes no other', async () => {
    const body = { name: 'April services', email: 'billing@example.com', customer_id: customer, currency: 'usdc', items: [{ product_id: product, quantity: 1 }], due_date: '2099-01-31T00:00:00.000Z', delivery: 'EMAIL', payment_methods: ['CRYPTO'], status: 'DRAFT', partial_payment: false }
    const invoice = await created<Invoice>('/api/v0/invoices', { ...body, payment_link: false })
    expect(invoice.payment_link_id).toBeNull()
    const turnedOn = await server.request<Invoice>('PUT', `/api/v0/invoices/${invoice.id}`, { key, body: { ...body, payment_link: true } })
    expect(turnedOn.status, turnedOn.text).toBe(200)
    expect(turnedOn.body.payment_link_id).toMatch(/^[0-9a-f-]{36}$/)
    const again = await server.request<Invoice>('PUT', `/api/v0/invoices/${invoice.id}`, { key, body: { ...body, name: 'April services, revised', payment_link: true } })
    expect(again.body.payment_link_id).toBe(turnedOn.body.payment_link_id)
    const links = await server.database.query<{ n: number | string }>('select count(*) as n from payment_links where payment_for_id = ?', invoice.id)
    expect(Number(links[0]?.n)).toBe(1)
  })
})

describe("a deleted application's invoice", () => {
  it('is kept for audit, but its page answers 404 and takes no payment', async () => {
    const own = await server.createKey({ environment: 'development' })
    const ownCustomer = (await created<{ id: string }>('/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }, own)).id
    const ownProduct = (await created<{ id: string }>('/api/v0/products', { name: 'Widget', price: '10.00' }, own)).id
    const invoice = await newInvoice({}, own, ownCustomer, ownProduct)
    expect((await page('GET', `/invoices/${invoice.id}/pay`)).status).toBe(200)
    await deleteApp(server.app.transact, own.appId)
    expect((await page('GET', `/invoices/${invoice.id}/pay`)).status).toBe(404)
    expect((await page('POST', `/invoices/${invoice.id}/pay`, { email: 'payer@example.com' })).status).toBe(404)
    expect(await intentsOf(own.appId)).toBe(0)
  })

  it('its checkout intents made before the deletion answer 404 and take no payment: the invoice stays OPEN, no event, nothing posted', async () => {
    const own = await server.createKey({ environment: 'development' })
    const ownCustomer = (await created<{ id: string }>('/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }, own)).id
    const ownProduct = (await created<{ id: string }>('/api/v0/products', { name: 'Widget', price: '10.00' }, own)).id
    const invoice = await newInvoice({}, own, ownCustomer, ownProduct)
    const intentId = await pay(`/invoices/${invoice.id}/pay`, { email: 'payer@example.com' })
    expect((await page('GET', `/checkout/${intentId}`)).status).toBe(200)
    await deleteApp(server.app.transact, own.appId)
    const shown = await page('GET', `/checkout/${intentId}`)
    expect(shown.status).toBe(404)
    expect(shown.text).toContain('This payment page does not exist')
    const completed = await complete(intentId)
    expect(completed.status).toBe(404)
    expect(completed.text).toContain('This payment page does not exist')
    const kept = await server.database.query<{ status: string; amount_paid: string }>('select status, amount_paid from invoices where id = ?', invoice.id)
    expect(kept).toEqual([{ status: 'OPEN', amount_paid: '0' }])
    expect(await eventsOf(own.appId, 'invoice.paid')).toEqual([])
    const intent = await server.database.query<{ state: string }>('select state from transfers where id = ?', intentId)
    expect(intent).toEqual([{ state: 'awaiting_funds' }])
    const payment = await server.database.query<{ state: string }>('select state from checkout_payments where transfer_id = ?', intentId)
    expect(payment).toEqual([{ state: 'awaiting_funds' }])
    const entries = await server.database.query<{ n: number | string }>("select count(*) as n from ledger_entries where app_id = ? and reason_id = ?", own.appId, intentId)
    expect(Number(entries[0]?.n)).toBe(0)
  })
})
