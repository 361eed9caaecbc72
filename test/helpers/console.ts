import { expect } from 'vitest'
import type { TestKey, TestServer } from '../helper.js'

/** Signing in to the console outside a browser, and sending its forms, as the console's tests do. */

export type ConsoleRole = 'admin' | 'viewer'

/** A single-use console link of `owner`'s application (its key needs console:link). */
export async function consoleLink(server: TestServer, owner: TestKey, role: ConsoleRole): Promise<string> {
  const res = await server.request<{ url: string }>('POST', '/api/v0/console/links', { key: owner, body: { role } })
  expect(res.status, res.text).toBe(201)
  return res.body.url
}

/** A session outside the browser: the cookie a link's opening set, and its CSRF token. */
export async function consoleSession(server: TestServer, owner: TestKey, role: ConsoleRole): Promise<{ cookie: string; csrf: string }> {
  const opened = await fetch(`${server.baseUrl}${new URL(await consoleLink(server, owner, role)).pathname}`, { redirect: 'manual' })
  const cookie = opened.headers.get('set-cookie')?.split(';')[0] ?? ''
  const overview = await (await fetch(`${server.baseUrl}/console/sandbox`, { headers: { cookie } })).text()
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(overview)?.[1] ?? '' }
}

/** A console form sent as a browser sends it, redirects not followed. */
export async function postForm(server: TestServer, path: string, cookie: string, form: Record<string, string>): Promise<{ status: number; location: string | null; text: string }> {
  const response = await fetch(`${server.baseUrl}${path}`, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString(), redirect: 'manual' })
  return { status: response.status, location: response.headers.get('location'), text: await response.text() }
}
