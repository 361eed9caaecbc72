import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Invoice } from '../../../src/resources/invoices/schemas.js'
import type { PaymentLink } from '../../../src/resources/payment-links/schemas.js'
import type { Product } from '../../../src/resources/products/schemas.js'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { image, MULTIPART, multipartBody } from '../products/fixtures.js'

/**
 * Every URL the server puts into an answer, an event or a page starts with PUBLIC_URL, never with
 * what a request says about where it was sent (Host, X-Forwarded-Host, X-Forwarded-Proto): a
 * payer or a key holder can't make the server sign or answer a URL of their choosing.
 */

const PUBLIC_URL = 'https://checkout.example.com'
/** What a request may claim; none of it is trusted. */
const FORGED = { host: 'pay.evil.example', 'x-forwarded-host': 'pay.evil.example', 'x-forwarded-proto': 'http' }

let server: TestServer
/** a development key: its hosted payments are sandbox ones, completed by the page's button */
let key: TestKey

interface Raw {
  status: number
  location: string | undefined
  text: string
}

/** A request whose Host header is the caller's to choose (fetch always sends the URL's). */
async function raw(method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<Raw> {
  const url = new URL(server.baseUrl)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await raw(method, path, { ...key.headers, ...FORGED, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body === undefined ? undefined : JSON.stringify(body))
  expect(res.status, res.text).toBeLessThan(300)
  return JSON.parse(res.text) as T
}

async function eventsOf<T>(type: string): Promise<T[]> {
  const rows = await server.database.query<{ payload: string }>('select payload from events where app_id = ? and type = ? order by created_at, id', key.appId, type)
  return rows.map((row) => (JSON.parse(row.payload) as { data: T }).data)
}

/** "Pay" on a link's page with a forged Host: the intent it made. */
async function pay(path: string): Promise<string> {
  const res = await raw('POST', path, { ...FORGED, 'content-type': 'application/x-www-form-urlencoded' }, new URLSearchParams({ email: 'payer@example.com' }).toString())
  expect(res.status, res.text).toBe(303)
  // A redirect on this server is a path: the browser keeps the origin it used.
  expect(res.location).toMatch(/^\/checkout\/[0-9a-f-]{36}$/)
  return (res.location ?? '').split('/').at(-1) ?? ''
}

beforeAll(async () => {
  server = await startTestServer({ config: { publicUrl: PUBLIC_URL } })
  key = await server.createKey({ environment: 'development' })
})
afterAll(async () => server?.close())

describe('URLs come from PUBLIC_URL, whatever Host or X-Forwarded-* a request sends', () => {
  it("a payment link's checkout_url in every answer and in payment_link.created / updated", async () => {
    const link = await api<PaymentLink>('POST', '/api/v0/payment-links', { title: 'Support us', url: 'support-us', linkType: 'DONATION', allowQuantityAdjustment: false, collectTax: false, collectAddress: false, allowMobilePayment: false, currency: 'usdc' })
    const expected = `${PUBLIC_URL}/pay/${key.appId}/support-us`
    expect(link.checkout_url).toBe(expected)
    expect((await api<PaymentLink>('GET', `/api/v0/payment-links/${link.id}`)).checkout_url).toBe(expected)
    expect((await api<{ data: PaymentLink[] }>('GET', '/api/v0/payment-links')).data.map((listed) => listed.checkout_url)).toEqual([expected])
    expect((await api<PaymentLink>('PUT', `/api/v0/payment-links/${link.id}`, { title: 'Support us more' })).checkout_url).toBe(expected)
    expect((await eventsOf<PaymentLink>('payment_link.created')).find((data) => data.id === link.id)?.checkout_url).toBe(expected)
    expect((await eventsOf<PaymentLink>('payment_link.updated')).find((data) => data.id === link.id)?.checkout_url).toBe(expected)
  })

  it("the sandbox button's payment_link.paid: the checkout_url signed into the event is PUBLIC_URL's", async () => {
    const link = await api<PaymentLink>('POST', '/api/v0/payment-links', { title: 'Tip jar', url: 'tip-jar', linkType: 'DONATION', allowQuantityAdjustment: false, collectTax: false, collectAddress: false, allowMobilePayment: false, currency: 'usdc', amount: '3' })
    const intentId = await pay(`/pay/${key.appId}/tip-jar`)
    const completed = await raw('POST', `/checkout/${intentId}/complete`, FORGED)
    expect(completed.status, completed.text).toBe(303)
    expect(completed.location).toBe(`/checkout/${intentId}`)
    const paid = (await eventsOf<PaymentLink>('payment_link.paid')).find((data) => data.id === link.id)
    expect(paid?.checkout_url).toBe(`${PUBLIC_URL}/pay/${key.appId}/tip-jar`)
    const events = await server.database.query<{ payload: string }>('select payload from events where app_id = ?', key.appId)
    expect(events.filter((event) => event.payload.includes('evil'))).toEqual([])
  })

  it("simulate_funds through the API gives the same absolute checkout_url (not a bare path)", async () => {
    await api<PaymentLink>('POST', '/api/v0/payment-links', { title: 'Pledge', url: 'pledge', linkType: 'DONATION', allowQuantityAdjustment: false, collectTax: false, collectAddress: false, allowMobilePayment: false, currency: 'usdc', amount: '4' })
    const intentId = await pay(`/pay/${key.appId}/pledge`)
    await api('POST', `/api/v0/payment-intents/${intentId}/simulate_funds`, {})
    const paid = (await eventsOf<PaymentLink & { payment: { payment_intent_id: string } }>('payment_link.paid')).find((data) => data.payment.payment_intent_id === intentId)
    expect(paid?.checkout_url).toBe(`${PUBLIC_URL}/pay/${key.appId}/pledge`)
  })

  it("an invoice's own payment link: payment_link.created carries PUBLIC_URL's checkout_url", async () => {
    const customer = await api<{ id: string }>('POST', '/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' })
    const product = await api<{ id: string }>('POST', '/api/v0/products', { name: 'Widget', price: '10.00' })
    const invoice = await api<Invoice>('POST', '/api/v0/invoices', {
      name: 'March services',
      email: 'billing@example.com',
      customer_id: customer.id,
      currency: 'usdc',
      items: [{ product_id: product.id, quantity: 1 }],
      due_date: '2099-01-31T00:00:00.000Z',
      delivery: 'EMAIL',
      payment_link: true,
      payment_methods: ['CRYPTO'],
      status: 'OPEN',
      partial_payment: false,
    })
    const link = (await eventsOf<PaymentLink>('payment_link.created')).find((data) => data.id === invoice.payment_link_id)
    expect(link?.checkout_url).toBe(`${PUBLIC_URL}/pay/${key.appId}/invoice-${invoice.id}`)
  })

  it("a product's uploaded image URLs, in its answers and product.created", async () => {
    const body = multipartBody([
      { name: 'name', value: 'Poster' },
      { name: 'price', value: '5.00' },
      { name: 'images', filename: 'poster.png', content: image('png'), type: 'image/png' },
    ])
    const res = await raw('POST', '/api/v0/products', { ...key.headers, ...FORGED, 'content-type': MULTIPART }, body)
    expect(res.status, res.text).toBe(201)
    const product = JSON.parse(res.text) as Product
    const pattern = new RegExp(`^${PUBLIC_URL}/api/v0/products/${product.id}/images/[0-9a-f-]{36}$`)
    expect(product.images).toHaveLength(1)
    expect(product.images[0]).toMatch(pattern)
    expect((await api<Product>('GET', `/api/v0/products/${product.id}`)).images[0]).toMatch(pattern)
    expect((await eventsOf<Product>('product.created')).find((data) => data.id === product.id)?.images[0]).toMatch(pattern)
  })
})
