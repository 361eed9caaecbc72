import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { FORM, imagesDirectory, MULTIPART, multipartBody, type Product, send, urlEncoded } from './fixtures.js'

interface ErrorBody {
  statusCode: number
  error: string
  message: string
}

interface ProductList {
  data: Product[]
  total: number
  skip: number
  take: number
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let server: TestServer
let key: TestKey
let otherKey: TestKey

beforeAll(async () => {
  server = await startTestServer({ config: { productImagesDir: imagesDirectory() } })
  key = await server.createKey()
  otherKey = await server.createKey()
})
afterAll(async () => server.close())

function badRequest(message: string): ErrorBody {
  return { statusCode: 400, error: 'Bad Request', message }
}

const NOT_FOUND: ErrorBody = { statusCode: 404, error: 'Not Found', message: 'Product not found' }

async function create(caller: TestKey, body: Record<string, unknown> = {}): Promise<Product> {
  const res = await server.request<Product>('POST', '/api/v0/products', { key: caller, body: { name: 'Widget', price: '9.99', ...body } })
  expect(res.status, res.text).toBe(201)
  return res.body
}

/** The same create, sent as JSON and as the published client's url-encoded form. */
async function createBoth(fields: Record<string, string | number>) {
  const json = await server.request<Product | ErrorBody>('POST', '/api/v0/products', { key, body: fields })
  const form = await send<Product | ErrorBody>(server, 'POST', '/api/v0/products', key, urlEncoded(fields), FORM)
  return { json, form }
}

async function eventsOf(appId: string, type: string): Promise<Array<{ data: Product }>> {
  const rows = await server.database.query<{ payload: string }>('select payload from events where app_id = ? and type = ? order by created_at, id', appId, type)
  return rows.map((row) => JSON.parse(row.payload) as { data: Product })
}

describe('POST /api/v0/products', () => {
  it('creates a product with every field, and answers the product object', async () => {
    const product = await create(key, {
      name: 'Premium Widget',
      description: 'High-quality widget\nfor all your needs',
      price: '99.99',
      currency: 'GBP',
      type: 'physical',
      productType: 'widget',
      weight: 1.25,
      unit: 'kg',
      quantity: 2,
      stockCount: 40,
      status: 'INACTIVE',
      images: ['https://cdn.example.com/a.png', 'http://cdn.example.com/b.jpg?size=large'],
    })
    expect(product).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Premium Widget',
      description: 'High-quality widget\nfor all your needs',
      price: '99.99',
      currency: 'GBP',
      type: 'physical',
      productType: 'widget',
      weight: 1.25,
      unit: 'kg',
      quantity: 2,
      stockCount: 40,
      status: 'INACTIVE',
      images: ['https://cdn.example.com/a.png', 'http://cdn.example.com/b.jpg?size=large'],
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    })
    const read = await server.request<Product>('GET', `/api/v0/products/${product.id}`, { key })
    expect(read.body).toEqual(product)
  })

  it('defaults: USD, ACTIVE, no images; optional fields null', async () => {
    const product = await create(key, { name: 'Plain', price: 5 })
    expect(product).toMatchObject({ price: '5.00', currency: 'USD', status: 'ACTIVE', images: [], description: null, type: null, weight: null, quantity: null, stockCount: null })
  })

  it('emits product.created with the product, in the same transaction', async () => {
    const own = await server.createKey()
    const product = await create(own, { name: 'Evented' })
    expect(await eventsOf(own.appId, 'product.created')).toEqual([expect.objectContaining({ type: 'product.created', data: product })])
    // A refused create writes no event.
    const refused = await server.request('POST', '/api/v0/products', { key: own, body: { name: 'Bad', price: '0' } })
    expect(refused.status).toBe(400)
    expect(await eventsOf(own.appId, 'product.created')).toHaveLength(1)
  })

  it('reads a JSON number price as the decimal the client wrote', async () => {
    expect((await create(key, { price: 19.99 })).price).toBe('19.99')
    expect((await create(key, { price: 0.1 })).price).toBe('0.10')
    expect((await create(key, { price: 1500, currency: 'JPY' })).price).toBe('1500')
  })

  it('url-encoded as the published client sends it: numbers as text, images comma-joined', async () => {
    const images = ['https://cdn.example.com/a.png', 'https://cdn.example.com/b.png']
    const res = await send<Product>(
      server,
      'POST',
      '/api/v0/products',
      key,
      urlEncoded({ name: 'Form Widget', description: 'from a form', price: 12.5, currency: 'CAD', weight: 0.5, quantity: 3, stockCount: 7, status: 'ACTIVE', images }),
      `${FORM};charset=UTF-8`,
    )
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ name: 'Form Widget', price: '12.50', currency: 'CAD', weight: 0.5, quantity: 3, stockCount: 7, images })
  })

  it('a request without a body is refused, naming the three encodings', async () => {
    const res = await server.request('POST', '/api/v0/products', { key })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(badRequest('Request body is required: send the product as application/x-www-form-urlencoded, multipart/form-data or application/json'))
    expect((await send(server, 'POST', '/api/v0/products', key, '', 'application/json')).body).toEqual(badRequest('Request body must be a JSON object'))
  })

  it('an unknown field is refused, in JSON and in a form', async () => {
    const { json, form } = await createBoth({ name: 'X', price: '1', colour: 'red' })
    expect(json.body).toEqual(badRequest('property colour should not exist'))
    expect(form.body).toEqual(badRequest('property colour should not exist'))
  })

  it('name and price are required', async () => {
    const res = await server.request('POST', '/api/v0/products', { key, body: {} })
    expect(res.body).toEqual(badRequest('name is required; price is required'))
  })
})

describe('validation at each boundary, on both sides, in JSON and url-encoded alike', () => {
  const long = (length: number) => 'x'.repeat(length)
  type Case = [field: string, value: string | number, error: string | undefined]
  const cases: Case[] = [
    ['name', long(1), undefined],
    ['name', long(255), undefined],
    ['name', long(256), 'name must be shorter than or equal to 255 characters'],
    ['name', '   ', 'name should not be empty'],
    ['description', long(5000), undefined],
    ['description', long(5001), 'description must be shorter than or equal to 5000 characters'],
    ['type', long(100), undefined],
    ['type', long(101), 'type must be shorter than or equal to 100 characters'],
    ['productType', long(100), undefined],
    ['productType', long(101), 'productType must be shorter than or equal to 100 characters'],
    ['unit', long(50), undefined],
    ['unit', long(51), 'unit must be shorter than or equal to 50 characters'],
    ['weight', 0, undefined],
    ['weight', -0.001, 'weight must not be less than 0'],
    ['weight', 1_000_000, undefined],
    ['weight', 1_000_000.001, 'weight must not be greater than 1000000'],
    ['quantity', 0, undefined],
    ['quantity', -1, 'quantity must not be less than 0'],
    ['quantity', 2_147_483_647, undefined],
    ['quantity', 2_147_483_648, 'quantity must not be greater than 2147483647'],
    ['quantity', 1.5, 'quantity must be an integer number'],
    ['stockCount', 0, undefined],
    ['stockCount', -1, 'stockCount must not be less than 0'],
    ['stockCount', 2_147_483_647, undefined],
    ['stockCount', 2_147_483_648, 'stockCount must not be greater than 2147483647'],
    ['status', 'ACTIVE', undefined],
    ['status', 'INACTIVE', undefined],
    ['status', 'active', 'status must be one of the following values: ACTIVE, INACTIVE'],
    ['currency', 'EUR', undefined],
    ['currency', 'usd', 'currency must be one of the following values: USD, EUR, GBP, CAD, AUD, JPY'],
    ['currency', 'CHF', 'currency must be one of the following values: USD, EUR, GBP, CAD, AUD, JPY'],
  ]

  it.each(cases)('%s = %s', async (field, value, error) => {
    const { json, form } = await createBoth({ name: 'Boundary', price: '1.00', [field]: value })
    for (const res of [json, form]) {
      if (error === undefined) {
        expect(res.status, res.text).toBe(201)
        expect((res.body as Product)[field as keyof Product]).toEqual(value)
      } else {
        expect(res.body).toEqual(badRequest(error))
      }
    }
  })

  it('a number field given text that is not a number: 400 in a form, as in JSON', async () => {
    const { json, form } = await createBoth({ name: 'N', price: '1', weight: 'heavy' })
    expect(json.body).toEqual(badRequest('weight must be a number'))
    expect(form.body).toEqual(badRequest('weight must be a number'))
  })

  it('an empty text field clears to null', async () => {
    const { json, form } = await createBoth({ name: 'Empty', price: '1', description: '', unit: '' })
    for (const res of [json, form]) expect(res.body).toMatchObject({ description: null, unit: null })
  })
})

describe('prices: exact decimals in the currency, at each boundary', () => {
  type Case = [currency: string, price: string, answer: string | undefined, error?: string]
  const cases: Case[] = [
    ...['USD', 'EUR', 'GBP', 'CAD', 'AUD'].flatMap((currency): Case[] => [
      [currency, '0.01', '0.01'],
      [currency, '0.001', undefined, `price has more than 2 decimals, the most ${currency} has`],
      [currency, '10', '10.00'],
      [currency, '10.5', '10.50'],
      [currency, '999999999.99', '999999999.99'],
      [currency, '1000000000', undefined, `price must be at most 999999999.99 ${currency}`],
    ]),
    ['JPY', '1', '1'],
    ['JPY', '1.5', undefined, 'price must be a whole number in JPY, which has no minor unit'],
    ['JPY', '1.0', undefined, 'price must be a whole number in JPY, which has no minor unit'],
    ['JPY', '999999999', '999999999'],
    ['JPY', '1000000000', undefined, 'price must be at most 999999999 JPY'],
    ['USD', '0', undefined, 'price must be greater than 0'],
    ['USD', '0.00', undefined, 'price must be greater than 0'],
    ['USD', '-1', undefined, 'price must be greater than 0'],
    ['USD', '1e3', undefined, 'price must be a decimal number such as 19.99 (got "1e3")'],
    ['USD', 'abc', undefined, 'price must be a decimal number such as 19.99 (got "abc")'],
    ['USD', '', undefined, 'price must be a decimal number such as 19.99 (got "")'],
    ['USD', '01.00', undefined, 'price must be a decimal number such as 19.99 (got "01.00")'],
  ]

  it.each(cases)('%s %s', async (currency, price, answer, error) => {
    const { json, form } = await createBoth({ name: 'Priced', price, currency })
    for (const res of [json, form]) {
      if (answer !== undefined) {
        expect(res.status, res.text).toBe(201)
        expect(res.body).toMatchObject({ price: answer, currency })
      } else {
        expect(res.body).toEqual(badRequest(error ?? ''))
      }
    }
  })

  it('JSON numbers: too many decimals, negative, absurd and non-numbers are refused', async () => {
    const refuse = async (price: unknown, message: string) => {
      const res = await server.request('POST', '/api/v0/products', { key, body: { name: 'P', price } })
      expect(res.body).toEqual(badRequest(message))
    }
    await refuse(0.005, 'price has more than 2 decimals, the most USD has')
    await refuse(-5, 'price must be greater than 0')
    await refuse(1e21, 'price must be a decimal number such as 19.99 (got "1e+21")')
    await refuse(true, 'price must be a decimal number such as 19.99')
    await refuse('x'.repeat(41), 'price must be a decimal number such as 19.99')
  })
})

describe('images named by URL (JSON and url-encoded)', () => {
  const url = (n: number) => `https://cdn.example.com/${n}.png`

  it('10 images are accepted, 11 refused', async () => {
    const ten = Array.from({ length: 10 }, (_, n) => url(n))
    const { json, form } = await createBoth({ name: 'Ten', price: '1', images: ten.join(',') })
    expect(form.status).toBe(201)
    expect((form.body as Product).images).toEqual(ten)
    expect(json.body).toEqual(badRequest('images must be an array'))
    const jsonTen = await server.request<Product>('POST', '/api/v0/products', { key, body: { name: 'Ten', price: '1', images: ten } })
    expect(jsonTen.body.images).toEqual(ten)
    const eleven = [...ten, url(10)]
    expect((await server.request('POST', '/api/v0/products', { key, body: { name: 'Eleven', price: '1', images: eleven } })).body).toEqual(
      badRequest('images must contain no more than 10 elements'),
    )
    expect((await send(server, 'POST', '/api/v0/products', key, urlEncoded({ name: 'Eleven', price: '1', images: eleven }), FORM)).body).toEqual(
      badRequest('images must contain no more than 10 elements'),
    )
  })

  it('a URL of 2048 characters is accepted, 2049 refused', async () => {
    const of = (length: number) => `https://cdn.example.com/${'a'.repeat(length - 'https://cdn.example.com/'.length)}`
    expect((await server.request('POST', '/api/v0/products', { key, body: { name: 'U', price: '1', images: [of(2048)] } })).status).toBe(201)
    expect((await server.request('POST', '/api/v0/products', { key, body: { name: 'U', price: '1', images: [of(2049)] } })).body).toEqual(
      badRequest('images[0] must be shorter than or equal to 2048 characters'),
    )
  })

  it('only http and https URLs', async () => {
    for (const bad of ['ftp://cdn.example.com/a.png', 'not a url', 'javascript:alert(1)', '/relative.png', 'https://']) {
      const res = await server.request('POST', '/api/v0/products', { key, body: { name: 'U', price: '1', images: ['https://ok.example.com/a.png', bad] } })
      expect(res.body, bad).toEqual(badRequest('images[1] must be an http or https URL'))
    }
  })

  it("a form's repeated images values add up; an empty value is no image", async () => {
    const res = await send<Product>(server, 'POST', '/api/v0/products', key, `name=R&price=1&images=${encodeURIComponent(url(1))}&images=${encodeURIComponent(`${url(2)},${url(3)}`)}&images=`, FORM)
    expect(res.body.images).toEqual([url(1), url(2), url(3)])
  })
})

describe('GET /api/v0/products', () => {
  let lister: TestKey
  const made: Product[] = []
  beforeAll(async () => {
    lister = await server.createKey()
    const specs = [
      { name: 'Alpha Mug', currency: 'USD', status: 'ACTIVE' },
      { name: 'Beta mug', currency: 'EUR', status: 'INACTIVE' },
      { name: 'Gamma Plate', currency: 'EUR', status: 'ACTIVE' },
      { name: '100% cotton', currency: 'JPY', status: 'ACTIVE', price: '100' },
      { name: 'Delta plate', currency: 'USD', status: 'ACTIVE' },
    ]
    for (const spec of specs) made.push(await create(lister, { price: '1.00', ...spec }))
  })

  const list = (query: string) => server.request<ProductList>('GET', `/api/v0/products${query}`, { key: lister })

  it('pages newest first, with the total, skip and take (defaults 0 and 10)', async () => {
    const all = await list('')
    expect(all.body).toEqual({ data: [...made].reverse(), total: 5, skip: 0, take: 10 })
    const page = await list('?skip=1&take=2')
    expect(page.body).toEqual({ data: [made[3], made[2]], total: 5, skip: 1, take: 2 })
    expect((await list('?skip=5')).body).toEqual({ data: [], total: 5, skip: 5, take: 10 })
  })

  it('filters by name (partial, case-insensitive, % literal), status and currency, the total counting the filtered', async () => {
    expect((await list('?name=MUG')).body).toMatchObject({ data: [made[1], made[0]], total: 2 })
    expect((await list('?name=100%25')).body).toMatchObject({ data: [made[3]], total: 1 })
    expect((await list('?name=%25')).body).toMatchObject({ data: [made[3]], total: 1 })
    expect((await list('?status=INACTIVE')).body).toMatchObject({ data: [made[1]], total: 1 })
    expect((await list('?currency=EUR&status=ACTIVE')).body).toMatchObject({ data: [made[2]], total: 1 })
    expect((await list('?name=plate&take=1')).body).toEqual({ data: [made[4]], total: 2, skip: 0, take: 1 })
  })

  it('refuses take and skip out of range, and unknown filter values', async () => {
    expect((await list('?take=0')).body).toEqual(badRequest('take must not be less than 1'))
    expect((await list('?take=101')).body).toEqual(badRequest('take must not be greater than 100'))
    expect((await list('?take=100')).status).toBe(200)
    expect((await list('?skip=-1')).body).toEqual(badRequest('skip must not be less than 0'))
    expect((await list('?status=active')).status).toBe(400)
    expect((await list('?currency=usd')).status).toBe(400)
  })

  it("another application's products are not listed", async () => {
    const res = await server.request<ProductList>('GET', '/api/v0/products?take=100', { key: otherKey })
    expect(res.body.data.filter((product) => made.some((mine) => mine.id === product.id))).toEqual([])
  })
})

describe('GET /api/v0/products/:id', () => {
  it('404 for a missing id and for another application\'s product; 400 for a malformed id', async () => {
    const product = await create(key)
    expect((await server.request('GET', `/api/v0/products/${MISSING_UUID}`, { key })).body).toEqual(NOT_FOUND)
    expect((await server.request('GET', `/api/v0/products/${product.id}`, { key: otherKey })).body).toEqual(NOT_FOUND)
    expect((await server.request('GET', '/api/v0/products/not-a-uuid', { key })).body).toEqual(badRequest('Invalid product ID format'))
    expect((await server.request('GET', `/api/v0/products/${product.id.toUpperCase()}`, { key })).status).toBe(200)
  })
})

describe('PUT /api/v0/products/:id', () => {
  it('changes only the fields given, in JSON and url-encoded, and emits product.updated', async () => {
    const own = await server.createKey()
    const product = await create(own, { name: 'Before', description: 'kept', price: '10.00', stockCount: 5 })
    const json = await server.request<Product>('PUT', `/api/v0/products/${product.id}`, { key: own, body: { name: 'After', stockCount: 4 } })
    expect(json.status).toBe(200)
    expect(json.body).toEqual({ ...product, name: 'After', stockCount: 4, updated_at: expect.stringMatching(ISO_MS) })
    const form = await send<Product>(server, 'PUT', `/api/v0/products/${product.id}`, own, urlEncoded({ price: 12.34, status: 'INACTIVE' }), FORM)
    expect(form.body).toMatchObject({ name: 'After', description: 'kept', price: '12.34', status: 'INACTIVE', stockCount: 4 })
    const events = await eventsOf(own.appId, 'product.updated')
    expect(events.map((event) => event.data)).toEqual([json.body, form.body])
  })

  it('an empty body changes nothing, not even updated_at, and emits nothing', async () => {
    const own = await server.createKey()
    const product = await create(own)
    const res = await server.request<Product>('PUT', `/api/v0/products/${product.id}`, { key: own, body: {} })
    expect(res.body).toEqual(product)
    expect(await eventsOf(own.appId, 'product.updated')).toEqual([])
  })

  it('a price without a currency is read in the product\'s currency', async () => {
    const product = await create(key, { price: '100', currency: 'JPY' })
    expect((await server.request('PUT', `/api/v0/products/${product.id}`, { key, body: { price: '1.50' } })).body).toEqual(
      badRequest('price must be a whole number in JPY, which has no minor unit'),
    )
    expect((await server.request<Product>('PUT', `/api/v0/products/${product.id}`, { key, body: { price: '150' } })).body.price).toBe('150')
  })

  it('a currency without a price keeps the amount when the new currency can hold it', async () => {
    const product = await create(key, { price: '10.00', currency: 'USD' })
    expect((await server.request<Product>('PUT', `/api/v0/products/${product.id}`, { key, body: { currency: 'JPY' } })).body).toMatchObject({ price: '10', currency: 'JPY' })
    expect((await server.request<Product>('PUT', `/api/v0/products/${product.id}`, { key, body: { currency: 'EUR' } })).body).toMatchObject({ price: '10.00', currency: 'EUR' })
    const cents = await create(key, { price: '10.50', currency: 'USD' })
    const refused = await server.request('PUT', `/api/v0/products/${cents.id}`, { key, body: { currency: 'JPY' } })
    expect(refused.body).toEqual(badRequest('The price 10.50 USD cannot be expressed in JPY: send price with currency'))
    expect((await server.request<Product>('GET', `/api/v0/products/${cents.id}`, { key })).body).toEqual(cents)
    expect((await server.request<Product>('PUT', `/api/v0/products/${cents.id}`, { key, body: { currency: 'JPY', price: 1500 } })).body).toMatchObject({ price: '1500', currency: 'JPY' })
  })

  it('refuses what create refuses, and changes nothing', async () => {
    const product = await create(key)
    for (const [body, message] of [
      [{ name: '' }, 'name should not be empty'],
      [{ price: '0' }, 'price must be greater than 0'],
      [{ price: '1.001' }, 'price has more than 2 decimals, the most USD has'],
      [{ images: ['ftp://x.example/a.png'] }, 'images[0] must be an http or https URL'],
      [{ extra: true }, 'property extra should not exist'],
    ] as const) {
      expect((await server.request('PUT', `/api/v0/products/${product.id}`, { key, body })).body).toEqual(badRequest(message))
    }
    expect((await server.request<Product>('GET', `/api/v0/products/${product.id}`, { key })).body).toEqual(product)
  })

  it("404 for another application's product and for a missing one, whatever the body", async () => {
    const product = await create(key)
    expect((await server.request('PUT', `/api/v0/products/${product.id}`, { key: otherKey, body: { name: 'stolen' } })).body).toEqual(NOT_FOUND)
    expect((await server.request('PUT', `/api/v0/products/${MISSING_UUID}`, { key, body: { name: 'x' } })).body).toEqual(NOT_FOUND)
    expect((await server.request('PUT', '/api/v0/products/nope', { key, body: { name: 'x' } })).body).toEqual(badRequest('Invalid product ID format'))
    expect((await server.request<Product>('GET', `/api/v0/products/${product.id}`, { key })).body).toEqual(product)
  })
})

describe('DELETE /api/v0/products/:id', () => {
  it('removes the product for good, answers it as it was, and emits product.deleted', async () => {
    const own = await server.createKey()
    const product = await create(own)
    const res = await server.request<Product>('DELETE', `/api/v0/products/${product.id}`, { key: own })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(product)
    expect((await server.request('GET', `/api/v0/products/${product.id}`, { key: own })).body).toEqual(NOT_FOUND)
    expect((await server.request('DELETE', `/api/v0/products/${product.id}`, { key: own })).body).toEqual(NOT_FOUND)
    expect((await eventsOf(own.appId, 'product.deleted')).map((event) => event.data)).toEqual([product])
  })

  it("another application's product: 404, and it stays", async () => {
    const product = await create(key)
    expect((await server.request('DELETE', `/api/v0/products/${product.id}`, { key: otherKey })).body).toEqual(NOT_FOUND)
    expect((await server.request('GET', `/api/v0/products/${product.id}`, { key })).status).toBe(200)
  })
})

describe('encodings', () => {
  it('another media type: 415 naming the three read', async () => {
    const res = await send(server, 'POST', '/api/v0/products', key, 'name=x', 'text/plain')
    expect(res.status).toBe(415)
    expect(res.body).toEqual({ statusCode: 415, error: 'Unsupported Media Type', message: 'Unsupported Media Type: send application/json, application/x-www-form-urlencoded or multipart/form-data' })
  })

  it('a form in another charset or content coding: 415', async () => {
    expect((await send(server, 'POST', '/api/v0/products', key, 'name=x&price=1', `${FORM}; charset=iso-8859-1`)).status).toBe(415)
    expect((await send(server, 'POST', '/api/v0/products', key, 'name=x&price=1', FORM, { 'content-encoding': 'gzip' })).status).toBe(415)
    expect((await send(server, 'POST', '/api/v0/products', key, 'name=x&price=1', `${FORM}; charset="utf-8"`)).status).toBe(201)
  })

  it('a malformed form: bad percent-escapes, non-UTF-8 escapes, raw non-ASCII, a field twice', async () => {
    const refuse = async (body: string, message: string) => expect((await send(server, 'POST', '/api/v0/products', key, body, FORM)).body).toEqual(badRequest(message))
    await refuse('name=%zz&price=1', 'Request body is not valid application/x-www-form-urlencoded: a percent-escape is malformed or not UTF-8')
    await refuse('name=%FF&price=1', 'Request body is not valid application/x-www-form-urlencoded: a percent-escape is malformed or not UTF-8')
    await refuse('name=caf\u00e9&price=1', 'Request body is not valid application/x-www-form-urlencoded: send non-ASCII text percent-encoded')
    await refuse('name=a&name=b&price=1', 'The field "name" is given more than once')
    await refuse('name=%00&price=1', 'name must not contain control characters')
    await refuse('__proto__=x&name=a&price=1', 'property __proto__ should not exist')
    await refuse(Array.from({ length: 65 }, (_, n) => `f${n}=1`).join('&'), 'Request body has more than 64 fields')
  })

  it('a form may list the images as images[] values, one image each (url-encoded and multipart, create and update)', async () => {
    const listed = 'name=Bracketed&price=3&images%5B%5D=https%3A%2F%2Fa.example%2F1.png&images%5B%5D=https%3A%2F%2Fa.example%2F2%2Cwide.png'
    const created = await send<Product>(server, 'POST', '/api/v0/products', key, listed, FORM)
    expect(created.status, created.text).toBe(201)
    expect(created.body.images).toEqual(['https://a.example/1.png', 'https://a.example/2,wide.png'])
    const parts = [
      { name: 'images[]', value: 'https://a.example/3.png' },
      { name: 'images[]', value: 'https://a.example/4.png' },
    ]
    const updated = await send<Product>(server, 'PUT', `/api/v0/products/${created.body.id}`, key, multipartBody(parts), MULTIPART)
    expect(updated.status, updated.text).toBe(200)
    expect(updated.body.images).toEqual(['https://a.example/3.png', 'https://a.example/4.png'])
  })

  it('images and images[] in one form, and images[] values that are no image URL: 400, nothing written', async () => {
    const own = await server.createKey()
    const mixed = 'The images are sent both as "images" and as "images[]": send the list under one of the two names'
    const refusals: Array<[string, string]> = [
      ['name=x&price=1&images=https%3A%2F%2Fa.example%2F1.png&images%5B%5D=https%3A%2F%2Fa.example%2F2.png', mixed],
      ['name=x&price=1&images%5B%5D=https%3A%2F%2Fa.example%2F2.png&images=', mixed],
      ['name=x&price=1&images%5B%5D=', 'images[0] should not be empty'],
      ['name=x&price=1&images%5B%5D=https%3A%2F%2Fa.example%2F1.png&images%5B%5D=ftp%3A%2F%2Fa.example%2F2.png', 'images[1] must be an http or https URL'],
      ['name=x&price=1&images%5B%5D=%20https%3A%2F%2Fa.example%2F1.png', 'images[0] must be an http or https URL'],
      ['name=x&price=1&images%5B0%5D=https%3A%2F%2Fa.example%2F1.png', 'property images[0] should not exist'],
    ]
    for (const [form, message] of refusals) {
      expect((await send(server, 'POST', '/api/v0/products', own, form, FORM)).body, form).toEqual(badRequest(message))
    }
    const parts = [
      { name: 'name', value: 'x' },
      { name: 'price', value: '1' },
      { name: 'images[]', value: 'https://a.example/1.png' },
      { name: 'images', value: 'https://a.example/2.png' },
    ]
    expect((await send(server, 'POST', '/api/v0/products', own, multipartBody(parts), MULTIPART)).body).toEqual(badRequest(mixed))
    // JSON has lists of its own: images[] is no field of it.
    expect((await server.request('POST', '/api/v0/products', { key: own, body: { name: 'x', price: '1', 'images[]': ['https://a.example/1.png'] } })).body).toEqual(
      badRequest('property images[] should not exist'),
    )
    expect((await server.request<ProductList>('GET', '/api/v0/products', { key: own })).body.total).toBe(0)
  })

  it('a form decodes + as a space and UTF-8 escapes', async () => {
    const res = await send<Product>(server, 'POST', '/api/v0/products', key, 'name=Caf%C3%A9+cr%C3%A8me&price=1', FORM)
    expect(res.body.name).toBe('Café crème')
  })

  it('a form over 1 MiB: 413', async () => {
    const res = await send(server, 'POST', '/api/v0/products', key, `name=x&price=1&description=${'a'.repeat(1024 * 1024)}`, FORM)
    expect(res.status).toBe(413)
  })
})
