import { deflateSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'

/** The merchant on the hosted pages: set by an owner's key (branding:write), shown on every page of the application. */

let server: TestServer
let key: TestKey

/** A real PNG of one pixel of `rgb`: what a merchant uploads as a logo. */
function png(rgb: [number, number, number]): Buffer {
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
  header.writeUInt32BE(1, 0)
  header.writeUInt32BE(1, 4)
  header.set([8, 2, 0, 0, 0], 8)
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.from([0, ...rgb]))), chunk('IEND', Buffer.alloc(0))])
}

async function putLogo(bytes: Buffer, type: string, caller: TestKey = key): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.baseUrl}/api/v0/branding/logo`, { method: 'PUT', headers: { ...caller.headers, 'content-type': type }, body: bytes })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey({ environment: 'development' })
})
afterAll(async () => {
  await server?.close()
})

describe('branding', () => {
  it('has deliberate defaults: the application name, a deep blue, no support email, no logo', async () => {
    const res = await server.request<Record<string, unknown>>('GET', '/api/v0/branding', { key })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ brand_color: '#1d4ed8', support_email: null, logo_url: null })
    expect(typeof res.body.display_name).toBe('string')
  })

  it('an owner key sets the name, colour and support email; wrong values are refused naming the field; null goes back to the default', async () => {
    const set = await server.request<Record<string, unknown>>('PUT', '/api/v0/branding', { key, body: { display_name: 'Acme Widgets', brand_color: '#0F766E', support_email: 'billing@acme.example' } })
    expect(set.status, set.text).toBe(200)
    expect(set.body).toEqual({ display_name: 'Acme Widgets', brand_color: '#0f766e', support_email: 'billing@acme.example', logo_url: null })
    const badColor = await server.request('PUT', '/api/v0/branding', { key, body: { brand_color: 'red' } })
    expect(badColor.status).toBe(400)
    expect(badColor.text).toContain('brand_color')
    const badEmail = await server.request('PUT', '/api/v0/branding', { key, body: { support_email: 'nobody' } })
    expect(badEmail.status).toBe(400)
    expect(badEmail.text).toContain('support_email')
    const back = await server.request<Record<string, unknown>>('PUT', '/api/v0/branding', { key, body: { brand_color: null } })
    expect(back.body).toMatchObject({ display_name: 'Acme Widgets', brand_color: '#1d4ed8' })
    await server.request('PUT', '/api/v0/branding', { key, body: { brand_color: '#0f766e' } })
  })

  it('needs branding:write to change and branding:read to read', async () => {
    const reader = await server.createKey({ appId: key.appId, scopes: ['branding:read'], environment: 'development' })
    expect((await server.request('GET', '/api/v0/branding', { key: reader })).status).toBe(200)
    expect((await server.request('PUT', '/api/v0/branding', { key: reader, body: { display_name: 'x' } })).status).toBe(403)
    expect((await putLogo(png([1, 2, 3]), 'image/png', reader)).status).toBe(403)
  })

  it('the logo is checked as a product image is, by its first bytes, and served by this server', async () => {
    const notImage = await putLogo(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'image/png')
    expect(notImage.status).toBe(400)
    expect(String(notImage.body.message)).toContain('not a JPEG, PNG or WebP')
    const uploaded = await putLogo(png([15, 118, 110]), 'image/png')
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200)
    const logoUrl = String(uploaded.body.logo_url)
    expect(logoUrl).toMatch(new RegExp(`^${server.baseUrl}/brand-logos/[0-9a-f-]{36}$`))
    const served = await fetch(logoUrl)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toBe('image/png')
    expect(served.headers.get('x-content-type-options')).toBe('nosniff')
    expect(Buffer.from(await served.arrayBuffer()).equals(png([15, 118, 110]))).toBe(true)

    // A new logo replaces the old, whose URL is gone.
    const replaced = await putLogo(png([200, 10, 10]), 'application/octet-stream')
    expect(replaced.status).toBe(200)
    expect((await fetch(logoUrl)).status).toBe(404)
    const removed = await server.request<Record<string, unknown>>('DELETE', '/api/v0/branding/logo', { key })
    expect(removed.body.logo_url).toBeNull()
    expect((await fetch(String(replaced.body.logo_url))).status).toBe(404)
    await putLogo(png([15, 118, 110]), 'image/png')
  })

  it('every hosted page of the application shows the merchant: name, logo, colour and support email, escaped', async () => {
    await server.request('PUT', '/api/v0/branding', { key, body: { display_name: 'Acme <b>Widgets</b>' } })
    const link = await server.request<{ url: string }>('POST', '/api/v0/payment-links', { key, body: { title: 'Tip jar', url: `tip-jar-${Date.now()}`, linkType: 'DONATION', allowQuantityAdjustment: false, collectTax: false, collectAddress: false, allowMobilePayment: false, currency: 'usdc' } })
    expect(link.status, link.text).toBe(201)
    const page = await fetch(`${server.baseUrl}/pay/${key.appId}/${link.body.url}`)
    const html = await page.text()
    expect(html).toContain('<p class="brand-name">Acme &lt;b&gt;Widgets&lt;/b&gt;</p>')
    expect(html).toMatch(/<img class="brand-logo" src="\/brand-logos\/[0-9a-f-]{36}" alt="">/)
    expect(html).toContain(':root { --brand: #0f766e; --on-brand: #ffffff; }')
    expect(html).toContain('<a href="mailto:billing@acme.example">billing@acme.example</a>')
    await server.request('PUT', '/api/v0/branding', { key, body: { display_name: 'Acme Widgets' } })
  })
})
