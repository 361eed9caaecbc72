import { describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, anonymous, bodySerializers, call, type CallOptions, created, key, server } from '../../openapi/generated-client.js'

export function generatedClientCases(): void {
  describe('products', () => {
    const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)])
    const PRODUCT_SHAPE = {
      id: A_UUID,
      name: expect.any(String),
      price: expect.any(String),
      currency: expect.any(String),
      status: 'ACTIVE',
      images: expect.any(Array),
      created_at: A_VALID_DATE,
      updated_at: A_VALID_DATE,
    }
    const newProduct = () => created('/api/v0/products', { name: `Widget ${crypto.randomUUID()}`, price: '9.99' })

    /** As the published client sends create and update: url-encoded, numbers as text, `images` one comma-joined value. */
    const urlEncoded = async (): Promise<CallOptions> => ({
      bodySerializer: (await bodySerializers()).urlSearchParamsBodySerializer.bodySerializer,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    })
    const multipart = async (): Promise<CallOptions> => ({ bodySerializer: (await bodySerializers()).formDataBodySerializer.bodySerializer, headers: { 'Content-Type': null } })

    it('productControllerCreate: POST /products, url-encoded as the published client sends it', async () => {
      const images = ['https://example.com/a.png', 'https://example.com/b.png']
      const { data, response } = await call('productControllerCreate', {
        ...(await urlEncoded()),
        body: { name: 'Widget', description: 'A widget', price: 19.99, currency: 'EUR', stockCount: 3, images: images.join(',') },
      })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...PRODUCT_SHAPE, name: 'Widget', description: 'A widget', price: '19.99', currency: 'EUR', stockCount: 3, images })
    })

    it('productControllerFindAll: GET /products', async () => {
      const product = await newProduct()
      const name = (await server.request<{ name: string }>('GET', `/api/v0/products/${product.id}`, { key })).body.name
      const { data, response } = await call('productControllerFindAll', { query: { name, skip: 0, take: 10 } })
      expect(response.status).toBe(200)
      expect(data).toEqual({ data: [expect.objectContaining({ ...PRODUCT_SHAPE, id: product.id })], total: 1, skip: 0, take: 10 })
    })

    it('productControllerFindOne: GET /products/{id}', async () => {
      const product = await newProduct()
      const { data, response } = await call('productControllerFindOne', { path: { id: product.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...PRODUCT_SHAPE, id: product.id, price: '9.99', currency: 'USD' })
    })

    it('productControllerUpdate: PUT /products/{id}, url-encoded (an empty images value clears the images)', async () => {
      const product = await created('/api/v0/products', { name: 'Old', price: '1.00', images: ['https://example.com/old.png'] })
      const { data, response } = await call('productControllerUpdate', { ...(await urlEncoded()), path: { id: product.id }, body: { name: 'New', price: 1500, currency: 'JPY', images: '' } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...PRODUCT_SHAPE, id: product.id, name: 'New', price: '1500', currency: 'JPY', images: [] })
    })

    it('productControllerRemove: DELETE /products/{id}', async () => {
      const product = await newProduct()
      const { data, response } = await call('productControllerRemove', { path: { id: product.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...PRODUCT_SHAPE, id: product.id })
      expect((await server.request('GET', `/api/v0/products/${product.id}`, { key })).status).toBe(404)
    })

    it('productControllerUploadImage: POST /products/{id}/images, an image file in a multipart body', async () => {
      const product = await newProduct()
      const { data, response } = await call('productControllerUploadImage', {
        ...(await multipart()),
        path: { id: product.id },
        body: { images: [new Blob([PNG], { type: 'image/png' })] },
      })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...PRODUCT_SHAPE, id: product.id, images: [expect.stringMatching(new RegExp(`^${server.baseUrl}/api/v0/products/${product.id}/images/`))] })
    })

    it('productControllerGetImage: GET /products/{id}/images/{imageId}, without a key', async () => {
      const form = new FormData()
      form.append('images', new Blob([PNG]), 'a.png')
      const product = await newProduct()
      const uploaded = await fetch(`${server.baseUrl}/api/v0/products/${product.id}/images`, { method: 'POST', headers: key.headers, body: form })
      const url = ((await uploaded.json()) as { images: string[] }).images[0] ?? ''
      const imageId = url.split('/').at(-1) ?? ''
      const { data, response } = await call('productControllerGetImage', { client: anonymous, path: { id: product.id, imageId } })
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('image/png')
      expect(data).toBeInstanceOf(Blob)
      expect(Buffer.from(await (data as Blob).arrayBuffer())).toEqual(PNG)
    })
  })
}
