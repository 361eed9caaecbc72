import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PaymentLink } from '../../../src/resources/payment-links/schemas.js'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { pythonSdkRequest } from '../../helpers/python-sdk.js'

interface ErrorBody {
  statusCode: number
  error: string
  message: string
}

interface LinkList {
  data: PaymentLink[]
  total: number
  skip: number
  take: number
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const PATH = '/api/v0/payment-links'
const INVALID_URL = 'url must be a slug (3-64 lower-case letters, digits and hyphens, starting and ending with a letter or a digit) or an http(s) URL whose last path segment is one'
const NOT_FOUND: ErrorBody = { statusCode: 404, error: 'Not Found', message: 'Payment link not found' }

let server: TestServer
let key: TestKey
let otherKey: TestKey

beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
  otherKey = await server.createKey()
})
afterAll(async () => server.close())

function badRequest(message: string): ErrorBody {
  return { statusCode: 400, error: 'Bad Request', message }
}

let slugs = 0
/** A slug no other test uses. */
function slug(): string {
  slugs += 1
  return `link-${slugs}-${crypto.randomUUID().slice(0, 8)}`
}

/** The required fields of a DONATION link (the payer chooses the amount). */
function donation(body: Record<string, unknown> = {}): Record<string, unknown> {
  return { title: 'Support us', url: slug(), linkType: 'DONATION', allowQuantityAdjustment: false, collectTax: false, collectAddress: false, allowMobilePayment: false, currency: 'usdc', ...body }
}

async function create(caller: TestKey, body: Record<string, unknown>): Promise<PaymentLink> {
  const res = await server.request<PaymentLink>('POST', PATH, { key: caller, body })
  expect(res.status, res.text).toBe(201)
  return res.body
}

async function update(caller: TestKey, id: string, body: unknown) {
  return server.request<PaymentLink | ErrorBody>('PUT', `${PATH}/${id}`, { key: caller, body })
}

async function newProduct(caller: TestKey, body: Record<string, unknown> = {}): Promise<string> {
  const res = await server.request<{ id: string }>('POST', '/api/v0/products', { key: caller, body: { name: 'Widget', price: '10.00', ...body } })
  expect(res.status, res.text).toBe(201)
  return res.body.id
}

async function newCustomer(caller: TestKey): Promise<string> {
  const res = await server.request<{ id: string }>('POST', '/api/v0/customers', { key: caller, body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' } })
  expect(res.status, res.text).toBe(201)
  return res.body.id
}

async function newTax(caller: TestKey, body: Record<string, unknown> = {}): Promise<string> {
  const res = await server.request<{ id: string }>('POST', '/api/v0/taxes', { key: caller, body: { name: `VAT ${crypto.randomUUID()}`, percentage: 20, ...body } })
  expect(res.status, res.text).toBe(201)
  return res.body.id
}

async function eventsOf(appId: string, type: string): Promise<Array<{ type: string; data: PaymentLink }>> {
  const rows = await server.database.query<{ payload: string }>('select payload from events where app_id = ? and type = ? order by created_at, id', appId, type)
  return rows.map((row) => JSON.parse(row.payload) as { type: string; data: PaymentLink })
}

/** What the application's links and their events are now: a refusal leaves it as it was. */
async function written(appId: string): Promise<string> {
  const links = await server.database.query('select * from payment_links where app_id = ? order by id', appId)
  const events = await server.database.query<{ id: string }>("select id from events where app_id = ? and type like 'payment_link.%' order by id", appId)
  return JSON.stringify({ links, events })
}

/** A create refused with `message`, writing nothing. */
async function refused(body: Record<string, unknown>, message: string, caller: TestKey = key, status = 400): Promise<void> {
  const before = await written(caller.appId)
  const res = await server.request('POST', PATH, { key: caller, body })
  expect(res.status, res.text).toBe(status)
  expect(res.body).toEqual({ statusCode: status, error: status === 400 ? 'Bad Request' : 'Conflict', message })
  expect(await written(caller.appId)).toBe(before)
}

/** An update refused with `message`, changing nothing and emitting nothing. */
async function refusedUpdate(id: string, body: Record<string, unknown>, message: string, status = 400): Promise<void> {
  const before = await written(key.appId)
  const res = await update(key, id, body)
  expect(res.status, res.text).toBe(status)
  expect(res.body).toEqual({ statusCode: status, error: status === 400 ? 'Bad Request' : 'Conflict', message })
  expect(await written(key.appId)).toBe(before)
}

describe('POST /api/v0/payment-links', () => {
  it('creates a link with every field, and answers the link object', async () => {
    const customerId = await newCustomer(key)
    const taxId = await newTax(key)
    const url = slug()
    const link = await create(key, {
      title: 'Invoice 1042',
      url,
      description: '**Consulting**, March\nThanks!',
      coverImage: 'https://cdn.example.com/cover.png',
      linkType: 'INVOICE',
      amount: 1250.5,
      paymentForId: 'inv_1042',
      customerId,
      allowQuantityAdjustment: false,
      collectTax: true,
      taxId,
      collectAddress: true,
      allowMobilePayment: true,
      limitPayments: true,
      maxPayments: 1,
      customFields: { orderRef: 'A-17', tags: ['x', 'y'], nested: { ok: true } },
      currency: 'eurc',
      expiration_date: '2099-01-31T12:00:00Z',
    })
    expect(link).toEqual({
      id: expect.stringMatching(UUID),
      title: 'Invoice 1042',
      description: '**Consulting**, March\nThanks!',
      url,
      checkout_url: `${server.baseUrl}/pay/${key.appId}/${url}`,
      coverImage: 'https://cdn.example.com/cover.png',
      linkType: 'INVOICE',
      currency: 'eurc',
      amount: '1250.500000',
      paymentForId: 'inv_1042',
      customerId,
      paymentLinkProducts: [],
      isForAllProduct: false,
      allowQuantityAdjustment: false,
      collectTax: true,
      taxId,
      collectAddress: true,
      allowMobilePayment: true,
      limitPayments: true,
      maxPayments: 1,
      payments_count: 0,
      // made with a production key: live money (its page takes no sandbox payment)
      livemode: true,
      customFields: { orderRef: 'A-17', tags: ['x', 'y'], nested: { ok: true } },
      status: 'active',
      expiration_date: '2099-01-31T12:00:00.000Z',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    })
    const read = await server.request<PaymentLink>('GET', `${PATH}/${link.id}`, { key })
    expect(read.body).toEqual(link)
  })

  it('a PRODUCT link with product lines; defaults: no amount, no limit, no expiry, optional fields null', async () => {
    const first = await newProduct(key, { price: '10.00' })
    const second = await newProduct(key, { price: '2.50' })
    const link = await create(key, donation({ linkType: 'PRODUCT', allowQuantityAdjustment: true, paymentLinkProducts: [{ productId: first, quantity: 2 }, { productId: second.toUpperCase(), quantity: 1 }] }))
    expect(link).toMatchObject({
      linkType: 'PRODUCT',
      amount: null,
      paymentLinkProducts: [
        { productId: first, quantity: 2 },
        { productId: second, quantity: 1 },
      ],
      isForAllProduct: false,
      allowQuantityAdjustment: true,
      limitPayments: false,
      maxPayments: null,
      expiration_date: null,
      description: null,
      coverImage: null,
      customerId: null,
      taxId: null,
      paymentForId: null,
      customFields: null,
      status: 'active',
    })
  })

  it('emits payment_link.created with the link, in the same transaction; a refusal emits nothing', async () => {
    const own = await server.createKey()
    const link = await create(own, donation())
    expect(await eventsOf(own.appId, 'payment_link.created')).toEqual([expect.objectContaining({ type: 'payment_link.created', data: link })])
    await refused(donation({ amount: 0 }), 'amount must be greater than 0', own)
    expect(await eventsOf(own.appId, 'payment_link.created')).toHaveLength(1)
  })

  it('a development key and a production key of one application share its links', async () => {
    const development = await server.createKey({ appId: key.appId, environment: 'development' })
    const link = await create(development, donation())
    expect((await server.request('GET', `${PATH}/${link.id}`, { key })).body).toEqual(link)
  })

  it('required fields are named', async () => {
    const res = await server.request('POST', PATH, { key, body: {} })
    expect(res.body).toEqual(
      badRequest('title is required; url is required; linkType is required; allowQuantityAdjustment is required; collectTax is required; collectAddress is required; allowMobilePayment is required; currency is required'),
    )
    for (const field of ['title', 'url', 'linkType', 'allowQuantityAdjustment', 'collectTax', 'collectAddress', 'allowMobilePayment', 'currency']) {
      const body = donation()
      delete body[field]
      await refused(body, `${field} is required`)
    }
  })

  it('an unknown field, or a body that is not an object, is refused', async () => {
    await refused(donation({ colour: 'red' }), 'property colour should not exist')
    const res = await server.request('POST', PATH, { key, body: '[]', headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(400)
  })
})

describe('validation at each boundary, on both sides', () => {
  const long = (length: number) => 'x'.repeat(length)
  type Case = [field: string, value: unknown, error: string | undefined]
  const cases: Case[] = [
    ['title', long(1), undefined],
    ['title', long(255), undefined],
    ['title', long(256), 'title must be shorter than or equal to 255 characters'],
    ['title', '  ', 'title should not be empty'],
    ['description', long(5000), undefined],
    ['description', long(5001), 'description must be shorter than or equal to 5000 characters'],
    ['coverImage', 'http://cdn.example.com/a.png', undefined],
    ['coverImage', 'javascript:alert(1)', 'coverImage must be an http or https URL'],
    ['coverImage', 'cover.png', 'coverImage must be an http or https URL'],
    ['coverImage', `https://cdn.example.com/${long(2048 - 24)}`, undefined],
    ['coverImage', `https://cdn.example.com/${long(2048 - 23)}`, 'coverImage must be shorter than or equal to 2048 characters'],
    ['linkType', 'COLLECTION', undefined],
    ['linkType', 'donation', 'linkType must be one of the following values: INVOICE, PRODUCT, COLLECTION, DONATION'],
    ['currency', 'eurc', undefined],
    ['currency', 'usd', 'currency must be one of the following values: usdc, eurc'],
    ['currency', 'USDC', 'currency must be one of the following values: usdc, eurc'],
    ['paymentForId', long(255), undefined],
    ['paymentForId', long(256), 'paymentForId must be shorter than or equal to 255 characters'],
    ['customerId', 'cus_1', 'customerId must be a customer id (UUID)'],
    ['collectAddress', 'yes', 'collectAddress must be a boolean value'],
    ['customFields', 'x', 'customFields must be an object'],
    ['customFields', ['x'], 'customFields must be an object'],
    ['customFields', Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i])), undefined],
    ['customFields', Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])), 'customFields must NOT have more than 50 properties'],
    // {"a":"…"} is 8 bytes around the text
    ['customFields', { a: long(8192 - 8) }, undefined],
    ['customFields', { a: long(8192 - 7) }, 'customFields must be at most 8192 bytes as JSON'],
    ['expiration_date', '2099-12-31T23:59:59.999Z', undefined],
    ['expiration_date', '2020-01-01T00:00:00Z', 'expiration_date must be in the future'],
    ['expiration_date', '2099-12-31', 'expiration_date must be a valid date-time'],
  ]

  it.each(cases.map(([field, value, error]): [string, Case] => [`${field} = ${JSON.stringify(value).slice(0, 40)}${error === undefined ? '' : ' (refused)'}`, [field, value, error]]))('%s', async (_name, [field, value, error]) => {
    const body = donation({ [field]: value })
    if (error === undefined) {
      const link = await create(key, body)
      const expected = field === 'expiration_date' ? new Date(value as string).toISOString() : value
      expect((link as Record<string, unknown>)[field]).toEqual(expected)
    } else {
      await refused(body, error)
    }
  })

  it('expiration_date one second ahead is accepted, one second behind is not', async () => {
    await create(key, donation({ expiration_date: new Date(Date.now() + 5_000).toISOString() }))
    await refused(donation({ expiration_date: new Date(Date.now() - 1_000).toISOString() }), 'expiration_date must be in the future')
  })
})

describe('amount: a decimal string or a JSON number, exact, in the stablecoin', () => {
  type Case = [amount: string | number, answer: string | undefined, error?: string]
  const cases: Case[] = [
    ['0.000001', '0.000001'],
    [0.000001, '0.000001'],
    ['0.0000001', undefined, 'amount: "0.0000001" has more than 6 decimals, the most USDC has'],
    [19.99, '19.990000'],
    ['25', '25.000000'],
    ['0', undefined, 'amount must be greater than 0'],
    [0, undefined, 'amount must be greater than 0'],
    [-1, undefined, 'amount: "-1" is not a decimal amount (digits, and at most one decimal point)'],
    ['1000000000', '1000000000.000000'],
    ['1000000000.000001', undefined, 'amount must be at most 1000000000'],
    ['ten', undefined, 'amount: "ten" is not a decimal amount (digits, and at most one decimal point)'],
  ]
  it.each(cases)('%j', async (amount, answer, error) => {
    if (answer !== undefined) expect((await create(key, donation({ amount }))).amount).toBe(answer)
    else await refused(donation({ amount }), error ?? '')
  })

  it('a JSON number with an exponent is refused', async () => {
    const res = await server.request('POST', PATH, { key, body: JSON.stringify(donation()).replace(/}$/, ',"amount":1e3}') })
    expect(res.body).toEqual(badRequest('amount: "1e3" is not a decimal amount (digits, and at most one decimal point)'))
  })

  it('a JSON number keeps every digit the client wrote', async () => {
    const res = await server.request<PaymentLink>('POST', PATH, { key, body: JSON.stringify(donation()).replace(/}$/, ',"amount":123456789.123456}') })
    expect(res.status, res.text).toBe(201)
    expect(res.body.amount).toBe('123456789.123456')
  })
})

describe('url: a slug unique within the application', () => {
  type Case = [url: string, stored: string | undefined]
  const cases: Case[] = [
    ['abc', 'abc'],
    ['ab', undefined],
    [`a${'b'.repeat(62)}c`, `a${'b'.repeat(62)}c`],
    [`a${'b'.repeat(63)}c`, undefined],
    ['Spring-Sale-2099', 'spring-sale-2099'],
    ['https://shop.example.com/pay/Autumn-Sale-2099/?ref=mail#top', 'autumn-sale-2099'],
    ['http://shop.example.com/winter-2099', 'winter-2099'],
    ['ftp://shop.example.com/pay/summer-2099', undefined],
    ['https://shop.example.com/', undefined],
    ['https://shop.example.com/pay/bad_slug', undefined],
    ['-leading', undefined],
    ['trailing-', undefined],
    ['with space', undefined],
    ['under_score', undefined],
    ['pay/two-segments', undefined],
    ['café-sale', undefined],
  ]
  it.each(cases)('%s', async (url, stored) => {
    // Each case in an application of its own: the slugs are fixed here.
    const own = await server.createKey()
    if (stored === undefined) await refused(donation({ url }), INVALID_URL, own)
    else expect((await create(own, donation({ url }))).url).toBe(stored)
  })

  it('a slug taken in the application is 409, whatever the spelling; another application may use it', async () => {
    const url = slug()
    const first = await create(key, donation({ url }))
    const message = `A payment link with url "${url}" already exists in this application`
    await refused(donation({ url }), message, key, 409)
    await refused(donation({ url: url.toUpperCase() }), message, key, 409)
    await refused(donation({ url: `https://pay.example.com/p/${url}` }), message, key, 409)
    const elsewhere = await create(otherKey, donation({ url }))
    expect(elsewhere.url).toBe(first.url)
    expect(elsewhere.id).not.toBe(first.id)
  })

  it('concurrent creates of one slug: exactly one 201, the others 409, one link and one event', async () => {
    const own = await server.createKey()
    const url = slug()
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => server.request('POST', PATH, { key: own, body: donation({ url, title: `racer ${i}` }) })))
    const statuses = results.map((res) => res.status).sort()
    expect(statuses).toEqual([201, ...Array<number>(11).fill(409)])
    const rows = await server.database.query('select id from payment_links where app_id = ?', own.appId)
    expect(rows).toHaveLength(1)
    expect(await eventsOf(own.appId, 'payment_link.created')).toHaveLength(1)
  })
})

describe('rules of each linkType', () => {
  it('PRODUCT: needs product lines or isForAllProduct, not both, and no amount', async () => {
    const product = await newProduct(key)
    const lines = [{ productId: product, quantity: 1 }]
    await refused(donation({ linkType: 'PRODUCT' }), 'a PRODUCT link needs paymentLinkProducts or isForAllProduct: true')
    await refused(donation({ linkType: 'PRODUCT', paymentLinkProducts: [] }), 'a PRODUCT link needs paymentLinkProducts or isForAllProduct: true')
    await refused(donation({ linkType: 'PRODUCT', isForAllProduct: false }), 'a PRODUCT link needs paymentLinkProducts or isForAllProduct: true')
    await refused(donation({ linkType: 'PRODUCT', paymentLinkProducts: lines, isForAllProduct: true }), 'paymentLinkProducts and isForAllProduct: true cannot be used together')
    await refused(donation({ linkType: 'PRODUCT', paymentLinkProducts: lines, amount: '5' }), "amount is not allowed on a PRODUCT link: its products' prices make the total")
    expect((await create(key, donation({ linkType: 'PRODUCT', isForAllProduct: true }))).isForAllProduct).toBe(true)
    expect((await create(key, donation({ linkType: 'PRODUCT', paymentLinkProducts: lines }))).paymentLinkProducts).toEqual(lines)
  })

  it('INVOICE: needs paymentForId and amount', async () => {
    await refused(donation({ linkType: 'INVOICE', amount: '10' }), 'an INVOICE link needs paymentForId (what it is paid for)')
    await refused(donation({ linkType: 'INVOICE', paymentForId: 'inv_1' }), 'an INVOICE link needs amount (the sum due)')
    expect(await create(key, donation({ linkType: 'INVOICE', paymentForId: 'inv_1', amount: '10' }))).toMatchObject({ paymentForId: 'inv_1', amount: '10.000000' })
  })

  it.each(['COLLECTION', 'DONATION'])('%s: the amount is optional (the payer chooses), products and quantity adjustment are refused', async (linkType) => {
    const product = await newProduct(key)
    expect((await create(key, donation({ linkType }))).amount).toBeNull()
    expect((await create(key, donation({ linkType, amount: '5' }))).amount).toBe('5.000000')
    expect((await create(key, donation({ linkType, paymentForId: 'sub_123456789' }))).paymentForId).toBe('sub_123456789')
    await refused(donation({ linkType, paymentLinkProducts: [{ productId: product, quantity: 1 }] }), `paymentLinkProducts and isForAllProduct are only for PRODUCT links (this one is ${linkType})`)
    await refused(donation({ linkType, isForAllProduct: true }), `paymentLinkProducts and isForAllProduct are only for PRODUCT links (this one is ${linkType})`)
    await refused(donation({ linkType, allowQuantityAdjustment: true }), `allowQuantityAdjustment is only for PRODUCT links (this one is ${linkType})`)
  })
})

describe('product lines', () => {
  const productLink = (lines: unknown[], body: Record<string, unknown> = {}) => donation({ linkType: 'PRODUCT', paymentLinkProducts: lines, ...body })

  it('quantity from 1 to 10000', async () => {
    const product = await newProduct(key, { price: '1.00' })
    await refused(productLink([{ productId: product, quantity: 0 }]), 'paymentLinkProducts[0].quantity must not be less than 1')
    await create(key, productLink([{ productId: product, quantity: 1 }]))
    await create(key, productLink([{ productId: product, quantity: 10_000 }]))
    await refused(productLink([{ productId: product, quantity: 10_001 }]), 'paymentLinkProducts[0].quantity must not be greater than 10000')
    await refused(productLink([{ productId: product, quantity: 1.5 }]), 'paymentLinkProducts[0].quantity must be an integer number')
    await refused(productLink([{ productId: product }]), 'paymentLinkProducts[0].quantity is required')
    await refused(productLink([{ productId: product, quantity: 1, price: 1 }]), 'property paymentLinkProducts[0].price should not exist')
  })

  it('at most 100 lines', async () => {
    const lines = (count: number) => Array.from({ length: count }, () => ({ productId: crypto.randomUUID(), quantity: 1 }))
    await refused(productLink(lines(101)), 'paymentLinkProducts must contain no more than 100 elements')
    // 100 lines pass the schema: the first product is then looked up, and missing.
    const hundred = lines(100)
    await refused(productLink(hundred), `paymentLinkProducts[0].productId: no product ${hundred[0]?.productId} in this application`)
  })

  it("each product once, the application's own, ACTIVE", async () => {
    const product = await newProduct(key)
    const inactive = await newProduct(key, { status: 'INACTIVE' })
    const foreign = await newProduct(otherKey)
    await refused(productLink([{ productId: 'p1', quantity: 1 }]), 'paymentLinkProducts[].productId must be a product id (UUID)')
    await refused(productLink([{ productId: product, quantity: 1 }, { productId: product.toUpperCase(), quantity: 2 }]), `paymentLinkProducts names product ${product} more than once`)
    await refused(productLink([{ productId: product, quantity: 1 }, { productId: MISSING_UUID, quantity: 1 }]), `paymentLinkProducts[1].productId: no product ${MISSING_UUID} in this application`)
    await refused(productLink([{ productId: foreign, quantity: 1 }]), `paymentLinkProducts[0].productId: no product ${foreign} in this application`)
    await refused(productLink([{ productId: inactive, quantity: 1 }]), `paymentLinkProducts[0]: product ${inactive} is INACTIVE`)
  })

  it('currency: USD products on usdc links, EUR products on eurc links, nothing else', async () => {
    const usd = await newProduct(key, { currency: 'USD' })
    const eur = await newProduct(key, { currency: 'EUR' })
    const gbp = await newProduct(key, { currency: 'GBP' })
    const jpy = await newProduct(key, { currency: 'JPY', price: '1500' })
    await create(key, productLink([{ productId: usd, quantity: 1 }], { currency: 'usdc' }))
    await create(key, productLink([{ productId: eur, quantity: 1 }], { currency: 'eurc' }))
    await refused(productLink([{ productId: eur, quantity: 1 }], { currency: 'usdc' }), `paymentLinkProducts[0]: product ${eur} is priced in EUR; a usdc link sells only USD-priced products (1 USD = 1 USDC)`)
    await refused(productLink([{ productId: usd, quantity: 1 }], { currency: 'eurc' }), `paymentLinkProducts[0]: product ${usd} is priced in USD; a eurc link sells only EUR-priced products (1 EUR = 1 EURC)`)
    await refused(productLink([{ productId: gbp, quantity: 1 }]), `paymentLinkProducts[0]: product ${gbp} is priced in GBP; a usdc link sells only USD-priced products (1 USD = 1 USDC)`)
    await refused(productLink([{ productId: jpy, quantity: 1 }]), `paymentLinkProducts[0]: product ${jpy} is priced in JPY; a usdc link sells only USD-priced products (1 USD = 1 USDC)`)
  })

  it("the lines' total is at most 1000000000", async () => {
    const tenth = await newProduct(key, { price: '100000000.00' })
    const over = await newProduct(key, { price: '100000000.01' })
    await create(key, productLink([{ productId: tenth, quantity: 10 }]))
    await refused(productLink([{ productId: over, quantity: 10 }]), "the products' total (1000000000.10 USD) must be at most 1000000000")
  })
})

describe('references: customer and tax of the application', () => {
  it('customerId names a customer of the application', async () => {
    const customerId = await newCustomer(key)
    const foreign = await newCustomer(otherKey)
    expect((await create(key, donation({ customerId: customerId.toUpperCase() }))).customerId).toBe(customerId)
    await refused(donation({ customerId: MISSING_UUID }), `customerId: no customer ${MISSING_UUID} in this application`)
    await refused(donation({ customerId: foreign }), `customerId: no customer ${foreign} in this application`)
  })

  it('collectTax needs taxId, an active tax of the application', async () => {
    const taxId = await newTax(key)
    const inactive = await newTax(key, { active: false })
    const foreign = await newTax(otherKey)
    await refused(donation({ collectTax: true }), 'taxId is required when collectTax is true')
    await refused(donation({ collectTax: true, taxId: MISSING_UUID }), `taxId: no tax ${MISSING_UUID} in this application`)
    await refused(donation({ collectTax: true, taxId: foreign }), `taxId: no tax ${foreign} in this application`)
    await refused(donation({ collectTax: true, taxId: inactive }), `taxId: the tax ${inactive} is inactive`)
    await refused(donation({ collectTax: true, taxId: 'vat' }), 'taxId must be a tax id (UUID)')
    expect(await create(key, donation({ collectTax: true, taxId }))).toMatchObject({ collectTax: true, taxId })
    // Kept, not applied, while collectTax is false.
    expect(await create(key, donation({ collectTax: false, taxId }))).toMatchObject({ collectTax: false, taxId })
  })
})

describe('limitPayments and maxPayments', () => {
  it('maxPayments from 1 to 2147483647, only with limitPayments: true', async () => {
    await refused(donation({ limitPayments: true }), 'maxPayments is required when limitPayments is true')
    await refused(donation({ limitPayments: true, maxPayments: 0 }), 'maxPayments must not be less than 1')
    expect((await create(key, donation({ limitPayments: true, maxPayments: 1 }))).maxPayments).toBe(1)
    expect((await create(key, donation({ limitPayments: true, maxPayments: 2_147_483_647 }))).maxPayments).toBe(2_147_483_647)
    await refused(donation({ limitPayments: true, maxPayments: 2_147_483_648 }), 'maxPayments must not be greater than 2147483647')
    await refused(donation({ limitPayments: true, maxPayments: 1.5 }), 'maxPayments must be an integer number')
    await refused(donation({ maxPayments: 5 }), 'maxPayments needs limitPayments: true')
    await refused(donation({ limitPayments: false, maxPayments: 5 }), 'maxPayments needs limitPayments: true')
    expect(await create(key, donation({ limitPayments: false }))).toMatchObject({ limitPayments: false, maxPayments: null })
  })
})

describe('GET /api/v0/payment-links', () => {
  it('pages newest first with {data,total,skip,take}; skip and take as the published client sends them (text)', async () => {
    const own = await server.createKey()
    const made: PaymentLink[] = []
    for (let i = 0; i < 3; i++) made.push(await create(own, donation({ title: `L${i}` })))
    const all = await server.request<LinkList>('GET', PATH, { key: own })
    expect(all.body).toEqual({ data: [...made].reverse(), total: 3, skip: 0, take: 10 })
    const page = await server.request<LinkList>('GET', `${PATH}?skip=1&take=1`, { key: own })
    expect(page.body).toEqual({ data: [made[1]], total: 3, skip: 1, take: 1 })
    expect((await server.request<LinkList>('GET', PATH, { key: otherKey })).body.data.map((link) => link.id)).not.toContain(made[0]?.id)
  })

  it('skip and take at their bounds', async () => {
    type Case = [query: string, error: string | undefined]
    const cases: Case[] = [
      ['skip=0', undefined],
      ['skip=-1', 'skip must not be less than 0'],
      ['skip=2147483647', undefined],
      ['skip=2147483648', 'skip must not be greater than 2147483647'],
      ['skip=abc', 'skip must be an integer number'],
      ['take=1', undefined],
      ['take=0', 'take must not be less than 1'],
      ['take=100', undefined],
      ['take=101', 'take must not be greater than 100'],
      ['take=1.5', 'take must be an integer number'],
    ]
    for (const [query, error] of cases) {
      const res = await server.request('GET', `${PATH}?${query}`, { key })
      if (error === undefined) expect(res.status, query).toBe(200)
      else expect(res.body, query).toEqual(badRequest(error))
    }
  })

  it('filters by linkType and currency', async () => {
    const own = await server.createKey()
    const donationLink = await create(own, donation())
    const collection = await create(own, donation({ linkType: 'COLLECTION', currency: 'eurc' }))
    expect((await server.request<LinkList>('GET', `${PATH}?linkType=COLLECTION`, { key: own })).body).toMatchObject({ data: [collection], total: 1 })
    expect((await server.request<LinkList>('GET', `${PATH}?currency=usdc`, { key: own })).body).toMatchObject({ data: [donationLink], total: 1 })
    expect((await server.request('GET', `${PATH}?linkType=SHOP`, { key: own })).status).toBe(400)
  })
})

describe('GET /api/v0/payment-links/:id', () => {
  it('404 for a missing link and for another application’s; 400 for a malformed id; an upper-case id finds it', async () => {
    const link = await create(key, donation())
    expect((await server.request('GET', `${PATH}/${MISSING_UUID}`, { key })).body).toEqual(NOT_FOUND)
    expect((await server.request('GET', `${PATH}/${link.id}`, { key: otherKey })).body).toEqual(NOT_FOUND)
    expect((await server.request('GET', `${PATH}/nope`, { key })).body).toEqual(badRequest('Invalid payment link ID format'))
    expect((await server.request('GET', `${PATH}/${link.id.toUpperCase()}`, { key })).body).toEqual(link)
  })

  it("status is computed on read: 'expired' once expiration_date has passed", async () => {
    const link = await create(key, donation({ expiration_date: new Date(Date.now() + 60_000).toISOString() }))
    expect(link.status).toBe('active')
    const past = new Date(Date.now() - 1_000).toISOString()
    await server.app.db.updateTable('payment_links').set({ expires_at: past }).where('id', '=', link.id).execute()
    const read = await server.request<PaymentLink>('GET', `${PATH}/${link.id}`, { key })
    expect(read.body).toMatchObject({ status: 'expired', expiration_date: past })
    expect((await server.request<LinkList>('GET', PATH, { key })).body.data.find((found) => found.id === link.id)?.status).toBe('expired')
  })
})

describe('PUT /api/v0/payment-links/:id', () => {
  it('a partial update changes the fields sent, keeps the others, and emits payment_link.updated', async () => {
    const own = await server.createKey()
    const link = await create(own, donation({ amount: '5', description: 'first', limitPayments: true, maxPayments: 3 }))
    const res = await update(own, link.id, { title: 'Renamed', amount: 7.25 })
    expect(res.status, res.text).toBe(200)
    const updated = res.body as PaymentLink
    expect(updated).toEqual({ ...link, title: 'Renamed', amount: '7.250000', updated_at: expect.stringMatching(ISO_MS) })
    expect(updated.updated_at >= link.updated_at).toBe(true)
    expect((await server.request('GET', `${PATH}/${link.id}`, { key: own })).body).toEqual(updated)
    expect(await eventsOf(own.appId, 'payment_link.updated')).toEqual([expect.objectContaining({ type: 'payment_link.updated', data: updated })])
  })

  it('an empty body {} changes nothing and emits nothing; a body that is not an object is refused', async () => {
    const own = await server.createKey()
    const link = await create(own, donation())
    const res = await update(own, link.id, {})
    expect(res.body).toEqual(link)
    expect(await eventsOf(own.appId, 'payment_link.updated')).toHaveLength(0)
    for (const body of ['null', '[]', '"title"']) expect((await update(own, link.id, body)).body).toEqual(badRequest('Request body must be a JSON object'))
    expect((await server.request('GET', `${PATH}/${link.id}`, { key: own })).body).toEqual(link)
  })

  it('Python SDK: payment_links.update(id) sends no body, which changes nothing: 200 with the link', async () => {
    const own = await server.createKey()
    const link = await create(own, donation({ amount: '12.5' }))
    const res = await pythonSdkRequest<PaymentLink>(server.baseUrl, { method: 'PUT', path: `${PATH}/${link.id}`, key: own, idempotencyKey: crypto.randomUUID() })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual(link)
    expect(await eventsOf(own.appId, 'payment_link.updated')).toHaveLength(0)
    // The same with no Content-Type at all.
    const bare = await server.request<PaymentLink>('PUT', `${PATH}/${link.id}`, { key: own })
    expect(bare.status, bare.text).toBe(200)
    expect(bare.body).toEqual(link)
    expect((await server.request('GET', `${PATH}/${link.id}`, { key: own })).body).toEqual(link)
    // A body is still needed where one is: a create without one is refused, as before.
    expect((await server.request('POST', PATH, { key: own })).body).toEqual(badRequest('Request body must be a JSON object'))
    expect((await server.request('POST', PATH, { key: own, body: '', headers: { 'content-type': 'application/json' } })).body).toEqual(badRequest('Request body must be a JSON object'))
  })

  it('the whole body resent (as the published client does) with the same linkType is accepted', async () => {
    const body = donation({ amount: '9' })
    const link = await create(key, body)
    const res = await update(key, link.id, { ...body, title: 'Same, renamed' })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ title: 'Same, renamed', url: link.url, amount: '9.000000' })
  })

  it('linkType cannot change', async () => {
    const link = await create(key, donation())
    await refusedUpdate(link.id, { linkType: 'COLLECTION' }, 'linkType cannot change after the payment link is created (it is DONATION)')
    await refusedUpdate(link.id, { linkType: 'donation' }, 'linkType must be one of the following values: INVOICE, PRODUCT, COLLECTION, DONATION')
  })

  it('null clears an optional field', async () => {
    const customerId = await newCustomer(key)
    const link = await create(key, donation({ amount: '5', description: 'd', coverImage: 'https://cdn.example.com/c.png', customerId, customFields: { a: 1 }, paymentForId: 'x', expiration_date: '2099-01-01T00:00:00Z' }))
    const res = await update(key, link.id, { amount: null, description: null, coverImage: null, customerId: null, customFields: null, paymentForId: null, expiration_date: null })
    expect(res.body).toMatchObject({ amount: null, description: null, coverImage: null, customerId: null, customFields: null, paymentForId: null, expiration_date: null })
  })

  it('the url changes to a free slug; a slug taken by another link of the application is 409', async () => {
    const link = await create(key, donation())
    const taken = await create(key, donation())
    const next = slug()
    expect((await update(key, link.id, { url: `https://example.com/pay/${next.toUpperCase()}` })).body).toMatchObject({ url: next, checkout_url: `${server.baseUrl}/pay/${key.appId}/${next}` })
    await refusedUpdate(link.id, { url: taken.url }, `A payment link with url "${taken.url}" already exists in this application`, 409)
    await refusedUpdate(link.id, { url: 'x' }, INVALID_URL)
    // Its own slug again, and a slug another application uses: both fine.
    expect((await update(key, link.id, { url: next })).status).toBe(200)
    const foreign = await create(otherKey, donation())
    expect((await update(key, link.id, { url: foreign.url })).body).toMatchObject({ url: foreign.url })
  })

  it('validated like the create body: each field on both sides of its boundary', async () => {
    const link = await create(key, donation())
    await refusedUpdate(link.id, { title: 'x'.repeat(256) }, 'title must be shorter than or equal to 255 characters')
    expect((await update(key, link.id, { title: 'x'.repeat(255) })).status).toBe(200)
    await refusedUpdate(link.id, { amount: '0' }, 'amount must be greater than 0')
    await refusedUpdate(link.id, { amount: '0.0000001' }, 'amount: "0.0000001" has more than 6 decimals, the most USDC has')
    expect((await update(key, link.id, { amount: '0.000001' })).body).toMatchObject({ amount: '0.000001' })
    await refusedUpdate(link.id, { currency: 'usd' }, 'currency must be one of the following values: usdc, eurc')
    expect((await update(key, link.id, { currency: 'eurc' })).body).toMatchObject({ currency: 'eurc', amount: '0.000001' })
    await refusedUpdate(link.id, { expiration_date: '2020-01-01T00:00:00Z' }, 'expiration_date must be in the future')
    await refusedUpdate(link.id, { coverImage: 'ftp://x.example.com/a.png' }, 'coverImage must be an http or https URL')
    await refusedUpdate(link.id, { customerId: MISSING_UUID }, `customerId: no customer ${MISSING_UUID} in this application`)
    await refusedUpdate(link.id, { collectTax: true }, 'taxId is required when collectTax is true')
    await refusedUpdate(link.id, { allowQuantityAdjustment: true }, 'allowQuantityAdjustment is only for PRODUCT links (this one is DONATION)')
    await refusedUpdate(link.id, { description: 'x'.repeat(5001) }, 'description must be text of at most 5000 characters, or null to clear it')
    expect((await update(key, link.id, { description: 'x'.repeat(5000) })).status).toBe(200)
    await refusedUpdate(link.id, { taxId: 'vat' }, 'taxId must be a tax id (UUID), or null to clear it')
    await refusedUpdate(link.id, { customerId: 5 }, 'customerId must be a customer id (UUID), or null to clear it')
    await refusedUpdate(link.id, { paymentForId: '' }, 'paymentForId must be text of 1 to 255 characters, or null to clear it')
    await refusedUpdate(link.id, { expiration_date: 'tomorrow' }, 'expiration_date must be an ISO 8601 date-time, or null to clear it')
    await refusedUpdate(link.id, { coverImage: 'x'.repeat(2049) }, 'coverImage must be an http or https URL of at most 2048 characters, or null to clear it')
    await refusedUpdate(link.id, { amount: true }, 'amount must be a decimal amount such as 25.50')
    await refusedUpdate(link.id, { customFields: 'x' }, 'customFields must be an object of at most 50 keys, or null to clear it')
    await refusedUpdate(link.id, { colour: 'red' }, 'property colour should not exist')
    await refusedUpdate(link.id, { customFields: { a: 'x'.repeat(8192) } }, 'customFields must be at most 8192 bytes as JSON')
  })

  it('limitPayments: maxPayments needs it, turning it off lets go of maxPayments, and maxPayments stays at or above the payments made', async () => {
    const link = await create(key, donation())
    await refusedUpdate(link.id, { maxPayments: 2 }, 'maxPayments needs limitPayments: true')
    await refusedUpdate(link.id, { limitPayments: true }, 'maxPayments is required when limitPayments is true')
    expect((await update(key, link.id, { limitPayments: true, maxPayments: 5 })).body).toMatchObject({ limitPayments: true, maxPayments: 5 })
    expect((await update(key, link.id, { maxPayments: 4 })).body).toMatchObject({ limitPayments: true, maxPayments: 4 })
    await refusedUpdate(link.id, { maxPayments: 0 }, 'maxPayments must be an integer from 1 to 2147483647, or null to clear it')
    // Payments are made by the paying half; three are recorded here by hand.
    await server.app.db.updateTable('payment_links').set({ payments_count: 3 }).where('id', '=', link.id).execute()
    await refusedUpdate(link.id, { maxPayments: 2 }, 'maxPayments must be at least the 3 payments already made through the link')
    expect((await update(key, link.id, { maxPayments: 3 })).body).toMatchObject({ maxPayments: 3, payments_count: 3 })
    expect((await update(key, link.id, { limitPayments: false })).body).toMatchObject({ limitPayments: false, maxPayments: null })
  })

  it('PRODUCT links: lines replace the lines, checked again when they or the currency change; a product deleted since does not block other edits', async () => {
    const eurA = await newProduct(key, { currency: 'EUR' })
    const eurB = await newProduct(key, { currency: 'EUR' })
    const usd = await newProduct(key, { currency: 'USD' })
    const link = await create(key, donation({ linkType: 'PRODUCT', currency: 'eurc', paymentLinkProducts: [{ productId: eurA, quantity: 1 }] }))
    expect((await update(key, link.id, { paymentLinkProducts: [{ productId: eurB, quantity: 3 }] })).body).toMatchObject({ paymentLinkProducts: [{ productId: eurB, quantity: 3 }] })
    await refusedUpdate(link.id, { currency: 'usdc' }, `paymentLinkProducts[0]: product ${eurB} is priced in EUR; a usdc link sells only USD-priced products (1 USD = 1 USDC)`)
    expect((await update(key, link.id, { currency: 'usdc', paymentLinkProducts: [{ productId: usd, quantity: 1 }] })).body).toMatchObject({ currency: 'usdc' })
    await refusedUpdate(link.id, { paymentLinkProducts: [] }, 'a PRODUCT link needs paymentLinkProducts or isForAllProduct: true')
    await refusedUpdate(link.id, { isForAllProduct: true }, 'paymentLinkProducts and isForAllProduct: true cannot be used together')
    await refusedUpdate(link.id, { amount: '1' }, "amount is not allowed on a PRODUCT link: its products' prices make the total")
    expect((await server.request('DELETE', `/api/v0/products/${usd}`, { key })).status).toBe(200)
    expect((await update(key, link.id, { title: 'Still editable' })).body).toMatchObject({ title: 'Still editable', paymentLinkProducts: [{ productId: usd, quantity: 1 }] })
    expect((await update(key, link.id, { isForAllProduct: true, paymentLinkProducts: [] })).body).toMatchObject({ isForAllProduct: true, paymentLinkProducts: [] })
  })

  it("another application's link is 404 and stays as it was; a missing link is 404", async () => {
    const link = await create(key, donation())
    const res = await update(otherKey, link.id, { title: 'stolen' })
    expect(res.body).toEqual(NOT_FOUND)
    expect((await server.request('GET', `${PATH}/${link.id}`, { key })).body).toEqual(link)
    expect((await update(key, MISSING_UUID, { title: 'x' })).body).toEqual(NOT_FOUND)
    expect((await update(key, 'nope', { title: 'x' })).body).toEqual(badRequest('Invalid payment link ID format'))
  })
})
