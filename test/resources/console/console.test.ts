import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_SCOPES, SCOPES } from '../../../src/resources/index.js'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'

/**
 * The console's door, over HTTP without a browser: links (made by an owner's key with console:link,
 * single use, short-lived), the session cookie, CSRF on every form, sign-out, the end of sessions
 * when the application's keys stop, and the headers of its pages.
 */

let server: TestServer
let key: TestKey

interface Link {
  url: string
  role: string
  expires_at: string
}

async function link(body: Record<string, unknown> = {}, owner: TestKey = key): Promise<Link> {
  const res = await server.request<Link>('POST', '/api/v0/console/links', { key: owner, body })
  expect(res.status, res.text).toBe(201)
  return res.body
}

/** Opens a link as a browser does, returning the answer and the session cookie it set. */
async function open(url: string): Promise<{ status: number; text: string; setCookie: string | null; cookie: string | undefined }> {
  const path = new URL(url).pathname
  const response = await fetch(`${server.baseUrl}${path}`, { redirect: 'manual' })
  const setCookie = response.headers.get('set-cookie')
  return { status: response.status, text: await response.text(), setCookie, cookie: setCookie?.split(';')[0] }
}

async function page(path: string, cookie: string | undefined, init: { method?: string; form?: Record<string, string> } = {}): Promise<{ status: number; text: string; headers: Headers }> {
  const headers: Record<string, string> = cookie === undefined ? {} : { cookie }
  let body: string | undefined
  if (init.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded'
    body = new URLSearchParams(init.form).toString()
  }
  const response = await fetch(`${server.baseUrl}${path}`, { method: init.method ?? 'GET', headers, redirect: 'manual', ...(body === undefined ? {} : { body }) })
  return { status: response.status, text: await response.text(), headers: response.headers }
}

function csrfOf(html: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1]
  if (token === undefined) throw new Error('no CSRF token on the page')
  return token
}

beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey({ environment: 'development' })
})

afterAll(async () => {
  await server?.close()
})

describe('console links', () => {
  it('console:link is a scope no key has by default', () => {
    expect(SCOPES).toContain('console:link')
    expect(DEFAULT_SCOPES).not.toContain('console:link')
    // the held-money scopes (src/resources/held/) are the only other opt-in ones
    expect(DEFAULT_SCOPES).toEqual(SCOPES.filter((scope) => !['console:link', 'held:read', 'held:manage'].includes(scope)))
  })

  it('a key without console:link is refused 403; with it, a link under PUBLIC_URL/console, viewer for 15 minutes unless asked', async () => {
    const without = await server.createKey({ appId: key.appId, scopes: DEFAULT_SCOPES })
    const refused = await server.request('POST', '/api/v0/console/links', { key: without, body: {} })
    expect(refused.status).toBe(403)
    const before = Date.now()
    const made = await link()
    expect(made.url).toMatch(new RegExp(`^${server.baseUrl}/console/open/[A-Za-z0-9_-]{43}$`))
    expect(made.role).toBe('viewer')
    // The body is a JSON object, {} for the defaults.
    expect((await server.request('POST', '/api/v0/console/links', { key })).status).toBe(400)
    const ttl = Date.parse(made.expires_at) - before
    expect(ttl).toBeGreaterThan(14 * 60_000)
    expect(ttl).toBeLessThanOrEqual(15 * 60_000 + 1000)
    // Only the token's digest is stored.
    const token = made.url.split('/').pop() ?? ''
    const rows = await server.app.db.selectFrom('console_links').selectAll().execute()
    expect(JSON.stringify(rows)).not.toContain(token)
  })

  it('ttl from 1 minute to 24 hours, role viewer or admin: each boundary both sides', async () => {
    for (const ttl of ['60', '1m', '24h', '86400s']) expect((await server.request('POST', '/api/v0/console/links', { key, body: { ttl } })).status, ttl).toBe(201)
    for (const ttl of ['59', '59s', '25h', '86401', '1d', '', 'm']) {
      const res = await server.request<{ message: string }>('POST', '/api/v0/console/links', { key, body: { ttl } })
      expect(res.status, ttl).toBe(400)
      expect(res.text).toContain('ttl must be from 1 minute to 24 hours')
    }
    expect((await server.request('POST', '/api/v0/console/links', { key, body: { role: 'owner' } })).status).toBe(400)
    expect((await server.request<Link>('POST', '/api/v0/console/links', { key, body: { role: 'admin' } })).body.role).toBe('admin')
    expect(await server.app.db.selectFrom('console_links').select('id').execute()).toHaveLength(6)
  })

  it('opening a link signs in once: an HttpOnly, SameSite=Strict cookie on /console (not Secure over plain http); the second open is refused as used', async () => {
    const made = await link()
    const first = await open(made.url)
    expect(first.status).toBe(200)
    expect(first.text).toContain('You are signed in')
    expect(first.text).toContain('<meta http-equiv="refresh" content="0;url=/console/sandbox">')
    expect(first.setCookie).toMatch(/^console_session=[A-Za-z0-9_-]{43}; Path=\/console; Max-Age=28\d{3}; HttpOnly; SameSite=Strict$/)
    const overview = await page('/console/sandbox', first.cookie)
    expect(overview.status).toBe(200)
    expect(overview.text).toContain('<h1>Overview</h1>')
    const second = await open(made.url)
    expect(second.status).toBe(410)
    expect(second.text).toContain('This link was already used')
    expect(second.setCookie).toBeNull()
    // The session is stored as a digest too.
    const sessions = await server.app.db.selectFrom('console_sessions').selectAll().execute()
    expect(JSON.stringify(sessions)).not.toContain(first.cookie?.split('=')[1] ?? '')
  })

  it('an expired link is refused with a page that says so, as is a link that never was', async () => {
    const made = await link({ ttl: '1m' })
    const token = made.url.split('/').pop() ?? ''
    await server.app.db.updateTable('console_links').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('expires_at', '=', made.expires_at).execute()
    const expired = await open(made.url)
    expect(expired.status).toBe(410)
    expect(expired.text).toContain('This link has expired')
    const unknown = await open(made.url.replace(token, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`))
    expect(unknown.status).toBe(404)
    expect(unknown.text).toContain('This link does not exist')
  })

  it('two opens of one link at once: one session', async () => {
    const made = await link()
    const outcomes = await Promise.all([open(made.url), open(made.url), open(made.url)])
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual([200, 410, 410])
  })
})

describe('console sessions', () => {
  it('pages are HTML with a CSP as strict as the checkout pages (no script at all), never cached or framed; no session: 401', async () => {
    const { cookie } = await open((await link()).url)
    const overview = await page('/console/live', cookie)
    expect(overview.status).toBe(200)
    expect(overview.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    expect(overview.headers.get('cache-control')).toBe('no-store')
    expect(overview.text).not.toContain('<script')
    const none = await page('/console/live', undefined)
    expect(none.status).toBe(401)
    expect(none.text).toContain('Not signed in')
    expect((await page('/console/staging', cookie)).status).toBe(404)
    expect((await page('/api/v0/console/live', cookie)).status).toBe(404)
  })

  it('sign-out needs the session’s CSRF token; after it the cookie opens nothing', async () => {
    const { cookie } = await open((await link()).url)
    const overview = await page('/console/sandbox', cookie)
    const token = csrfOf(overview.text)
    const forged = await page('/console/logout', cookie, { method: 'POST', form: {} })
    expect(forged.status).toBe(403)
    const wrong = await page('/console/logout', cookie, { method: 'POST', form: { _csrf: `${token.slice(0, -1)}x` } })
    expect(wrong.status).toBe(403)
    expect((await page('/console/sandbox', cookie)).status).toBe(200)
    const out = await page('/console/logout', cookie, { method: 'POST', form: { _csrf: token } })
    expect(out.status).toBe(200)
    expect(out.headers.get('set-cookie')).toMatch(/^console_session=; Path=\/console; Max-Age=0; HttpOnly; SameSite=Strict$/)
    expect((await page('/console/sandbox', cookie)).status).toBe(401)
  })

  it('a session ends when its application has no working key left, and a link of such an application is refused', async () => {
    const other = await server.createKey({ environment: 'development' })
    const made = await link({}, other)
    const spare = await link({}, other)
    const { cookie } = await open(made.url)
    expect((await page('/console/sandbox', cookie)).status).toBe(200)
    await server.deactivate(other)
    expect((await page('/console/sandbox', cookie)).status).toBe(401)
    expect((await open(spare.url)).status).toBe(410)
  })
})
