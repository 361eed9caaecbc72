import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Invoice } from '../../../src/resources/invoices/schemas.js'
import { MISSING_UUID, startTestServer, type ApiResponse, type TestKey, type TestServer } from '../../helper.js'

interface ErrorBody {
  statusCode: number
  error: string
  message: string
}

interface InvoiceList {
  data: Invoice[]
  total: number
  skip: number
  take: number
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const DUE = '2027-01-31T00:00:00.000Z'

let server: TestServer
let key: TestKey
let otherKey: TestKey
/** a customer and a 10.00 USD product of key's application */
let customer: string
let product: string
/** another application's customer, product and tax */
let otherCustomer: string
let otherProduct: string
let otherTax: string

function badRequest(message: string): ErrorBody {
  return { statusCode: 400, error: 'Bad Request', message }
}
function conflict(message: string): ErrorBody {
  return { statusCode: 409, error: 'Conflict', message }
}
const NOT_FOUND: ErrorBody = { statusCode: 404, error: 'Not Found', message: 'Invoice not found' }
const CUSTOMER_NOT_FOUND: ErrorBody = { statusCode: 404, error: 'Not Found', message: 'Customer not found' }
const TAX_NOT_FOUND: ErrorBody = { statusCode: 404, error: 'Not Found', message: 'Tax not found' }

async function created<T extends { id: string }>(caller: TestKey, path: string, body: Record<string, unknown>): Promise<T> {
  const res = await server.request<T>('POST', path, { key: caller, body })
  expect(res.status, res.text).toBe(201)
  return res.body
}

const newCustomer = async (caller: TestKey) => (await created(caller, '/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' })).id
const newProduct = async (caller: TestKey, fields: Record<string, unknown> = {}) => (await created(caller, '/api/v0/products', { name: 'Widget', price: '10.00', ...fields })).id
const newTax = async (caller: TestKey, percentage: number, fields: Record<string, unknown> = {}) => (await created(caller, '/api/v0/taxes', { name: 'VAT', percentage, ...fields })).id

/** A CreateInvoiceDto with every required field: one 10.00 USD product, OPEN, in usdc. */
function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'March services',
    email: 'billing@example.com',
    customer_id: customer,
    currency: 'usdc',
    items: [{ product_id: product, quantity: 1 }],
    due_date: DUE,
    delivery: 'EMAIL',
    payment_link: false,
    payment_methods: ['CRYPTO'],
    status: 'OPEN',
    partial_payment: false,
    ...overrides,
  }
}

function post(fields: Record<string, unknown>, caller: TestKey = key): Promise<ApiResponse<Invoice | ErrorBody>> {
  return server.request<Invoice | ErrorBody>('POST', '/api/v0/invoices', { key: caller, body: fields })
}

async function create(fields: Record<string, unknown> = {}, caller: TestKey = key): Promise<Invoice> {
  const res = await post(body(fields), caller)
  expect(res.status, res.text).toBe(201)
  return res.body as Invoice
}

function put(id: string, fields: Record<string, unknown>, caller: TestKey = key): Promise<ApiResponse<Invoice | ErrorBody>> {
  return server.request<Invoice | ErrorBody>('PUT', `/api/v0/invoices/${id}`, { key: caller, body: fields })
}

async function read(id: string): Promise<Invoice> {
  const res = await server.request<Invoice>('GET', `/api/v0/invoices/${id}`, { key })
  expect(res.status, res.text).toBe(200)
  return res.body
}

async function invoiceCount(appId: string): Promise<number> {
  const rows = await server.database.query<{ n: number | string }>('select count(*) as n from invoices where app_id = ?', appId)
  return Number(rows[0]?.n)
}

async function eventsOf(appId: string, type: string): Promise<Array<{ type: string; data: Invoice }>> {
  const rows = await server.database.query<{ payload: string }>('select payload from events where app_id = ? and type = ? order by created_at, id', appId, type)
  return rows.map((row) => JSON.parse(row.payload) as { type: string; data: Invoice })
}

/** Sets what only payments set (none exist yet): the status and the amount paid. */
async function paid(id: string, status: string, amountPaidCents: string): Promise<void> {
  await server.app.db.updateTable('invoices').set({ status, amount_paid: amountPaidCents }).where('id', '=', id).execute()
}

beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
  otherKey = await server.createKey()
  customer = await newCustomer(key)
  product = await newProduct(key)
  otherCustomer = await newCustomer(otherKey)
  otherProduct = await newProduct(otherKey)
  otherTax = await newTax(otherKey, 10)
})
afterAll(async () => server.close())

describe('POST /api/v0/invoices', () => {
  it('creates an invoice with every field, and answers the invoice object', async () => {
    const tax = await newTax(key, 7.25, { name: 'Sales tax' })
    const second = await newProduct(key, { name: 'Gadget', price: '0.10' })
    const invoice = await create({
      items: [
        { product_id: product, quantity: 2 },
        { product_id: second, quantity: 3 },
      ],
      taxId: tax,
      status: 'DRAFT',
      delivery: 'MANUALLY',
      payment_link: true,
      partial_payment: true,
      payment_methods: ['ACH', 'CRYPTO'],
      address: '1 Main St\nSpringfield',
      phone_number: '+15550100',
      send_date: '2027-01-01T09:30:00+01:00',
      logo: 'https://cdn.example.com/logo.png',
    })
    expect(invoice).toEqual({
      id: expect.stringMatching(UUID),
      customer_id: customer,
      name: 'March services',
      email: 'billing@example.com',
      currency: 'usdc',
      status: 'DRAFT',
      lines: [
        { product_id: product, name: 'Widget', quantity: 2, unit_price: '10.00', amount: '20.00' },
        { product_id: second, name: 'Gadget', quantity: 3, unit_price: '0.10', amount: '0.30' },
      ],
      items: [
        { product_id: product, quantity: 2 },
        { product_id: second, quantity: 3 },
      ],
      subtotal: '20.30',
      // 20.30 × 7.25 % = 1.471750, rounded half up to the cent
      tax: { id: tax, name: 'Sales tax', percentage: 7.25 },
      taxId: tax,
      tax_amount: '1.47',
      total: '21.77',
      amount_paid: '0.00',
      amount_due: '21.77',
      due_date: DUE,
      send_date: '2027-01-01T08:30:00.000Z',
      delivery: 'MANUALLY',
      payment_methods: ['ACH', 'CRYPTO'],
      payment_link: true,
      // its payment link, made with it (test/resources/checkout: an INVOICE link to its page)
      payment_link_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      hosted_invoice_url: null,
      partial_payment: true,
      // made with a production key: live money (its page takes no sandbox payment)
      livemode: true,
      address: '1 Main St\nSpringfield',
      phone_number: '+15550100',
      logo: 'https://cdn.example.com/logo.png',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    })
    expect(await read(invoice.id)).toEqual(invoice)
  })

  it('the optional fields left out are null; no tax is a tax of 0.00', async () => {
    const invoice = await create()
    expect(invoice).toMatchObject({ tax: null, tax_amount: '0.00', subtotal: '10.00', total: '10.00', amount_paid: '0.00', amount_due: '10.00', send_date: null, address: null, phone_number: null, logo: null, payment_link_id: null })
  })

  it('null optional fields read as absent, "" clears a text field', async () => {
    const invoice = await create({ address: null, phone_number: '', logo: '', taxId: null, send_date: null })
    expect(invoice).toMatchObject({ address: null, phone_number: null, logo: null, tax: null, send_date: null })
  })

  it('items may name the product as productId, as the payment-link variant spells it', async () => {
    const invoice = await create({ items: [{ productId: product, quantity: 4 }] })
    expect(invoice.lines).toEqual([{ product_id: product, name: 'Widget', quantity: 4, unit_price: '10.00', amount: '40.00' }])
  })

  it('an item naming its product both ways, or neither, is refused', async () => {
    const before = await invoiceCount(key.appId)
    expect((await post(body({ items: [{ product_id: product, productId: product, quantity: 1 }] }))).body).toEqual(badRequest('items[0] names its product twice: give product_id or productId, not both'))
    expect((await post(body({ items: [{ product_id: product, quantity: 1 }, { quantity: 1 }] }))).body).toEqual(badRequest('items[1].product_id is required'))
    expect((await post(body({ items: [{ product_id: product, quantity: 1, price: '1.00' }] }))).body).toEqual(badRequest('property items[0].price should not exist'))
    expect(await invoiceCount(key.appId)).toBe(before)
  })

  it('emits invoice.created with the invoice; a refused create writes no invoice and no event', async () => {
    const own = await server.createKey()
    const ownCustomer = await newCustomer(own)
    const ownProduct = await newProduct(own)
    const invoice = await create({ customer_id: ownCustomer, items: [{ product_id: ownProduct, quantity: 1 }] }, own)
    expect(await eventsOf(own.appId, 'invoice.created')).toEqual([expect.objectContaining({ type: 'invoice.created', data: invoice })])
    const refused = await post(body({ customer_id: ownCustomer, items: [{ product_id: ownProduct, quantity: 0 }] }), own)
    expect(refused.status).toBe(400)
    const missing = await post(body({ customer_id: ownCustomer, items: [{ product_id: MISSING_UUID, quantity: 1 }] }), own)
    expect(missing.status).toBe(400)
    expect(await eventsOf(own.appId, 'invoice.created')).toHaveLength(1)
    expect(await invoiceCount(own.appId)).toBe(1)
  })

  it('an idempotency-key replays the first answer: one invoice, one event', async () => {
    const own = await server.createKey()
    const fields = body({ customer_id: await newCustomer(own), items: [{ product_id: await newProduct(own), quantity: 1 }] })
    const headers = { 'idempotency-key': crypto.randomUUID() }
    const first = await server.request<Invoice>('POST', '/api/v0/invoices', { key: own, body: fields, headers })
    const again = await server.request<Invoice>('POST', '/api/v0/invoices', { key: own, body: fields, headers })
    expect([first.status, again.status]).toEqual([201, 201])
    expect(again.body).toEqual(first.body)
    expect(await invoiceCount(own.appId)).toBe(1)
    expect(await eventsOf(own.appId, 'invoice.created')).toHaveLength(1)
  })

  it('a development key creates and reads invoices too', async () => {
    const development = await server.createKey({ appId: key.appId, environment: 'development' })
    const invoice = await create({}, development)
    expect((await server.request('GET', `/api/v0/invoices/${invoice.id}`, { key: development })).status).toBe(200)
    expect((await read(invoice.id)).id).toBe(invoice.id)
  })

  describe('validation, each rule on both sides of its boundary', () => {
    it('every required field is required', async () => {
      for (const field of ['name', 'email', 'customer_id', 'currency', 'items', 'due_date', 'delivery', 'payment_link', 'payment_methods', 'status', 'partial_payment']) {
        const fields = body()
        delete fields[field]
        expect((await post(fields)).body, field).toEqual(badRequest(`${field} is required`))
      }
    })

    it('an unknown field is refused; the body must be an object', async () => {
      expect((await post(body({ products: [] }))).body).toEqual(badRequest('property products should not exist'))
      expect((await server.request('POST', '/api/v0/invoices', { key, body: '[]' })).body).toEqual(badRequest('Request body must be a JSON object'))
    })

    it('name: 1 to 255 characters', async () => {
      expect((await post(body({ name: '' }))).body).toEqual(badRequest('name should not be empty'))
      expect((await post(body({ name: '   ' }))).status).toBe(400)
      expect((await create({ name: 'x' })).name).toBe('x')
      expect((await create({ name: 'n'.repeat(255) })).name).toHaveLength(255)
      expect((await post(body({ name: 'n'.repeat(256) }))).body).toEqual(badRequest('name must be shorter than or equal to 255 characters'))
    })

    it('email: an email address, at most 254 characters', async () => {
      expect((await post(body({ email: 'not-an-email' }))).body).toEqual(badRequest('email must be an email'))
      const longest = `${'a'.repeat(64)}@${'b'.repeat(185)}.com`
      expect(longest).toHaveLength(254)
      expect((await create({ email: longest })).email).toBe(longest)
      expect((await post(body({ email: `a${longest}` }))).body).toEqual(badRequest('email must be shorter than or equal to 254 characters'))
    })

    it("customer_id: a UUID naming one of the application's customers (another's is 404)", async () => {
      expect((await post(body({ customer_id: 'cus_1' }))).body).toEqual(badRequest('customer_id must be a valid uuid'))
      expect((await post(body({ customer_id: MISSING_UUID }))).body).toEqual(CUSTOMER_NOT_FOUND)
      expect((await post(body({ customer_id: otherCustomer }))).body).toEqual(CUSTOMER_NOT_FOUND)
      expect((await create({ customer_id: customer.toUpperCase() })).customer_id).toBe(customer)
    })

    it('currency: usdc or eurc', async () => {
      expect((await post(body({ currency: 'usd' }))).body).toEqual(badRequest('currency must be one of the following values: usdc, eurc'))
      expect((await post(body({ currency: 'USDC' }))).status).toBe(400)
    })

    it(`items: 1 to 100 lines`, async () => {
      expect((await post(body({ items: [] }))).body).toEqual(badRequest('items must NOT have fewer than 1 items'))
      const hundred = await create({ items: Array.from({ length: 100 }, () => ({ product_id: product, quantity: 1 })) })
      expect(hundred.lines).toHaveLength(100)
      expect(hundred.total).toBe('1000.00')
      expect((await post(body({ items: Array.from({ length: 101 }, () => ({ product_id: product, quantity: 1 })) }))).body).toEqual(badRequest('items must contain no more than 100 elements'))
      expect((await post(body({ items: { product_id: product, quantity: 1 } }))).body).toEqual(badRequest('items must be an array'))
    })

    it('quantity: an integer from 1 to 1000000', async () => {
      expect((await post(body({ items: [{ product_id: product, quantity: 0 }] }))).body).toEqual(badRequest('items[0].quantity must not be less than 1'))
      expect((await create({ items: [{ product_id: product, quantity: 1 }] })).lines[0]?.quantity).toBe(1)
      expect((await create({ items: [{ product_id: product, quantity: 1_000_000 }] })).total).toBe('10000000.00')
      expect((await post(body({ items: [{ product_id: product, quantity: 1_000_001 }] }))).body).toEqual(badRequest('items[0].quantity must not be greater than 1000000'))
      expect((await post(body({ items: [{ product_id: product, quantity: 1.5 }] }))).body).toEqual(badRequest('items[0].quantity must be an integer number'))
      expect((await post(body({ items: [{ product_id: product, quantity: '2' }] }))).body).toEqual(badRequest('items[0].quantity must be an integer number'))
      expect((await post(body({ items: [{ product_id: product, quantity: -1 }] }))).status).toBe(400)
      expect((await post(body({ items: [{ product_id: product } ] }))).body).toEqual(badRequest('items[0].quantity is required'))
    })

    it("each item's product: one of the application's, ACTIVE, else a 400 naming the item", async () => {
      const before = await invoiceCount(key.appId)
      expect((await post(body({ items: [{ product_id: product, quantity: 1 }, { product_id: MISSING_UUID, quantity: 1 }] }))).body).toEqual(badRequest(`items[1]: product ${MISSING_UUID} not found`))
      expect((await post(body({ items: [{ product_id: otherProduct, quantity: 1 }] }))).body).toEqual(badRequest(`items[0]: product ${otherProduct} not found`))
      expect((await post(body({ items: [{ product_id: 'prod_1', quantity: 1 }] }))).body).toEqual(badRequest('items[0].product_id must be a valid uuid'))
      const inactive = await newProduct(key, { status: 'INACTIVE' })
      expect((await post(body({ items: [{ product_id: inactive, quantity: 1 }] }))).body).toEqual(badRequest(`items[0]: product ${inactive} is INACTIVE, and only an ACTIVE product can be invoiced`))
      expect(await invoiceCount(key.appId)).toBe(before)
    })

    it('currency rule: USD products on a usdc invoice, EUR on eurc, 1:1; any other currency is a 400 naming the item', async () => {
      const euro = await newProduct(key, { name: 'Euro widget', price: '12.34', currency: 'EUR' })
      const pound = await newProduct(key, { price: '5.00', currency: 'GBP' })
      const yen = await newProduct(key, { price: '1500', currency: 'JPY' })
      const eurc = await create({ currency: 'eurc', items: [{ product_id: euro, quantity: 2 }] })
      expect(eurc).toMatchObject({ currency: 'eurc', lines: [{ unit_price: '12.34', amount: '24.68' }], total: '24.68' })
      expect((await post(body({ items: [{ product_id: product, quantity: 1 }, { product_id: euro, quantity: 1 }] }))).body).toEqual(
        badRequest(`items[1]: product ${euro} is priced in EUR (12.34 EUR); a usdc invoice takes products priced in USD`),
      )
      expect((await post(body({ currency: 'eurc' }))).body).toEqual(badRequest(`items[0]: product ${product} is priced in USD (10.00 USD); a eurc invoice takes products priced in EUR`))
      expect((await post(body({ items: [{ product_id: pound, quantity: 1 }] }))).body).toEqual(badRequest(`items[0]: product ${pound} is priced in GBP (5.00 GBP); a usdc invoice takes products priced in USD`))
      expect((await post(body({ currency: 'eurc', items: [{ product_id: yen, quantity: 1 }] }))).body).toEqual(badRequest(`items[0]: product ${yen} is priced in JPY (1500 JPY); a eurc invoice takes products priced in EUR`))
    })

    it('due_date and send_date: real date-times, send_date not after due_date', async () => {
      expect((await post(body({ due_date: 'tomorrow' }))).body).toEqual(badRequest('due_date must be a valid date-time'))
      expect((await post(body({ due_date: '2027-02-29T00:00:00Z' }))).body).toEqual(badRequest('due_date must be a valid date-time'))
      expect((await post(body({ due_date: '2027-01-31T24:00:00Z' }))).body).toEqual(badRequest('due_date must be a valid date-time'))
      expect((await create({ due_date: '2028-02-29T23:59:59Z' })).due_date).toBe('2028-02-29T23:59:59.000Z')
      expect((await create({ due_date: '2027-01-31T00:00:00-05:00' })).due_date).toBe('2027-01-31T05:00:00.000Z')
      expect((await post(body({ send_date: '2027-01-31' }))).body).toEqual(badRequest('send_date must be a valid date-time'))
      expect((await create({ send_date: DUE })).send_date).toBe(DUE)
      expect((await post(body({ send_date: '2027-01-31T00:00:00.001Z' }))).body).toEqual(badRequest('send_date must not be after due_date'))
    })

    it('delivery: EMAIL or MANUALLY', async () => {
      expect((await post(body({ delivery: 'POST' }))).body).toEqual(badRequest('delivery must be one of the following values: EMAIL, MANUALLY'))
      expect((await create({ delivery: 'MANUALLY' })).delivery).toBe('MANUALLY')
    })

    it('payment_methods: 1 to 6 of the six methods, each once', async () => {
      expect((await post(body({ payment_methods: [] }))).body).toEqual(badRequest('payment_methods must NOT have fewer than 1 items'))
      const all = ['ACH', 'BANK_TRANSFER', 'CREDIT_CARD', 'CASH', 'MOBILE_MONEY', 'CRYPTO']
      expect((await create({ payment_methods: all })).payment_methods).toEqual(all)
      expect((await post(body({ payment_methods: [...all, 'ACH'] }))).body).toEqual(badRequest('payment_methods must contain no more than 6 elements'))
      expect((await post(body({ payment_methods: ['ACH', 'ACH'] }))).status).toBe(400)
      expect((await post(body({ payment_methods: ['PAYPAL'] }))).body).toEqual(
        badRequest('payment_methods[0] must be one of the following values: ACH, BANK_TRANSFER, CREDIT_CARD, CASH, MOBILE_MONEY, CRYPTO'),
      )
    })

    it('payment_link and partial_payment: booleans, stored as given', async () => {
      expect((await post(body({ payment_link: 'true' }))).body).toEqual(badRequest('payment_link must be a boolean value'))
      expect((await post(body({ partial_payment: 1 }))).body).toEqual(badRequest('partial_payment must be a boolean value'))
      expect(await create({ payment_link: true, partial_payment: true })).toMatchObject({ payment_link: true, partial_payment: true, payment_link_id: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    })

    it('status on create: DRAFT or OPEN; PASTDUE, PAID and PARTIALLYPAID are refused', async () => {
      expect((await create({ status: 'DRAFT' })).status).toBe('DRAFT')
      expect((await create({ status: 'OPEN' })).status).toBe('OPEN')
      expect((await post(body({ status: 'PASTDUE' }))).body).toEqual(badRequest('status must be DRAFT or OPEN when an invoice is created (PASTDUE is set by a PUT on an OPEN invoice)'))
      expect((await post(body({ status: 'PAID' }))).body).toEqual(badRequest('status must be DRAFT or OPEN when an invoice is created (PAID is set by payments)'))
      expect((await post(body({ status: 'PARTIALLYPAID' }))).body).toEqual(badRequest('status must be DRAFT or OPEN when an invoice is created (PARTIALLYPAID is set by payments)'))
      expect((await post(body({ status: 'VOID' }))).status).toBe(400)
    })

    it('address up to 1000 characters (line breaks allowed), phone_number up to 50', async () => {
      expect((await create({ address: 'a'.repeat(1000) })).address).toHaveLength(1000)
      expect((await post(body({ address: 'a'.repeat(1001) }))).body).toEqual(badRequest('address must be shorter than or equal to 1000 characters'))
      expect((await create({ phone_number: '1'.repeat(50) })).phone_number).toHaveLength(50)
      expect((await post(body({ phone_number: '1'.repeat(51) }))).body).toEqual(badRequest('phone_number must be shorter than or equal to 50 characters'))
      expect((await post(body({ phone_number: '+1\n555' }))).status).toBe(400)
    })

    it('logo: an http or https URL, at most 2048 characters', async () => {
      expect((await post(body({ logo: 'ftp://example.com/logo.png' }))).body).toEqual(badRequest('logo must be an http or https URL'))
      expect((await post(body({ logo: 'logo.png' }))).body).toEqual(badRequest('logo must be an http or https URL'))
      const longest = `https://example.com/${'a'.repeat(2048 - 20)}`
      expect((await create({ logo: longest })).logo).toBe(longest)
      expect((await post(body({ logo: `${longest}a` }))).body).toEqual(badRequest('logo must be shorter than or equal to 2048 characters'))
    })

    it("taxId: one of the application's taxes (another's is 404), active", async () => {
      expect((await post(body({ taxId: 'vat' }))).body).toEqual(badRequest('taxId must be a valid uuid'))
      expect((await post(body({ taxId: MISSING_UUID }))).body).toEqual(TAX_NOT_FOUND)
      expect((await post(body({ taxId: otherTax }))).body).toEqual(TAX_NOT_FOUND)
      const inactive = await newTax(key, 5, { active: false })
      expect((await post(body({ taxId: inactive }))).body).toEqual(badRequest(`taxId: tax ${inactive} is not active`))
    })

    it('the total: at most 1000000000.00, tax included', async () => {
      const big = await newProduct(key, { price: '1000000.00' })
      const cent = await newProduct(key, { price: '0.01' })
      expect((await create({ items: [{ product_id: big, quantity: 1000 }] })).total).toBe('1000000000.00')
      expect((await post(body({ items: [{ product_id: big, quantity: 1000 }, { product_id: cent, quantity: 1 }] }))).body).toEqual(
        badRequest("The invoice's total would be 1000000000.01, more than 1000000000.00, the most one invoice may be"),
      )
      const onePercent = await newTax(key, 1)
      expect((await create({ items: [{ product_id: big, quantity: 990 }], taxId: onePercent })).total).toBe('999900000.00')
      expect((await post(body({ items: [{ product_id: big, quantity: 991 }], taxId: onePercent }))).body).toEqual(
        badRequest("The invoice's total would be 1000910000.00, more than 1000000000.00, the most one invoice may be"),
      )
    })
  })
})

describe('the amounts: exact, one rounding (the tax on the subtotal, half up to the cent)', () => {
  async function totals(prices: Array<[string, number]>, percentage?: number) {
    const items = []
    for (const [price, quantity] of prices) items.push({ product_id: await newProduct(key, { price }), quantity })
    const taxId = percentage === undefined ? undefined : await newTax(key, percentage)
    const invoice = await create({ items, ...(taxId === undefined ? {} : { taxId }) })
    return { subtotal: invoice.subtotal, tax: invoice.tax_amount, total: invoice.total, due: invoice.amount_due }
  }

  it('lines are price × quantity, the subtotal their sum, exactly', async () => {
    expect(await totals([['19.99', 3], ['0.01', 7], ['99999999.99', 9]])).toEqual({ subtotal: '900000059.95', tax: '0.00', total: '900000059.95', due: '900000059.95' })
  })

  it('0.1 + 0.2 is 0.30', async () => {
    expect(await totals([['0.10', 1], ['0.20', 1]])).toEqual({ subtotal: '0.30', tax: '0.00', total: '0.30', due: '0.30' })
  })

  it('half a cent rounds up, just under half a cent rounds down', async () => {
    // 0.10 × 5 % = 0.005 → 0.01; 0.09 × 5 % = 0.0045 → 0.00
    expect((await totals([['0.10', 1]], 5)).tax).toBe('0.01')
    expect((await totals([['0.09', 1]], 5)).tax).toBe('0.00')
    // 1.00 × 0.5 % = 0.005 → 0.01; 1.00 × 0.4999 % = 0.004999 → 0.00
    expect((await totals([['1.00', 1]], 0.5)).tax).toBe('0.01')
    expect((await totals([['1.00', 1]], 0.4999)).tax).toBe('0.00')
    // 2.50 × 15 % = 0.375 → 0.38; 2.30 × 15 % = 0.345 → 0.35
    expect((await totals([['2.50', 1]], 15)).tax).toBe('0.38')
    expect((await totals([['2.30', 1]], 15)).tax).toBe('0.35')
  })

  it('the tax is computed once on the subtotal, not line by line', async () => {
    // three lines of 0.10 at 5 %: 0.015 on the subtotal → 0.02 (line by line it would be 3 × 0.01)
    expect(await totals([['0.10', 1], ['0.10', 1], ['0.10', 1]], 5)).toEqual({ subtotal: '0.30', tax: '0.02', total: '0.32', due: '0.32' })
  })

  it('the percentage is the decimal the tax was given, not its binary double', async () => {
    // 1.005 is stored as 1.00499999999999989...: 100.00 × 1.005 % = 1.005 → 1.01 (a float would give 1.00)
    expect((await totals([['100.00', 1]], 1.005)).tax).toBe('1.01')
    // 7.15 % of 10.00 = 0.715 → 0.72 (a float: 0.7150000000000001, or 0.71 with 7.15 * 10 / 100 rounded)
    expect((await totals([['10.00', 1]], 7.15)).tax).toBe('0.72')
    expect((await totals([['333.33', 3]], 8.875)).tax).toBe('88.75')
  })

  it('0 % and 100 %', async () => {
    expect(await totals([['12.34', 1]], 0)).toEqual({ subtotal: '12.34', tax: '0.00', total: '12.34', due: '12.34' })
    expect(await totals([['12.34', 1]], 100)).toEqual({ subtotal: '12.34', tax: '12.34', total: '24.68', due: '24.68' })
  })
})

describe('frozen prices', () => {
  it("a product's price or name changing later does not change an issued invoice, nor does a PUT resending it", async () => {
    const item = await newProduct(key, { name: 'Consulting', price: '100.00' })
    const tax = await newTax(key, 10)
    const invoice = await create({ items: [{ product_id: item, quantity: 2 }], taxId: tax })
    expect(invoice).toMatchObject({ subtotal: '200.00', tax_amount: '20.00', total: '220.00' })
    expect((await server.request('PUT', `/api/v0/products/${item}`, { key, body: { name: 'Renamed', price: '150.00' } })).status).toBe(200)
    expect((await server.request('PUT', `/api/v0/taxes/${tax}`, { key, body: { percentage: 20 } })).status).toBe(200)
    expect(await read(invoice.id)).toEqual(invoice)
    const resent = await put(invoice.id, body({ items: [{ product_id: item, quantity: 2 }], taxId: tax, name: 'Renamed invoice' }))
    expect(resent.status, resent.text).toBe(200)
    expect(resent.body).toMatchObject({ name: 'Renamed invoice', lines: [{ name: 'Consulting', unit_price: '100.00', amount: '200.00' }], tax: { percentage: 10 }, total: '220.00' })
  })

  it('a deleted product stays on the invoice, and the invoice can still be resent', async () => {
    const item = await newProduct(key, { name: 'Gone soon', price: '3.00' })
    const invoice = await create({ items: [{ product_id: item, quantity: 1 }] })
    expect((await server.request('DELETE', `/api/v0/products/${item}`, { key })).status).toBe(200)
    expect((await read(invoice.id)).lines).toEqual([{ product_id: item, name: 'Gone soon', quantity: 1, unit_price: '3.00', amount: '3.00' }])
    const resent = await put(invoice.id, body({ items: [{ product_id: item, quantity: 1 }], status: 'PASTDUE' }))
    expect(resent.status, resent.text).toBe(200)
    expect(resent.body).toMatchObject({ status: 'PASTDUE', total: '3.00' })
  })

  it('a DRAFT keeps its prices when resent, and is re-priced from the products when its items change', async () => {
    const item = await newProduct(key, { price: '5.00' })
    const draft = await create({ status: 'DRAFT', items: [{ product_id: item, quantity: 1 }] })
    await server.request('PUT', `/api/v0/products/${item}`, { key, body: { price: '6.00' } })
    const kept = await put(draft.id, body({ status: 'DRAFT', items: [{ product_id: item, quantity: 1 }], name: 'kept' }))
    expect(kept.body).toMatchObject({ name: 'kept', lines: [{ unit_price: '5.00' }], total: '5.00' })
    const repriced = await put(draft.id, body({ status: 'DRAFT', items: [{ product_id: item, quantity: 2 }] }))
    expect(repriced.body).toMatchObject({ lines: [{ unit_price: '6.00', quantity: 2, amount: '12.00' }], total: '12.00' })
  })
})

describe('PUT /api/v0/invoices/:id', () => {
  it('replaces the fields, emits invoice.updated, and answers the invoice', async () => {
    const own = await server.createKey()
    const ownCustomer = await newCustomer(own)
    const ownProduct = await newProduct(own)
    const base = { customer_id: ownCustomer, items: [{ product_id: ownProduct, quantity: 1 }] }
    const invoice = await create(base, own)
    await new Promise((resolve) => setTimeout(resolve, 5))
    const res = await put(invoice.id, body({ ...base, name: 'New name', email: 'new@example.com', due_date: '2027-03-01T00:00:00Z', delivery: 'MANUALLY', payment_methods: ['CASH'], payment_link: true, partial_payment: true, address: 'Here' }), own)
    expect(res.status, res.text).toBe(200)
    const updated = res.body as Invoice
    expect(updated).toEqual({
      ...invoice,
      name: 'New name',
      email: 'new@example.com',
      due_date: '2027-03-01T00:00:00.000Z',
      delivery: 'MANUALLY',
      payment_methods: ['CASH'],
      payment_link: true,
      payment_link_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      partial_payment: true,
      address: 'Here',
      updated_at: expect.stringMatching(ISO_MS),
    })
    expect(updated.updated_at > invoice.updated_at).toBe(true)
    expect(await eventsOf(own.appId, 'invoice.updated')).toEqual([expect.objectContaining({ type: 'invoice.updated', data: updated })])
  })

  it('the whole body is the invoice: an optional field left out is cleared', async () => {
    const invoice = await create({ address: 'Somewhere', phone_number: '+1555', logo: 'https://example.com/l.png', send_date: '2027-01-01T00:00:00Z' })
    const res = await put(invoice.id, body())
    expect(res.body).toMatchObject({ address: null, phone_number: null, logo: null, send_date: null })
  })

  it('the same body again changes nothing: no event, updated_at as it was', async () => {
    const own = await server.createKey()
    const ownCustomer = await newCustomer(own)
    const ownProduct = await newProduct(own)
    const fields = body({ customer_id: ownCustomer, items: [{ product_id: ownProduct, quantity: 3 }], due_date: '2027-01-31T01:00:00+01:00' })
    const invoice = (await post(fields, own)).body as Invoice
    const res = await put(invoice.id, fields, own)
    expect(res.status).toBe(200)
    expect(res.body).toEqual(invoice)
    expect(await eventsOf(own.appId, 'invoice.updated')).toEqual([])
  })

  it('the body is validated as on create', async () => {
    const invoice = await create()
    expect((await put(invoice.id, body({ items: [{ product_id: product, quantity: 0 }] }))).body).toEqual(badRequest('items[0].quantity must not be less than 1'))
    expect((await put(invoice.id, { name: 'only a name' })).status).toBe(400)
    expect((await put(invoice.id, body({ send_date: '2027-02-01T00:00:00Z' }))).body).toEqual(badRequest('send_date must not be after due_date'))
    expect(await read(invoice.id)).toEqual(invoice)
  })

  it('404 for a missing invoice or another application\'s; 400 for an id that is not a UUID', async () => {
    expect((await put(MISSING_UUID, body())).body).toEqual(NOT_FOUND)
    const theirs = await create({ customer_id: otherCustomer, items: [{ product_id: otherProduct, quantity: 1 }] }, otherKey)
    expect((await put(theirs.id, body())).body).toEqual(NOT_FOUND)
    expect((await server.request<Invoice>('GET', `/api/v0/invoices/${theirs.id}`, { key: otherKey })).body).toEqual(theirs)
    expect((await put('inv_1', body())).body).toEqual(badRequest('Invalid invoice ID format'))
  })

  it("a DRAFT's customer, currency, items and tax may change", async () => {
    const draft = await create({ status: 'DRAFT' })
    const second = await newCustomer(key)
    const euro = await newProduct(key, { price: '2.00', currency: 'EUR' })
    const tax = await newTax(key, 50)
    const res = await put(draft.id, body({ status: 'DRAFT', customer_id: second, currency: 'eurc', items: [{ product_id: euro, quantity: 3 }], taxId: tax }))
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ customer_id: second, currency: 'eurc', subtotal: '6.00', tax: { id: tax, percentage: 50 }, tax_amount: '3.00', total: '9.00', amount_due: '9.00' })
    const untaxed = await put(draft.id, body({ status: 'DRAFT', customer_id: second, currency: 'eurc', items: [{ product_id: euro, quantity: 3 }] }))
    expect(untaxed.body).toMatchObject({ tax: null, tax_amount: '0.00', total: '6.00' })
    expect((await put(draft.id, body({ status: 'DRAFT', customer_id: MISSING_UUID }))).body).toEqual(CUSTOMER_NOT_FOUND)
    expect((await put(draft.id, body({ status: 'DRAFT', customer_id: otherCustomer }))).body).toEqual(CUSTOMER_NOT_FOUND)
    expect((await put(draft.id, body({ status: 'DRAFT', taxId: otherTax }))).body).toEqual(TAX_NOT_FOUND)
  })

  it("an issued invoice's customer, currency, items and tax cannot change (409), and nothing is written", async () => {
    const own = await server.createKey()
    const ownCustomer = await newCustomer(own)
    const ownProduct = await newProduct(own)
    const euro = await newProduct(own, { currency: 'EUR' })
    const tax = await newTax(own, 5)
    const base = { customer_id: ownCustomer, items: [{ product_id: ownProduct, quantity: 1 }] }
    for (const status of ['OPEN', 'PASTDUE', 'PARTIALLYPAID'] as const) {
      const invoice = await create({ ...base, status: 'OPEN' }, own)
      if (status === 'PASTDUE') expect((await put(invoice.id, body({ ...base, status }), own)).status).toBe(200)
      if (status === 'PARTIALLYPAID') await paid(invoice.id, status, '400')
      const before = await server.request<Invoice>('GET', `/api/v0/invoices/${invoice.id}`, { key: own })
      const refused = conflict(`The customer, currency, items and tax of an invoice that is ${status} cannot change: only a DRAFT invoice's can`)
      expect((await put(invoice.id, body({ ...base, status, items: [{ product_id: ownProduct, quantity: 2 }] }), own)).body).toEqual(refused)
      expect((await put(invoice.id, body({ ...base, status, items: [...base.items, { product_id: ownProduct, quantity: 1 }] }), own)).body).toEqual(refused)
      expect((await put(invoice.id, body({ ...base, status, currency: 'eurc', items: [{ product_id: euro, quantity: 1 }] }), own)).body).toEqual(refused)
      expect((await put(invoice.id, body({ ...base, status, taxId: tax }), own)).body).toEqual(refused)
      expect((await put(invoice.id, body({ ...base, status, customer_id: await newCustomer(own) }), own)).body).toEqual(refused)
      expect((await server.request('GET', `/api/v0/invoices/${invoice.id}`, { key: own })).body).toEqual(before.body)
    }
    const updates = (await eventsOf(own.appId, 'invoice.updated')).length
    expect(updates).toBe(1)
  })

  describe('the status table', () => {
    type Status = 'DRAFT' | 'OPEN' | 'PASTDUE' | 'PAID' | 'PARTIALLYPAID'
    const STATUSES: Status[] = ['DRAFT', 'OPEN', 'PASTDUE', 'PAID', 'PARTIALLYPAID']
    /** from → to: what a PUT answers (200, or the refusal) */
    const TABLE: Record<Status, Record<Status, number>> = {
      DRAFT: { DRAFT: 200, OPEN: 200, PASTDUE: 409, PAID: 400, PARTIALLYPAID: 400 },
      OPEN: { DRAFT: 200, OPEN: 200, PASTDUE: 200, PAID: 400, PARTIALLYPAID: 400 },
      PASTDUE: { DRAFT: 200, OPEN: 200, PASTDUE: 200, PAID: 400, PARTIALLYPAID: 400 },
      PARTIALLYPAID: { DRAFT: 409, OPEN: 409, PASTDUE: 409, PAID: 400, PARTIALLYPAID: 200 },
      PAID: { DRAFT: 409, OPEN: 409, PASTDUE: 409, PAID: 409, PARTIALLYPAID: 409 },
    }
    const MESSAGES: Partial<Record<Status, Partial<Record<Status, string>>>> = {
      DRAFT: { PASTDUE: 'A DRAFT invoice cannot be PASTDUE: open it first', PAID: 'status PAID is set by payments, not by a PUT' },
      OPEN: { PARTIALLYPAID: 'status PARTIALLYPAID is set by payments, not by a PUT' },
      PARTIALLYPAID: { OPEN: 'A PARTIALLYPAID invoice cannot be moved to OPEN: part of it is paid' },
      PAID: { PAID: 'A PAID invoice cannot be changed', OPEN: 'A PAID invoice cannot be changed' },
    }
    const CASES = STATUSES.flatMap((from) => STATUSES.map((to) => ({ from, to, expected: TABLE[from][to] })))

    /** An invoice in status `from`: created, then moved by PUT, or by what payments set. */
    async function invoiceIn(from: Status): Promise<Invoice> {
      const invoice = await create({ status: from === 'DRAFT' ? 'DRAFT' : 'OPEN', partial_payment: true })
      if (from === 'PASTDUE') expect((await put(invoice.id, body({ status: 'PASTDUE', partial_payment: true }))).status).toBe(200)
      if (from === 'PAID') await paid(invoice.id, 'PAID', '1000')
      if (from === 'PARTIALLYPAID') await paid(invoice.id, 'PARTIALLYPAID', '250')
      return read(invoice.id)
    }

    it.each(CASES)('$from → $to: $expected', async ({ from, to, expected }) => {
      const invoice = await invoiceIn(from)
      const res = await put(invoice.id, body({ status: to, partial_payment: true, name: 'moved' }))
      expect(res.status, res.text).toBe(expected)
      const after = await read(invoice.id)
      if (expected === 200) {
        expect(after).toMatchObject({ status: to, name: 'moved' })
      } else {
        expect(after).toEqual(invoice)
        const message = MESSAGES[from]?.[to]
        if (message !== undefined) expect((res.body as ErrorBody).message).toBe(message)
      }
    })

    it('amount_paid and amount_due follow the payments', async () => {
      const invoice = await invoiceIn('PARTIALLYPAID')
      expect(invoice).toMatchObject({ total: '10.00', amount_paid: '2.50', amount_due: '7.50' })
      expect((await invoiceIn('PAID'))).toMatchObject({ amount_paid: '10.00', amount_due: '0.00' })
    })

    it('an invoice with payments does not go back to DRAFT (409), whatever its status says', async () => {
      for (const status of ['OPEN', 'PASTDUE'] as const) {
        const invoice = await create()
        await paid(invoice.id, status, '1')
        const res = await put(invoice.id, body({ status: 'DRAFT' }))
        expect(res.body).toEqual(conflict(`An invoice that is ${status} and has payments cannot go back to DRAFT`))
        // Nothing paid: it may.
        await paid(invoice.id, status, '0')
        expect((await put(invoice.id, body({ status: 'DRAFT' }))).status).toBe(200)
      }
    })
  })
})

/**
 * The published client's only invoice model, CreateInvoiceDto (typescript-fetch): what its
 * FromJSON takes from an answer (only the model's fields, by their wire names; an optional field
 * that is null becomes undefined) and what its ToJSON sends back.
 */
interface CreateInvoiceDto {
  name: unknown
  email: unknown
  customerId: unknown
  currency: unknown
  items: unknown
  dueDate: Date
  delivery: unknown
  paymentLink: unknown
  paymentMethods: unknown
  status: unknown
  address?: unknown
  phoneNumber?: unknown
  sendDate?: Date
  logo?: unknown
  partialPayment: unknown
  taxId?: unknown
}

function createInvoiceDtoFromJson(json: Record<string, unknown>): CreateInvoiceDto {
  const optional = (value: unknown) => (value === null || value === undefined ? undefined : value)
  return {
    name: json.name,
    email: json.email,
    customerId: json.customer_id,
    currency: json.currency,
    items: json.items,
    dueDate: new Date(String(json.due_date)),
    delivery: json.delivery,
    paymentLink: json.payment_link,
    paymentMethods: json.payment_methods,
    status: json.status,
    address: optional(json.address),
    phoneNumber: optional(json.phone_number),
    sendDate: json.send_date === null || json.send_date === undefined ? undefined : new Date(String(json.send_date)),
    logo: optional(json.logo),
    partialPayment: json.partial_payment,
    taxId: optional(json.taxId),
  }
}

/** The body the client sends: JSON.stringify leaves out the fields that are undefined. */
function createInvoiceDtoToJson(dto: CreateInvoiceDto): string {
  return JSON.stringify({
    name: dto.name,
    email: dto.email,
    customer_id: dto.customerId,
    currency: dto.currency,
    items: dto.items,
    due_date: dto.dueDate.toISOString(),
    delivery: dto.delivery,
    payment_link: dto.paymentLink,
    payment_methods: dto.paymentMethods,
    status: dto.status,
    address: dto.address,
    phone_number: dto.phoneNumber,
    send_date: dto.sendDate?.toISOString(),
    logo: dto.logo,
    partial_payment: dto.partialPayment,
    taxId: dto.taxId,
  })
}

describe("a read-modify-write through the published client's CreateInvoiceDto", () => {
  const KEPT = ['lines', 'items', 'subtotal', 'tax', 'taxId', 'tax_amount', 'total', 'amount_due'] as const

  it.each([
    { case: 'with a tax', taxed: true },
    { case: 'without a tax', taxed: false },
  ])('GET, CreateInvoiceDtoFromJSON, change the name, PUT: items, tax and totals stay ($case)', async ({ taxed }) => {
    const widget = await newProduct(key, { price: '12.50' })
    const gadget = await newProduct(key, { price: '0.10' })
    const tax = taxed ? await newTax(key, 7.25) : undefined
    const invoice = await create({
      items: [
        { product_id: widget, quantity: 2 },
        { productId: gadget, quantity: 3 },
      ],
      ...(tax === undefined ? {} : { taxId: tax }),
      address: '1 Main St',
      send_date: '2027-01-01T09:30:00+01:00',
    })
    // Prices and the tax move on; the invoice keeps what it was issued with.
    expect((await server.request('PUT', `/api/v0/products/${widget}`, { key, body: { price: '99.00' } })).status).toBe(200)
    if (tax !== undefined) expect((await server.request('PUT', `/api/v0/taxes/${tax}`, { key, body: { percentage: 20 } })).status).toBe(200)

    const answer = await server.request<Record<string, unknown>>('GET', `/api/v0/invoices/${invoice.id}`, { key })
    const dto = createInvoiceDtoFromJson(answer.body)
    dto.name = 'Renamed through the client'
    const res = await server.request<Invoice>('PUT', `/api/v0/invoices/${invoice.id}`, { key, body: createInvoiceDtoToJson(dto) })
    expect(res.status, res.text).toBe(200)

    const after = await read(invoice.id)
    expect(after.name).toBe('Renamed through the client')
    for (const field of KEPT) expect(after[field], field).toEqual(invoice[field])
    expect(after).toMatchObject({
      items: [
        { product_id: widget, quantity: 2 },
        { product_id: gadget, quantity: 3 },
      ],
      taxId: tax ?? null,
      subtotal: '25.30',
      total: taxed ? '27.13' : '25.30',
      address: '1 Main St',
      send_date: '2027-01-01T08:30:00.000Z',
    })
  })

  it('every invoice answer and invoice event carries items and taxId', async () => {
    const own = await server.createKey()
    const ownCustomer = await newCustomer(own)
    const ownProduct = await newProduct(own)
    const tax = await newTax(own, 10)
    const fields = { customer_id: ownCustomer, items: [{ productId: ownProduct.toUpperCase(), quantity: 4 }], taxId: tax }
    const expected = { items: [{ product_id: ownProduct, quantity: 4 }], taxId: tax }
    const created = await create(fields, own)
    expect(created).toMatchObject(expected)
    const list = await server.request<InvoiceList>('GET', '/api/v0/invoices', { key: own })
    expect(list.body.data).toEqual([expect.objectContaining(expected)])
    const updated = await put(created.id, body({ ...fields, name: 'changed' }), own)
    expect(updated.body).toMatchObject({ ...expected, name: 'changed' })
    expect((await eventsOf(own.appId, 'invoice.created'))[0]?.data).toMatchObject(expected)
    expect((await eventsOf(own.appId, 'invoice.updated'))[0]?.data).toMatchObject(expected)
  })
})

describe('GET /api/v0/invoices and /api/v0/invoices/:id', () => {
  let own: TestKey
  let first: string
  let second: string
  const made: Invoice[] = []

  beforeAll(async () => {
    own = await server.createKey()
    first = await newCustomer(own)
    second = await newCustomer(own)
    const item = await newProduct(own)
    for (let i = 0; i < 5; i++) {
      made.push(await create({ customer_id: i < 3 ? first : second, items: [{ product_id: item, quantity: i + 1 }], status: i % 2 === 0 ? 'OPEN' : 'DRAFT' }, own))
    }
  })

  function list(query = ''): Promise<ApiResponse<InvoiceList | ErrorBody>> {
    return server.request<InvoiceList | ErrorBody>('GET', `/api/v0/invoices${query}`, { key: own })
  }

  it('newest first, {data,total,skip,take}, skip and take default 0 and 10', async () => {
    const res = await list()
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ data: [...made].reverse(), total: 5, skip: 0, take: 10 })
  })

  it('pages with skip and take', async () => {
    expect(await list('?skip=1&take=2')).toMatchObject({ body: { data: [made[3], made[2]], total: 5, skip: 1, take: 2 } })
    expect(await list('?skip=5')).toMatchObject({ body: { data: [], total: 5 } })
  })

  it('take 1 to 100, skip from 0', async () => {
    expect((await list('?take=0')).status).toBe(400)
    expect((await list('?take=1')).body).toMatchObject({ data: [made[4]], take: 1 })
    expect((await list('?take=100')).status).toBe(200)
    expect((await list('?take=101')).body).toEqual(badRequest('take must not be greater than 100'))
    expect((await list('?skip=-1')).status).toBe(400)
  })

  it('filters by status and by customer_id', async () => {
    expect(await list('?status=DRAFT')).toMatchObject({ body: { data: [made[3], made[1]], total: 2 } })
    expect(await list(`?customer_id=${second}`)).toMatchObject({ body: { data: [made[4], made[3]], total: 2 } })
    expect(await list(`?customer_id=${first}&status=OPEN`)).toMatchObject({ body: { data: [made[2], made[0]], total: 2 } })
    expect(await list('?status=PAID')).toMatchObject({ body: { data: [], total: 0 } })
    expect((await list('?status=paid')).status).toBe(400)
    expect((await list('?customer_id=cus_1')).body).toEqual(badRequest('customer_id must be a valid uuid'))
  })

  it("lists only the application's own invoices", async () => {
    const res = await server.request<InvoiceList>('GET', '/api/v0/invoices?take=100', { key: otherKey })
    expect(res.body.data.every((invoice) => invoice.customer_id === otherCustomer)).toBe(true)
    expect(res.body.data.map((invoice) => invoice.id)).not.toContain(made[0]?.id)
  })

  it('reads one; 404 for a missing one or another application\'s; 400 for a bad id', async () => {
    expect((await server.request('GET', `/api/v0/invoices/${made[0]?.id}`, { key: own })).body).toEqual(made[0])
    expect((await server.request('GET', `/api/v0/invoices/${made[0]?.id.toUpperCase()}`, { key: own })).body).toEqual(made[0])
    expect((await server.request('GET', `/api/v0/invoices/${MISSING_UUID}`, { key: own })).body).toEqual(NOT_FOUND)
    expect((await server.request('GET', `/api/v0/invoices/${made[0]?.id}`, { key: otherKey })).body).toEqual(NOT_FOUND)
    expect((await server.request('GET', '/api/v0/invoices/inv_1', { key: own })).body).toEqual(badRequest('Invalid invoice ID format'))
  })
})
