import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { type PythonSdkCall, pythonSdkRequest } from '../../helpers/python-sdk.js'
import { imagesDirectory, type Product, storedFiles } from './fixtures.js'

/**
 * The product calls of the platform's Python SDK, each sent as it puts it on the wire
 * (test/helpers/python-sdk.ts): its multipart forms list `images` as `images[]` parts, and its
 * upload_images(id) sends no body at all.
 */

let server: TestServer
let key: TestKey
let directory: string

beforeAll(async () => {
  directory = imagesDirectory()
  server = await startTestServer({ config: { productImagesDir: directory } })
  key = await server.createKey()
})
afterAll(async () => server.close())

const IMAGES = ['https://cdn.example.com/front.png', 'https://cdn.example.com/side,large.png']

/** A call of the SDK's client, configured (as its users do) with an idempotency key of its own. */
function sdk<T>(call: Omit<PythonSdkCall, 'key' | 'idempotencyKey'>) {
  return pythonSdkRequest<T>(server.baseUrl, { ...call, key, idempotencyKey: crypto.randomUUID() })
}

/** client.v0.products.create(description=..., name=..., price=19.99, images=[...], stock_count=40) */
async function createdBySdk(images: readonly string[] = IMAGES): Promise<Product> {
  const res = await sdk<Product>({
    method: 'POST',
    path: '/api/v0/products',
    form: [
      ['description', 'Made by the Python SDK'],
      ['name', 'Python Widget'],
      ['price', 19.99],
      ['currency', 'USD'],
      ['images', images],
      ['stockCount', '40.0'],
    ],
  })
  expect(res.status, res.text).toBe(201)
  return res.body
}

describe('the Python SDK', () => {
  it('Python SDK: products.create with images sends images[] parts', async () => {
    const product = await createdBySdk()
    // Each part is one image, taken whole: the comma in the second URL is the URL's.
    expect(product).toMatchObject({ name: 'Python Widget', description: 'Made by the Python SDK', price: '19.99', currency: 'USD', stockCount: 40, images: IMAGES })
    expect((await server.request<Product>('GET', `/api/v0/products/${product.id}`, { key })).body).toEqual(product)
  })

  it('Python SDK: products.create with one image sends one images[] part; with none, no images part', async () => {
    expect((await createdBySdk(['https://cdn.example.com/only.png'])).images).toEqual(['https://cdn.example.com/only.png'])
    expect((await createdBySdk([])).images).toEqual([])
  })

  it('Python SDK: products.update with images sends images[] parts, which replace the images', async () => {
    const product = await createdBySdk()
    const res = await sdk<Product>({ method: 'PUT', path: `/api/v0/products/${product.id}`, form: [['images', ['https://cdn.example.com/new.png']], ['price', 21.5]] })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ images: ['https://cdn.example.com/new.png'], price: '21.50', name: 'Python Widget' })
  })

  it('Python SDK: products.update with no field sends an empty multipart form, which changes nothing', async () => {
    const product = await createdBySdk([])
    const res = await sdk<Product>({ method: 'PUT', path: `/api/v0/products/${product.id}`, form: [] })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual(product)
  })

  it('Python SDK: products.upload_images(id) sends no body, and is told no file was sent', async () => {
    const product = await createdBySdk([])
    const before = storedFiles(directory)
    const res = await sdk({ method: 'POST', path: `/api/v0/products/${product.id}/images` })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'No file was sent: send image files in the images field of a multipart/form-data body, or images as URLs' })
    expect(storedFiles(directory)).toEqual(before)
    expect((await server.request<Product>('GET', `/api/v0/products/${product.id}`, { key })).body).toEqual(product)
  })
})
