import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dropFreshDatabases, freshDatabase } from '../backend.js'
import { cleanUp, waitUntil } from '../processes.js'
import { type Receiver, startReceiver } from '../receiver.js'
import { cliJson, type Instance, serviceVars, startServer, stopGracefully } from './delivery-helpers.js'

/**
 * The operator's key changes and an application's deletion, made by the CLI in a process of its
 * own, seen by two server processes on one PostgreSQL + Redis on their very next request; the
 * deleted application's webhook attempt on the wire at the second server is aborted at once
 * (NOTIFY with the deletion's commit: that server's periodic check is set to a minute).
 */

interface KeyOut {
  id: string
  app_id: string
  client_key: string
  client_secret: string
  expires_at: string | null
  previous_secret_expires_at: string | null
}

let databaseUrl: string
let a: Instance
let b: Instance
let receiver: Receiver

beforeAll(async () => {
  const database = await freshDatabase('postgres')
  databaseUrl = database.url
  receiver = await startReceiver(() => 'hang')
  const vars = serviceVars(databaseUrl, { WEBHOOK_TIMEOUT_MS: '30000', WEBHOOK_POLL_MS: '60000' })
  ;[a, b] = await Promise.all([startServer('A', { ...vars, WEBHOOK_DISPATCHER: 'off' }), startServer('B', { ...vars, WEBHOOK_DISPATCHER: 'on' })])
}, 60_000)

afterAll(async () => {
  await Promise.all([a, b].filter((instance) => instance !== undefined).map((instance) => stopGracefully(instance)))
  await receiver.close()
  cleanUp()
  await dropFreshDatabases()
})

function report(figures: Record<string, unknown>): void {
  process.stdout.write(`[multi-instance] key management: ${JSON.stringify(figures)}\n`)
}

async function newKey(name: string): Promise<KeyOut> {
  const app = await cliJson<{ id: string }>(databaseUrl, 'apps', 'create', '--name', name)
  return cliJson<KeyOut>(databaseUrl, 'keys', 'create', '--app', app.id, '--rate-limit', '100000')
}

async function call(instance: Instance, clientKey: string, secret: string, method = 'GET', path = '/api/v0/webhooks', body?: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${instance.baseUrl}${path}`, {
    method,
    headers: { 'x-client-key': clientKey, 'x-client-secret': secret, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON
  }
  return { status: response.status, body: parsed }
}

/** The status at A and then at B, each the first request there after the change. */
async function atBoth(clientKey: string, secret: string, path?: string): Promise<[number, number]> {
  return [(await call(a, clientKey, secret, 'GET', path)).status, (await call(b, clientKey, secret, 'GET', path)).status]
}

const sleepUntil = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - Date.now())))

describe('two instances on one PostgreSQL + Redis, the CLI in a third process', () => {
  it('a rotation (with and without grace), an expiry (set, passed by the clock, removed), a scope change and a deactivation: seen by both on their very next request', async () => {
    const key = await newKey('Managed')
    expect(await atBoth(key.client_key, key.client_secret)).toEqual([200, 200])

    const rotated = await cliJson<KeyOut>(databaseUrl, 'keys', 'rotate', '--key', key.client_key, '--grace', '0')
    expect(await atBoth(key.client_key, key.client_secret)).toEqual([401, 401])
    expect(await atBoth(key.client_key, rotated.client_secret)).toEqual([200, 200])

    const graced = await cliJson<KeyOut>(databaseUrl, 'keys', 'rotate', '--key', key.client_key, '--grace', '2')
    expect(await atBoth(key.client_key, rotated.client_secret)).toEqual([200, 200])
    expect(await atBoth(key.client_key, graced.client_secret)).toEqual([200, 200])
    await sleepUntil(Date.parse(graced.previous_secret_expires_at ?? '') + 20)
    expect(await atBoth(key.client_key, rotated.client_secret)).toEqual([401, 401])
    const secret = graced.client_secret

    await cliJson(databaseUrl, 'keys', 'expire', '--key', key.client_key, '--in', '0')
    expect(await atBoth(key.client_key, secret)).toEqual([403, 403])
    expect((await call(b, key.client_key, secret)).body).toMatchObject({ message: 'API key has expired' })
    await cliJson(databaseUrl, 'keys', 'expire', '--key', key.client_key, '--never')
    expect(await atBoth(key.client_key, secret)).toEqual([200, 200])

    const expiring = await cliJson<KeyOut>(databaseUrl, 'keys', 'expire', '--key', key.client_key, '--in', '2')
    expect(await atBoth(key.client_key, secret)).toEqual([200, 200])
    await sleepUntil(Date.parse(expiring.expires_at ?? '') + 20)
    expect(await atBoth(key.client_key, secret)).toEqual([403, 403])
    await cliJson(databaseUrl, 'keys', 'expire', '--key', key.client_key, '--never')

    await cliJson(databaseUrl, 'keys', 'scopes', '--key', key.client_key, '--scopes', 'customer:read')
    expect(await atBoth(key.client_key, secret)).toEqual([403, 403])
    expect(await atBoth(key.client_key, secret, '/api/v0/customers')).toEqual([200, 200])

    await cliJson(databaseUrl, 'keys', 'deactivate', '--key', key.client_key)
    expect(await atBoth(key.client_key, secret, '/api/v0/customers')).toEqual([403, 403])
  }, 60_000)

  it("an application's deletion: its key refused by both on the next request, its webhook's attempt on the wire at B aborted at once", async () => {
    const key = await newKey('Deleted')
    const other = await newKey('Bystander')
    const webhook = await call(a, key.client_key, key.client_secret, 'POST', '/api/v0/webhooks', { name: 'hangs', url: receiver.url('/hangs') })
    expect(webhook.status).toBe(201)
    // B's dispatcher puts the webhook.created delivery on the wire, where it hangs.
    await receiver.waitFor(1, { path: '/hangs', timeoutMs: 15_000 })
    const arrival = receiver.arrivals.find((candidate) => candidate.path === '/hangs')
    expect(await atBoth(key.client_key, key.client_secret)).toEqual([200, 200])

    const deletion = await cliJson<{ removed: { api_keys: number }; webhooks_stopped: number }>(databaseUrl, 'apps', 'delete', '--app', key.app_id, '--confirm', key.app_id)
    const deletedAt = performance.now()
    expect(deletion.removed.api_keys).toBe(1)
    expect(deletion.webhooks_stopped).toBe(1)
    expect(await atBoth(key.client_key, key.client_secret)).toEqual([401, 401])
    expect(await atBoth(other.client_key, other.client_secret)).toEqual([200, 200])
    await waitUntil('the attempt on the wire aborted', () => (arrival?.aborted === true ? true : undefined), 5_000, 2)
    const abortMs = (arrival?.closedAt ?? Number.NaN) - deletedAt
    report({ abortAfterCliExitMs: Math.round(abortMs * 10) / 10 })
    // The CLI's exit is seen after its commit (and NOTIFY): the abort may even come first.
    expect(abortMs).toBeLessThan(1_000)
  }, 60_000)
})
