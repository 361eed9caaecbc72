import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { BOUNDARY, image, imageIdOf, imagesDirectory, MB5, MULTIPART, multipartBody, type Part, type Product, send, storedFiles } from './fixtures.js'

interface ErrorBody {
  statusCode: number
  error: string
  message: string
}

let server: TestServer
let key: TestKey
let otherKey: TestKey
let directory: string

beforeAll(async () => {
  directory = imagesDirectory()
  server = await startTestServer({ config: { productImagesDir: directory } })
  key = await server.createKey()
  otherKey = await server.createKey()
})
afterAll(async () => server.close())

function badRequest(message: string): ErrorBody {
  return { statusCode: 400, error: 'Bad Request', message }
}

const NOT_FOUND: ErrorBody = { statusCode: 404, error: 'Not Found', message: 'Product not found' }
const IMAGE_NOT_FOUND: ErrorBody = { statusCode: 404, error: 'Not Found', message: 'Image not found' }

const NO_FILE_SENT = 'No file was sent: send image files in the images field of a multipart/form-data body, or images as URLs'

const file = (content: Buffer, filename = 'photo.png', name = 'images'): Part => ({ name, filename, content, type: 'image/png' })
const field = (name: string, value: string): Part => ({ name, value })
const PRODUCT_FIELDS = [field('name', 'Pictured'), field('price', '19.99')]

function createMultipart(parts: readonly Part[], caller: TestKey = key, headers: Record<string, string> = {}) {
  return send<Product>(server, 'POST', '/api/v0/products', caller, multipartBody(parts), MULTIPART, headers)
}

async function createWith(parts: readonly Part[]): Promise<Product> {
  const res = await createMultipart([...PRODUCT_FIELDS, ...parts])
  expect(res.status, res.text).toBe(201)
  return res.body
}

async function bytesAt(url: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const response = await fetch(url)
  return { status: response.status, type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) }
}

/** Runs `act` and checks the store holds the same files afterwards (a refused request stores nothing). */
async function storesNothing(act: () => Promise<unknown>): Promise<void> {
  const before = storedFiles(directory).sort()
  await act()
  expect(storedFiles(directory).sort()).toEqual(before)
}

describe('multipart/form-data with image files', () => {
  it('stores each file and serves it back, without a key, at the URL in the product', async () => {
    const png = image('png', 1000)
    const jpeg = image('jpeg', 2000)
    const webp = image('webp', 3000)
    const product = await createWith([field('images', 'https://cdn.example.com/first.png'), file(png), file(jpeg, 'b.jpg'), file(webp, 'c.webp')])
    expect(product.images).toHaveLength(4)
    expect(product.images[0]).toBe('https://cdn.example.com/first.png')
    for (const [url, bytes, type] of [
      [product.images[1], png, 'image/png'],
      [product.images[2], jpeg, 'image/jpeg'],
      [product.images[3], webp, 'image/webp'],
    ] as const) {
      expect(url).toMatch(new RegExp(`^${server.baseUrl}/api/v0/products/${product.id}/images/[0-9a-f-]{36}$`))
      expect(await bytesAt(url ?? '')).toEqual({ status: 200, type, bytes })
    }
  })

  it('judges the type by the bytes: declared type and name are ignored', async () => {
    const renamed = await createWith([{ name: 'images', filename: 'not-an-image.txt', content: image('jpeg'), type: 'text/plain' }])
    expect((await bytesAt(renamed.images[0] ?? '')).type).toBe('image/jpeg')
    for (const [content, name] of [
      [Buffer.from('this is plain text, not a picture'), 'photo.png'],
      [Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;'), 'anim.gif'],
      [Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'short.png'],
      [Buffer.alloc(0), 'empty.png'],
    ] as const) {
      await storesNothing(async () => {
        const res = await createMultipart([...PRODUCT_FIELDS, file(image('png')), file(content, name)])
        expect(res.status).toBe(400)
        expect(res.body).toEqual(badRequest(`images[1] (${JSON.stringify(name)}) is not a JPEG, PNG or WebP image (judged by its bytes)`))
      })
    }
  })

  it('10 images are accepted; an 11th is refused and nothing is stored', async () => {
    const ten = Array.from({ length: 10 }, (_, n) => file(image('png', 100, n)))
    const product = await createWith(ten)
    expect(product.images).toHaveLength(10)
    await storesNothing(async () => {
      const res = await createMultipart([...PRODUCT_FIELDS, ...ten, file(image('png'))])
      expect(res.body).toEqual(badRequest('A product has at most 10 images'))
    })
    await storesNothing(async () => {
      const res = await createMultipart([...PRODUCT_FIELDS, field('images', 'https://a.example/1.png,https://a.example/2.png'), ...ten.slice(1)])
      expect(res.body).toEqual(badRequest('A product has at most 10 images'))
    })
  })

  it('5 MB exactly is accepted; 5 MB and one byte is 413 and nothing is stored', async () => {
    const exact = await createWith([file(image('png', MB5))])
    expect((await bytesAt(exact.images[0] ?? '')).bytes.length).toBe(MB5)
    await storesNothing(async () => {
      const res = await createMultipart([...PRODUCT_FIELDS, file(image('png')), file(image('png', MB5 + 1), 'big.png')])
      expect(res.status).toBe(413)
      expect(res.body).toEqual({ statusCode: 413, error: 'Payload Too Large', message: 'images[1] ("big.png") is larger than 5 MB (5242880 bytes), the most an image may be' })
    })
  })

  it('a refusal after the files arrived (validation, another field) stores nothing', async () => {
    await storesNothing(async () => {
      const res = await createMultipart([field('name', 'No price'), file(image('png'))])
      expect(res.body).toEqual(badRequest('price is required'))
    })
    await storesNothing(async () => {
      const res = await createMultipart([...PRODUCT_FIELDS, field('price', '2'), file(image('png'))])
      expect(res.body).toEqual(badRequest('The field "price" is given more than once'))
    })
    await storesNothing(async () => {
      const res = await createMultipart([field('name', 'Bad price'), field('price', '1.001'), file(image('png'))])
      expect(res.body).toEqual(badRequest('price has more than 2 decimals, the most USD has'))
    })
  })

  it('a file input left empty (no name, no bytes) is no image; a file in another field is refused', async () => {
    const product = await createWith([{ name: 'images', filename: '', content: Buffer.alloc(0) }])
    expect(product.images).toEqual([])
    const single = await createWith([file(image('png'), 'one.png', 'image')])
    expect(single.images).toHaveLength(1)
    const res = await createMultipart([...PRODUCT_FIELDS, file(image('png'), 'x.png', 'photo')])
    expect(res.body).toEqual(badRequest('Files go in the "images" field (got a file in "photo")'))
  })

  it('a malformed multipart body: 400 naming the problem, nothing stored', async () => {
    const valid = multipartBody([...PRODUCT_FIELDS, file(image('png'))])
    const cases: Array<[Buffer | string, string, string]> = [
      [valid, 'multipart/form-data', 'multipart/form-data needs a boundary parameter in its Content-Type'],
      [valid, `multipart/form-data; boundary=${'x'.repeat(71)}`, 'The multipart boundary must be 1 to 70 characters (RFC 2046)'],
      [valid.subarray(0, valid.length - 20), MULTIPART, 'The multipart body ended before its closing boundary'],
      [`--${BOUNDARY}\r\nContent-Type: text/plain\r\n\r\nx\r\n--${BOUNDARY}--\r\n`, MULTIPART, 'Every multipart part needs a Content-Disposition: form-data header'],
      [`--${BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${BOUNDARY}--\r\n`, MULTIPART, 'Every multipart part needs a name (Content-Disposition: form-data; name="...")'],
      [`--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\n\xff\xfe\r\n--${BOUNDARY}--\r\n`, MULTIPART, 'The field "name" is not valid UTF-8'],
      [`--${BOUNDARY}\r\nContent-Disposition: form-data; name="description"\r\n\r\n${'a'.repeat(64 * 1024 + 1)}\r\n--${BOUNDARY}--\r\n`, MULTIPART, 'The field "description" is longer than 65536 bytes'],
      [`--${BOUNDARY}\r\nX-${'h'.repeat(9000)}: 1\r\n\r\nx\r\n--${BOUNDARY}--\r\n`, MULTIPART, "A multipart part's headers are longer than 8192 bytes"],
    ]
    for (const [body, contentType, message] of cases) {
      await storesNothing(async () => {
        const res = await send(server, 'POST', '/api/v0/products', key, typeof body === 'string' ? Buffer.from(body, 'latin1') : body, contentType)
        expect(res.body, message).toEqual(badRequest(message))
      })
    }
  })

  it('a Content-Type boundary in quotes, a preamble and an epilogue are read as RFC 2046 has them', async () => {
    const body = Buffer.concat([Buffer.from('This is the preamble.\r\n'), multipartBody([...PRODUCT_FIELDS, file(image('png'))]), Buffer.from('and an epilogue\r\n')])
    const res = await send<Product>(server, 'POST', '/api/v0/products', key, body, `multipart/form-data; boundary="${BOUNDARY}"`)
    expect(res.status, res.text).toBe(201)
    expect(res.body.images).toHaveLength(1)
  })
})

describe('PUT replaces the images', () => {
  it('keeps the images it names by URL (any host, or the path alone), adds files, drops the rest and their bytes', async () => {
    const a = image('png', 500, 1)
    const b = image('jpeg', 500, 2)
    const product = await createWith([file(a), file(b), field('images', 'https://cdn.example.com/linked.png')])
    const [urlA, urlB] = product.images
    const fileB = storedFiles(directory).find((path) => path.endsWith(imageIdOf(urlB ?? '')))
    expect(fileB).toBeDefined()
    // A's URL through another host name of the same server, then a new file.
    const viaLocalhost = (urlA ?? '').replace('127.0.0.1', 'localhost')
    const c = image('webp', 500, 3)
    const res = await send<Product>(server, 'PUT', `/api/v0/products/${product.id}`, key, multipartBody([field('images', viaLocalhost), file(c, 'c.webp')]), MULTIPART)
    expect(res.status, res.text).toBe(200)
    expect(res.body.images).toEqual([urlA, expect.stringMatching(/\/images\/[0-9a-f-]{36}$/)])
    expect(await bytesAt(urlA ?? '')).toMatchObject({ status: 200, bytes: a })
    expect(await bytesAt(res.body.images[1] ?? '')).toMatchObject({ status: 200, bytes: c })
    // B is no longer the product's: its URL answers 404 and its bytes are gone.
    expect((await bytesAt(urlB ?? '')).status).toBe(404)
    expect(storedFiles(directory)).not.toContain(fileB)
    // The path alone names an own image too; an empty list clears them all.
    const path = new URL(urlA ?? '').pathname
    expect((await server.request<Product>('PUT', `/api/v0/products/${product.id}`, { key, body: { images: [path] } })).body.images).toEqual([urlA])
    const cleared = await server.request<Product>('PUT', `/api/v0/products/${product.id}`, { key, body: { images: [] } })
    expect(cleared.body.images).toEqual([])
    expect((await bytesAt(urlA ?? '')).status).toBe(404)
  })

  it('a PUT without images leaves them as they are', async () => {
    const product = await createWith([file(image('png'))])
    const res = await server.request<Product>('PUT', `/api/v0/products/${product.id}`, { key, body: { name: 'Renamed' } })
    expect(res.body.images).toEqual(product.images)
  })

  it("refuses another product's image URL, an own image named twice, and 11 images", async () => {
    const mine = await createWith([file(image('png'))])
    const theirs = await createWith([file(image('png'))])
    const refuse = async (images: string[], message: string) => {
      expect((await server.request('PUT', `/api/v0/products/${mine.id}`, { key, body: { images } })).body).toEqual(badRequest(message))
    }
    await refuse([theirs.images[0] ?? ''], 'images[0] is the URL of an image this product does not have: upload the image instead')
    await refuse([mine.images[0] ?? '', mine.images[0] ?? ''], 'images[1] names the same uploaded image twice')
    await storesNothing(async () => {
      const eleven = Array.from({ length: 11 }, () => file(image('png')))
      const res = await send(server, 'PUT', `/api/v0/products/${mine.id}`, key, multipartBody(eleven), MULTIPART)
      expect(res.body).toEqual(badRequest('A product has at most 10 images'))
    })
    expect((await server.request<Product>('GET', `/api/v0/products/${mine.id}`, { key })).body.images).toEqual(mine.images)
  })

  it("another application's product: 404 before the files are read, and nothing is stored", async () => {
    const product = await createWith([])
    await storesNothing(async () => {
      const res = await send(server, 'PUT', `/api/v0/products/${product.id}`, otherKey, multipartBody([file(image('png', MB5))]), MULTIPART)
      expect(res.body).toEqual(NOT_FOUND)
    })
  })
})

describe('POST /products/{id}/images appends', () => {
  const upload = (id: string, parts: readonly Part[], caller: TestKey = key) => send<Product>(server, 'POST', `/api/v0/products/${id}/images`, caller, multipartBody(parts), MULTIPART)

  it('adds files after the images the product has, up to 10 in all', async () => {
    const product = await createWith(Array.from({ length: 8 }, () => file(image('png'))))
    const added = await upload(product.id, [file(image('jpeg')), file(image('webp'))])
    expect(added.status, added.text).toBe(201)
    expect(added.body.images.slice(0, 8)).toEqual(product.images)
    expect(added.body.images).toHaveLength(10)
    await storesNothing(async () => {
      const full = await upload(product.id, [file(image('png'))])
      expect(full.body).toEqual(badRequest('A product has at most 10 images: this one has 10, so no more can be added'))
    })
  })

  it('refuses, storing nothing, more files than there is room for', async () => {
    const product = await createWith(Array.from({ length: 9 }, () => file(image('png'))))
    await storesNothing(async () => {
      const res = await upload(product.id, [file(image('png')), file(image('png'))])
      expect(res.body).toEqual(badRequest('A product has at most 10 images: this one has 9, so 1 more can be added'))
    })
    expect((await server.request<Product>('GET', `/api/v0/products/${product.id}`, { key })).body.images).toEqual(product.images)
  })

  it('takes image URLs too (JSON or a form); refuses an empty body and an image the product has', async () => {
    const product = await createWith([file(image('png'))])
    const json = await server.request<Product>('POST', `/api/v0/products/${product.id}/images`, { key, body: { images: ['https://cdn.example.com/x.png'] } })
    expect(json.status).toBe(201)
    expect(json.body.images).toEqual([...product.images, 'https://cdn.example.com/x.png'])
    const none = await server.request('POST', `/api/v0/products/${product.id}/images`, { key })
    expect(none.body).toEqual(badRequest(NO_FILE_SENT))
    const again = await server.request('POST', `/api/v0/products/${product.id}/images`, { key, body: { images: [product.images[0]] } })
    expect(again.body).toEqual(badRequest("images[0] is already one of this product's images"))
  })

  it('an upload with no file (no body, whatever its type; a form with an empty file input, or none) is told no file was sent', async () => {
    const product = await createWith([file(image('png'))])
    await storesNothing(async () => {
      const path = `/api/v0/products/${product.id}/images`
      const emptyInput: Part = { name: 'images', filename: '', content: Buffer.alloc(0) }
      for (const res of [
        await send(server, 'POST', path, key, undefined),
        await send(server, 'POST', path, key, '', 'application/json'),
        await send(server, 'POST', path, key, multipartBody([emptyInput]), MULTIPART),
        await send(server, 'POST', path, key, multipartBody([]), MULTIPART),
        await send(server, 'POST', path, key, '', 'application/x-www-form-urlencoded'),
      ]) {
        expect(res.body).toEqual(badRequest(NO_FILE_SENT))
      }
    })
    expect((await server.request<Product>('GET', `/api/v0/products/${product.id}`, { key })).body).toEqual(product)
  })

  it('files may be sent under images[] too, each in its place among the images[] URLs', async () => {
    const png = image('png', 500)
    const product = await createWith([field('images[]', 'https://cdn.example.com/a.png'), file(png, 'b.png', 'images[]'), field('images[]', 'https://cdn.example.com/c.png')])
    expect(product.images).toEqual(['https://cdn.example.com/a.png', expect.stringMatching(/\/images\/[0-9a-f-]{36}$/), 'https://cdn.example.com/c.png'])
    expect((await bytesAt(product.images[1] ?? '')).bytes).toEqual(png)
    await storesNothing(async () => {
      const res = await createMultipart([...PRODUCT_FIELDS, field('images[]', 'https://cdn.example.com/a.png'), file(image('png'))])
      expect(res.body).toEqual(badRequest('The images are sent both as "images" and as "images[]": send the list under one of the two names'))
    })
  })

  it('emits product.updated with the images', async () => {
    const own = await server.createKey()
    const created = await send<Product>(server, 'POST', '/api/v0/products', own, multipartBody(PRODUCT_FIELDS), MULTIPART)
    const res = await upload(created.body.id, [file(image('png'))], own)
    const rows = await server.database.query<{ payload: string }>('select payload from events where app_id = ? and type = ?', own.appId, 'product.updated')
    expect(rows.map((row) => (JSON.parse(row.payload) as { data: Product }).data)).toEqual([res.body])
  })

  it("another application's product: 404, nothing stored; a missing one too", async () => {
    const product = await createWith([])
    await storesNothing(async () => {
      expect((await upload(product.id, [file(image('png'))], otherKey)).body).toEqual(NOT_FOUND)
      expect((await upload('00000000-0000-4000-8000-000000000000', [file(image('png'))])).body).toEqual(NOT_FOUND)
    })
  })

  it('two uploads at once onto the same product never pass 10 images', async () => {
    const product = await createWith([])
    const six = Array.from({ length: 6 }, (_, n) => file(image('png', 2000, n)))
    const answers = await Promise.all([upload(product.id, six), upload(product.id, six)])
    expect(answers.map((res) => res.status).sort()).toEqual([201, 400])
    const after = await server.request<Product>('GET', `/api/v0/products/${product.id}`, { key })
    expect(after.body.images).toHaveLength(6)
    const stored = storedFiles(directory).map((path) => path.split('/').at(-1))
    for (const url of after.body.images) expect(stored).toContain(imageIdOf(url))
    const refused = answers.find((res) => res.status === 400)
    expect(refused?.body).toEqual(badRequest('A product has at most 10 images: this one has 6, so 4 more can be added'))
  })
})

describe('DELETE removes the images with the product', () => {
  it('their bytes are gone and their URLs answer 404', async () => {
    const product = await createWith([file(image('png')), file(image('jpeg'))])
    const ids = product.images.map(imageIdOf)
    expect(storedFiles(directory).filter((path) => ids.some((id) => path.endsWith(id)))).toHaveLength(2)
    expect((await server.request('DELETE', `/api/v0/products/${product.id}`, { key })).status).toBe(200)
    expect(storedFiles(directory).filter((path) => ids.some((id) => path.endsWith(id)))).toEqual([])
    for (const url of product.images) expect(await bytesAt(url)).toMatchObject({ status: 404 })
  })
})

describe('GET /products/{id}/images/{imageId}', () => {
  it('answers without a key, with caching and safety headers; 304 for its ETag; HEAD alike', async () => {
    const png = image('png', 4321)
    const product = await createWith([file(png)])
    const url = product.images[0] ?? ''
    const response = await fetch(url)
    expect(response.status).toBe(200)
    expect(Object.fromEntries([...response.headers].filter(([name]) => !['date', 'connection', 'keep-alive', 'x-request-id'].includes(name)))).toEqual({
      'content-type': 'image/png',
      'content-length': '4321',
      etag: `"${imageIdOf(url)}"`,
      'cache-control': 'public, max-age=86400',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      'cross-origin-resource-policy': 'cross-origin',
    })
    expect(Buffer.from(await response.arrayBuffer())).toEqual(png)
    const again = await fetch(url, { headers: { 'if-none-match': `"${imageIdOf(url)}"` } })
    expect(again.status).toBe(304)
    const head = await fetch(url, { method: 'HEAD' })
    expect([head.status, head.headers.get('content-length')]).toEqual([200, '4321'])
  })

  it('404 for an image the product does not have, a linked image and a missing product; 400 for a malformed id', async () => {
    const product = await createWith([field('images', 'https://cdn.example.com/linked.png'), file(image('png'))])
    const other = await createWith([file(image('png'))])
    const base = `${server.baseUrl}/api/v0/products`
    expect((await send(server, 'GET', `/api/v0/products/${product.id}/images/${imageIdOf(other.images[0] ?? '')}`, null, undefined)).body).toEqual(IMAGE_NOT_FOUND)
    expect((await send(server, 'GET', `/api/v0/products/${product.id}/images/00000000-0000-4000-8000-000000000000`, null, undefined)).body).toEqual(IMAGE_NOT_FOUND)
    expect((await send(server, 'GET', `/api/v0/products/00000000-0000-4000-8000-000000000000/images/${imageIdOf(product.images[1] ?? '')}`, null, undefined)).body).toEqual(IMAGE_NOT_FOUND)
    expect((await fetch(`${base}/${product.id}/images/not-a-uuid`)).status).toBe(400)
    expect(((await (await fetch(`${base}/${product.id}/images/not-a-uuid`)).json()) as ErrorBody).message).toBe('Invalid image ID format')
  })

  it('an image is stored as a file named by its id under PRODUCT_IMAGES_DIR, as uploaded', async () => {
    const jpeg = image('jpeg', 777)
    const product = await createWith([file(jpeg)])
    const id = imageIdOf(product.images[0] ?? '')
    const path = storedFiles(directory).find((candidate) => candidate.endsWith(`/${id.slice(0, 2)}/${id}`))
    expect(path).toBeDefined()
    expect(readFileSync(path ?? '')).toEqual(jpeg)
  })
})

describe('Idempotency-Key on a multipart create', () => {
  it('the same files replay the first answer and store nothing more; other files with the key: 422, nothing stored', async () => {
    const idempotencyKey = `products-${crypto.randomUUID()}`
    const parts = [...PRODUCT_FIELDS, file(image('png', 900, 4))]
    const first = await createMultipart(parts, key, { 'idempotency-key': idempotencyKey })
    expect(first.status).toBe(201)
    await storesNothing(async () => {
      const replay = await createMultipart(parts, key, { 'idempotency-key': idempotencyKey })
      expect(replay.status).toBe(201)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.body).toEqual(first.body)
      const changed = await createMultipart([...PRODUCT_FIELDS, file(image('png', 900, 5))], key, { 'idempotency-key': idempotencyKey })
      expect(changed.status).toBe(422)
    })
  })
})
