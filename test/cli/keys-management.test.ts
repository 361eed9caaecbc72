import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KnownKey } from '../../src/auth/known-keys.js'
import { deleteApp, KEPT_TABLES, REMOVED_TABLES } from '../../src/cli/delete-app.js'
import type { KeyCredentials } from '../../src/apps/repository.js'
import { digestSecret, secretMatches } from '../../src/keys/credentials.js'
import { startTestServer, randomEvmAddress, type TestKey, type TestServer } from '../helper.js'
import { type Receiver, startReceiver } from '../receiver.js'
import { CLI, cleanUp, ROOT, serviceEnv, track, waitUntil } from '../processes.js'
import { image, imagesDirectory, MULTIPART, multipartBody, send, storedFiles } from '../resources/products/fixtures.js'

/**
 * `devplatform keys rotate | expire | scopes` and `apps delete`, run as the operator runs them (the
 * built CLI in a process of its own, on the server's database), each change seen by the running
 * server on its very next request; and the same changes made by the server's own process.
 */

interface KeyOut {
  id: string
  app_id: string
  client_key: string
  client_secret?: string
  scopes: string[]
  active: boolean
  expires_at: string | null
  previous_secret_expires_at: string | null
}

interface RunResult {
  code: number | null
  stdout: string
  stderr: string
}

let server: TestServer
let receiver: Receiver
let imagesDir: string

beforeAll(async () => {
  imagesDir = imagesDirectory()
  receiver = await startReceiver((arrival) => (arrival.path.startsWith('/hang') ? 'hang' : { status: 200 }))
  server = await startTestServer({ config: { productImagesDir: imagesDir }, webhooks: { dispatcher: true, timeoutMs: 10_000, pollIntervalMs: 20 } })
})
afterAll(async () => {
  cleanUp()
  await receiver.close()
  await server.close()
})

function cli(...args: string[]): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(process.execPath, [CLI, ...args], {
        cwd: ROOT,
        env: serviceEnv({ DATABASE_URL: server.database.url, PRODUCT_IMAGES_DIR: imagesDir }),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    )
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

async function cliJson<T>(...args: string[]): Promise<T> {
  const result = await cli(...args, '--json')
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout) as T
}

/** Exit 2, nothing on stdout, one line on stderr containing `text`. */
function expectRefused(result: RunResult, text: string): void {
  expect(result.code, result.stdout).toBe(2)
  expect(result.stdout).toBe('')
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
  expect(result.stderr).toContain(text)
}

async function status(clientKey: string, clientSecret: string, path = '/api/v0/webhooks'): Promise<number> {
  const response = await fetch(`${server.baseUrl}${path}`, { headers: { 'x-client-key': clientKey, 'x-client-secret': clientSecret } })
  await response.arrayBuffer()
  return response.status
}

const list = (key: TestKey) => server.request('GET', '/api/v0/webhooks', { key })

async function keyRow(id: string) {
  return server.app.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
}

const sleepUntil = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - Date.now())))

describe('the checks behind them, at their boundaries', () => {
  const credentials: KeyCredentials = {
    id: 'k',
    app_id: 'a',
    client_key: 'pk_live_k',
    environment: 'production',
    scopes: [],
    rate_limit_override: null,
    active: true,
    created_at: '2026-01-01T00:00:00.000Z',
    expires_at: '2027-01-01T00:00:00.000Z',
    previous_secret_expires_at: '2026-06-01T00:00:00.000Z',
    secret_digest: digestSecret('sk_new'),
    previous_secret_digest: digestSecret('sk_old'),
  }
  const key = new KnownKey(credentials)

  it('a key is expired from the millisecond of its expiry on, and never without one', () => {
    const at = Date.parse('2027-01-01T00:00:00.000Z')
    expect(key.expired(at - 1)).toBe(false)
    expect(key.expired(at)).toBe(true)
    expect(new KnownKey({ ...credentials, expires_at: null }).expired(8.64e15)).toBe(false)
  })

  it('a replaced secret works until the millisecond its grace ends, and never without a previous digest', () => {
    const until = Date.parse('2026-06-01T00:00:00.000Z')
    expect(key.previousDigest(until - 1)).toBe(digestSecret('sk_old'))
    expect(key.previousDigest(until)).toBeUndefined()
    expect(new KnownKey({ ...credentials, previous_secret_digest: null }).previousDigest(until - 1)).toBeUndefined()
  })

  it('the secret matches the current digest or the previous one, and nothing else', () => {
    const current = digestSecret('sk_new')
    const previous = digestSecret('sk_old')
    expect(secretMatches('sk_new', current, previous)).toBe(true)
    expect(secretMatches('sk_old', current, previous)).toBe(true)
    expect(secretMatches('sk_other', current, previous)).toBe(false)
    expect(secretMatches('sk_old', current, undefined)).toBe(false)
    expect(secretMatches('sk_new', undefined, undefined)).toBe(false)
    expect(secretMatches('sk_old', current, previous.slice(0, 63))).toBe(false)
  })
})

describe('keys rotate', () => {
  it('prints a new secret once; both work on the very next request for the default grace of 24 hours', async () => {
    const key = await server.createKey()
    expect((await list(key)).status).toBe(200)
    const before = Date.now()
    const rotated = await cliJson<KeyOut>('keys', 'rotate', '--key', key.clientKey)
    expect(rotated.id).toBe(key.id)
    expect(rotated.client_key).toBe(key.clientKey)
    expect(rotated.client_secret).toMatch(/^sk_live_[A-Za-z0-9_-]{32}$/)
    expect(rotated.client_secret).not.toBe(key.clientSecret)
    const graceEnd = Date.parse(rotated.previous_secret_expires_at ?? '')
    expect(graceEnd).toBeGreaterThanOrEqual(before + 86_400_000)
    expect(graceEnd).toBeLessThanOrEqual(Date.now() + 86_400_000)
    expect(await status(key.clientKey, rotated.client_secret ?? '')).toBe(200)
    expect(await status(key.clientKey, key.clientSecret)).toBe(200)
    // Shown once: listed keys never carry a secret.
    const listed = await cli('keys', 'list', '--app', key.appId, '--json')
    expect(listed.stdout).not.toContain('sk_live_')
  })

  it('--grace 0: the old secret is refused (401) on the very next request, the new one works', async () => {
    const key = await server.createKey()
    expect((await list(key)).status).toBe(200)
    const rotated = await cliJson<KeyOut>('keys', 'rotate', '--key', key.id, '--grace', '0')
    expect(rotated.previous_secret_expires_at).toBeNull()
    const res = await list(key)
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'Invalid client app credentials', details: 'The client key or client secret is invalid' })
    expect(await status(key.clientKey, rotated.client_secret ?? '')).toBe(200)
    expect((await keyRow(key.id)).previous_secret_digest).toBeNull()
  })

  it('the old secret stops when its grace ends, with no write: the clock alone ends it', async () => {
    const key = await server.createKey()
    expect((await list(key)).status).toBe(200)
    const rotated = await cliJson<KeyOut>('keys', 'rotate', '--key', key.clientKey, '--grace', '2')
    const graceEnd = Date.parse(rotated.previous_secret_expires_at ?? '')
    expect(await status(key.clientKey, key.clientSecret)).toBe(200)
    await sleepUntil(graceEnd - 300)
    expect(await status(key.clientKey, key.clientSecret)).toBe(200)
    await sleepUntil(graceEnd + 20)
    expect(await status(key.clientKey, key.clientSecret)).toBe(401)
    expect(await status(key.clientKey, rotated.client_secret ?? '')).toBe(200)
  })

  it('a second rotation ends the first one\'s grace at once: only the latest previous secret is kept', async () => {
    const key = await server.createKey()
    const first = await cliJson<KeyOut>('keys', 'rotate', '--key', key.clientKey, '--grace', '3600')
    const second = await cliJson<KeyOut>('keys', 'rotate', '--key', key.clientKey, '--grace', '3600')
    expect(await status(key.clientKey, key.clientSecret)).toBe(401)
    expect(await status(key.clientKey, first.client_secret ?? '')).toBe(200)
    expect(await status(key.clientKey, second.client_secret ?? '')).toBe(200)
  })

  it.each([
    ['0', true],
    ['604800', true],
    ['604801', false],
    ['-1', false],
    ['1.5', false],
    ['', false],
    ['1e3', false],
  ])('--grace=%s: accepted %s (0 to 604800 seconds)', async (grace, accepted) => {
    const key = await server.createKey()
    const before = await keyRow(key.id)
    const result = await cli('keys', 'rotate', '--key', key.clientKey, `--grace=${grace}`, '--json')
    if (accepted) {
      expect(result.code, result.stderr).toBe(0)
      const rotated = JSON.parse(result.stdout) as KeyOut
      if (grace === '0') expect(rotated.previous_secret_expires_at).toBeNull()
      else expect(Date.parse(rotated.previous_secret_expires_at ?? '') - Date.now()).toBeGreaterThan(604_790_000)
      return
    }
    expectRefused(result, '--grace must be a whole number of seconds from 0 to 604800')
    expect(await keyRow(key.id)).toEqual(before)
    expect(await status(key.clientKey, key.clientSecret)).toBe(200)
  })

  it('an unknown key or a deactivated key: exit 2, nothing changed', async () => {
    expectRefused(await cli('keys', 'rotate', '--key', 'pk_live_nothing'), 'unknown key: pk_live_nothing')
    const key = await server.createKey()
    await server.deactivate(key)
    const before = await keyRow(key.id)
    expectRefused(await cli('keys', 'rotate', '--key', key.clientKey), 'is deactivated')
    expectRefused(await cli('keys', 'expire', '--key', key.clientKey, '--never'), 'is deactivated')
    expectRefused(await cli('keys', 'scopes', '--key', key.clientKey, '--scopes', 'tax:read'), 'is deactivated')
    expect(await keyRow(key.id)).toEqual(before)
    expectRefused(await cli('keys', 'rotate'), 'missing required option --key')
  })
})

describe('keys expire', () => {
  it('--in 0: 403 API key has expired on the very next request, details with the time', async () => {
    const key = await server.createKey()
    expect((await list(key)).status).toBe(200)
    const expired = await cliJson<KeyOut>('keys', 'expire', '--key', key.clientKey, '--in', '0')
    const res = await list(key)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: 'API key has expired', details: `This API key expired at ${expired.expires_at ?? ''}` })
    // The credentials are checked first: a wrong secret is still 401.
    expect(await status(key.clientKey, 'sk_live_wrong')).toBe(401)
    // --never: the key works again on the next request.
    const revived = await cliJson<KeyOut>('keys', 'expire', '--key', key.clientKey, '--never')
    expect(revived.expires_at).toBeNull()
    expect((await list(key)).status).toBe(200)
  })

  it('bites when the clock passes it, with no write in between', async () => {
    const key = await server.createKey()
    const set = await cliJson<KeyOut>('keys', 'expire', '--key', key.clientKey, '--in', '2')
    const at = Date.parse(set.expires_at ?? '')
    expect((await list(key)).status).toBe(200)
    await sleepUntil(at - 300)
    expect((await list(key)).status).toBe(200)
    await sleepUntil(at + 20)
    expect((await list(key)).status).toBe(403)
  })

  it('a deactivated key that has also expired says it is inactive', async () => {
    const key = await server.createKey()
    await cliJson('keys', 'expire', '--key', key.clientKey, '--in', '0')
    await server.deactivate(key)
    expect(((await list(key)).body as { message: string }).message).toBe('API key is inactive')
  })

  it('--at: an ISO 8601 time with its offset, stored in UTC; the key works until then', async () => {
    const key = await server.createKey()
    const set = await cliJson<KeyOut>('keys', 'expire', '--key', key.clientKey, '--at', '2099-06-30T23:30:00+02:00')
    expect(set.expires_at).toBe('2099-06-30T21:30:00.000Z')
    expect((await list(key)).status).toBe(200)
    const listed = await cliJson<KeyOut[]>('keys', 'list', '--app', key.appId)
    expect(listed[0]?.expires_at).toBe('2099-06-30T21:30:00.000Z')
  })

  const soon = () => new Date(Date.now() + 60_000).toISOString()
  const justPast = () => new Date(Date.now() - 1_000).toISOString()
  it.each(([
    ['--at a minute ahead', () => ['--at', soon()], true],
    ['--at a second ago', () => ['--at', justPast()], false],
    ['--at 2028-02-29 (a leap day)', () => ['--at', '2028-02-29T00:00Z'], true],
    ['--at 2027-02-29 (no such day)', () => ['--at', '2027-02-29T00:00Z'], false],
    ['--at 24:00', () => ['--at', '2099-01-01T24:00Z'], false],
    ['--at without an offset', () => ['--at', '2099-01-01T00:00:00'], false],
    ['--at a date only', () => ['--at', '2099-01-01'], false],
    ['--in 0', () => ['--in', '0'], true],
    ['--in 999999999', () => ['--in', '999999999'], true],
    ['--in 1000000000', () => ['--in', '1000000000'], false],
    ['--in=-1', () => ['--in=-1'], false],
    ['--in 1.5', () => ['--in', '1.5'], false],
    ['none of the three', () => [], false],
    ['--in and --never', () => ['--in', '5', '--never'], false],
    ['--at and --in', () => ['--at', soon(), '--in', '5'], false],
  ] as const).map(([name, args, accepted]) => ({ name, args, accepted })))('$name: accepted $accepted', async ({ args, accepted }) => {
    const key = await server.createKey()
    const before = await keyRow(key.id)
    const result = await cli('keys', 'expire', '--key', key.clientKey, ...args(), '--json')
    if (accepted) {
      expect(result.code, result.stderr).toBe(0)
      expect((JSON.parse(result.stdout) as KeyOut).expires_at).not.toBeNull()
      return
    }
    expect(result.code, result.stdout).toBe(2)
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(await keyRow(key.id)).toEqual(before)
  })
})

describe('keys scopes', () => {
  it('replaces the scopes: the very next request lacking one is 403, one within them 200', async () => {
    const key = await server.createKey()
    expect((await list(key)).status).toBe(200)
    const changed = await cliJson<KeyOut>('keys', 'scopes', '--key', key.clientKey, '--scopes', 'customer:read, tax:read,customer:read')
    expect(changed.scopes).toEqual(['customer:read', 'tax:read'])
    const res = await list(key)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: 'Missing required scope', details: 'This API key lacks the required scope: webhook:read' })
    expect(await status(key.clientKey, key.clientSecret, '/api/v0/customers')).toBe(200)
    await cliJson('keys', 'scopes', '--key', key.clientKey, '--scopes', 'webhook:read')
    expect((await list(key)).status).toBe(200)
  })

  it.each([
    [['--scopes', 'webhook:read,webhook:frob'], 'unknown scope webhook:frob'],
    [['--scopes', ' , '], '--scopes needs at least one scope'],
    [[], 'missing required option --scopes'],
  ])('%j: exit 2, nothing changed', async (args, message) => {
    const key = await server.createKey()
    const before = await keyRow(key.id)
    expectRefused(await cli('keys', 'scopes', '--key', key.clientKey, ...args), message)
    expect(await keyRow(key.id)).toEqual(before)
  })
})

describe('made by the server\'s own process: seen on its very next request too', () => {
  it('a rotation, an expiry, a scope change, a deactivation and an application\'s deletion', async () => {
    const apps = server.app.repos.apps
    const rotated = await server.createKey()
    expect((await list(rotated)).status).toBe(200)
    const fresh = await apps.rotateSecret(rotated.id, 0)
    expect((await list(rotated)).status).toBe(401)
    expect(await status(rotated.clientKey, fresh?.client_secret ?? '')).toBe(200)

    const expiring = await server.createKey()
    expect((await list(expiring)).status).toBe(200)
    await apps.setExpiry(expiring.id, new Date().toISOString())
    expect((await list(expiring)).status).toBe(403)

    const scoped = await server.createKey()
    expect((await list(scoped)).status).toBe(200)
    await apps.setScopes(scoped.id, ['tax:read'])
    expect((await list(scoped)).status).toBe(403)

    const deactivated = await server.createKey()
    expect((await list(deactivated)).status).toBe(200)
    await apps.deactivateKey(deactivated.id)
    expect((await list(deactivated)).status).toBe(403)

    const deleted = await server.createKey()
    expect((await list(deleted)).status).toBe(200)
    await deleteApp(server.app.transact, deleted.appId)
    expect((await list(deleted)).status).toBe(401)
  })
})

describe('apps delete', () => {
  /** An application with one of everything: a key, a customer with a liquidation address and a sandbox deposit, a tax, a product with an uploaded image, a webhook. */
  async function populatedApp() {
    const key = await server.createKey()
    const sandbox = await server.createKey({ appId: key.appId, environment: 'development' })
    const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' } })
    // The sandbox's: a live liquidation address takes a receiving address of the platform, which this server has none of.
    const address = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses`, {
      key: sandbox,
      body: { chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_1' },
    })
    expect((await server.request('POST', '/api/v0/receiving-addresses', { key: sandbox, body: { chain: 'base', currency: 'usdc' } })).status).toBe(201)
    const tax = await server.request('POST', '/api/v0/taxes', { key, body: { name: 'VAT', percentage: 20 } })
    const product = await send<{ id: string; images: string[] }>(
      server,
      'POST',
      '/api/v0/products',
      key,
      multipartBody([{ name: 'name', value: 'Pictured' }, { name: 'price', value: '19.99' }, { name: 'images', filename: 'a.png', content: image('png'), type: 'image/png' }]),
      MULTIPART,
    )
    const deposit = await server.request('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses/${address.body.id}/simulate_deposit`, { key: sandbox, body: { amount: '2' } })
    expect([customer.status, address.status, tax.status, product.status, deposit.status]).toEqual([201, 201, 201, 201, 201])
    return { key, sandbox, customerId: customer.body.id, imageUrl: product.body.images[0] ?? '' }
  }

  const countOf = async (table: string, appId: string) => server.database.count(`select count(*) from ${table} where app_id = ?`, appId)

  it('every table holding an application\'s rows is either removed or kept, by a decision', async () => {
    const tables = await server.app.db.introspection.getTables()
    const owned = tables.filter((table) => table.columns.some((column) => column.name === 'app_id')).map((table) => table.name)
    expect([...owned, 'apps'].sort()).toEqual([...REMOVED_TABLES, ...Object.keys(KEPT_TABLES)].sort())
    expect(REMOVED_TABLES.filter((table) => table in KEPT_TABLES)).toEqual([])
  })

  it('removes its keys and data, stops its webhooks at once, keeps its money and audit records', async () => {
    const { key, sandbox, customerId, imageUrl } = await populatedApp()
    const other = await server.createKey()
    const hanging = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'hang', url: receiver.url('/hang-delete') } })
    expect(hanging.status).toBe(201)
    // Its webhook.created delivery sits on the wire; one more event queues behind it.
    await receiver.waitFor(1, { path: '/hang-delete', timeoutMs: 10_000 })
    expect((await server.request('POST', '/api/v0/taxes', { key, body: { name: 'GST', percentage: 5 } })).status).toBe(201)
    const imageFile = storedFiles(imagesDir).find((file) => imageUrl.endsWith(file.split('/').at(-1) ?? '-'))
    expect(imageFile).toBeDefined()
    const eventsBefore = await countOf('events', key.appId)
    const ledgerBefore = await countOf('ledger_entries', key.appId)

    const result = await cli('apps', 'delete', '--app', key.appId, '--confirm', key.appId, '--json')
    const deletedAt = performance.now()
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toBe('')
    const deletion = JSON.parse(result.stdout) as { app: { id: string; deleted_at: string }; already_deleted: boolean; removed: Record<string, number>; webhooks_stopped: number; image_files: { removed: number } }
    expect(deletion.app.id).toBe(key.appId)
    expect(deletion.already_deleted).toBe(false)
    expect(deletion.removed).toEqual({ idempotency_keys: 0, payment_links: 0, products: 1, receiving_addresses: 1, app_branding: 0, console_links: 0, console_sessions: 0, taxes: 2, liquidation_addresses: 1, customers: 1, api_keys: 2 })
    expect(deletion.webhooks_stopped).toBe(1)
    expect(deletion.image_files).toEqual({ removed: 1, not_removed: 0 })

    // Its keys: unknown from the very next request on.
    expect((await list(key)).status).toBe(401)
    expect((await list(sandbox)).status).toBe(401)
    expect((await list(other)).status).toBe(200)
    // Its webhook's attempt on the wire is aborted (SQLite: the server's periodic check, here every
    // 20 ms; PostgreSQL: NOTIFY with the commit), its pending delivery canceled.
    const arrival = receiver.arrivals.find((candidate) => candidate.path === '/hang-delete')
    await waitUntil('the attempt on the wire aborted', () => (arrival?.aborted === true ? true : undefined), 2_000, 5)
    expect((arrival?.closedAt ?? Number.POSITIVE_INFINITY) - deletedAt).toBeLessThan(1_000)
    await waitUntil('no pending delivery', async () => ((await server.database.count("select count(*) from deliveries where app_id = ? and status = 'pending'", key.appId)) === 0 ? true : undefined))
    const webhook = await server.app.db.selectFrom('webhooks').select('deleted_at').where('id', '=', hanging.body.id).executeTakeFirstOrThrow()
    expect(webhook.deleted_at).not.toBeNull()

    for (const table of REMOVED_TABLES) expect(await countOf(table, key.appId), table).toBe(0)
    expect(existsSync(imageFile ?? '')).toBe(false)
    expect((await fetch(imageUrl)).status).toBe(404)
    expect(await countOf('events', key.appId)).toBeGreaterThanOrEqual(eventsBefore)
    expect(await countOf('ledger_entries', key.appId)).toBeGreaterThanOrEqual(ledgerBefore)
    expect(await countOf('drains', key.appId)).toBe(1)
    expect(await server.database.count('select count(*) from customers where id = ?', customerId)).toBe(0)
    const verified = await cliJson<{ ok: boolean }[]>('ledger', 'verify')
    expect(verified.map((environment) => environment.ok)).toEqual([true, true])

    // Gone from the operator's view: not listed, no new key.
    const apps = await cliJson<{ id: string }[]>('apps', 'list')
    expect(apps.map((app) => app.id)).not.toContain(key.appId)
    expectRefused(await cli('keys', 'create', '--app', key.appId), `unknown application: ${key.appId}`)
    expectRefused(await cli('keys', 'list', '--app', key.appId), `unknown application: ${key.appId}`)
    // Run again, it removes what a request still under way at the deletion may have written.
    await server.app.db.insertInto('taxes').values({ id: '00000000-0000-4000-8000-0000000000aa', app_id: key.appId, name: 'late', description: null, percentage: 1, active: 1, app_ids: '[]', created_at: deletion.app.deleted_at, updated_at: deletion.app.deleted_at }).execute()
    const again = await cliJson<{ app: { deleted_at: string }; already_deleted: boolean; removed: Record<string, number> }>('apps', 'delete', '--app', key.appId, '--confirm', key.appId)
    expect(again.already_deleted).toBe(true)
    expect(again.app.deleted_at).toBe(deletion.app.deleted_at)
    expect(again.removed.taxes).toBe(1)
  })

  it('without --confirm repeating the id: exit 2, nothing changed', async () => {
    const key = await server.createKey()
    expectRefused(await cli('apps', 'delete', '--app', key.appId), `"apps delete" needs --confirm ${key.appId}`)
    expectRefused(await cli('apps', 'delete', '--app', key.appId, '--confirm', key.appId.toUpperCase()), "--confirm must repeat the application's id")
    expectRefused(await cli('apps', 'delete', '--app', key.appId, '--confirm', ''), "--confirm must repeat the application's id")
    expectRefused(await cli('apps', 'delete', '--confirm', key.appId), 'missing required option --app')
    expectRefused(await cli('apps', 'delete', '--app', '00000000-0000-4000-8000-000000000000', '--confirm', '00000000-0000-4000-8000-000000000000'), 'unknown application')
    expect((await list(key)).status).toBe(200)
    expect(await countOf('api_keys', key.appId)).toBe(1)
  })

  it('refused while it holds live money (a balance posted or pending, a live drain or transfer moving, a live transfer awaiting funds); allowed once it is zero', async () => {
    const { key } = await populatedApp()
    const now = new Date().toISOString()
    const accountId = '00000000-0000-4000-8000-0000000000b1'
    await server.app.db
      .insertInto('ledger_accounts')
      .values({ id: accountId, environment: 'live', app_id: key.appId, kind: 'wallet', currency: 'usdc', reference: 'w', may_go_negative: 0, debits_posted: '0', credits_posted: '5', debits_pending: '0', credits_pending: '0', available: '5', created_at: now, updated_at: now })
      .execute()
    const refuse = async (text: string) => {
      expectRefused(await cli('apps', 'delete', '--app', key.appId, '--confirm', key.appId), text)
      expect((await list(key)).status).toBe(200)
      expect(await countOf('customers', key.appId)).toBe(1)
    }
    await refuse(`holds live money (its wallet account ${accountId} in USDC has a balance)`)
    // Posted to zero, one pending credit left: still money.
    await server.app.db.updateTable('ledger_accounts').set({ debits_posted: '5', available: '0', credits_pending: '1' }).where('id', '=', accountId).execute()
    await refuse('holds live money')
    await server.app.db.updateTable('ledger_accounts').set({ credits_pending: '0', debits_pending: '1' }).where('id', '=', accountId).execute()
    await refuse('holds live money')
    await server.app.db.updateTable('ledger_accounts').set({ debits_pending: '0' }).where('id', '=', accountId).execute()
    const drainId = '00000000-0000-4000-8000-0000000000d1'
    await server.app.db
      .insertInto('drains')
      .values({
        id: drainId, environment: 'live', app_id: key.appId, customer_id: 'c', liquidation_address_id: 'l', state: 'payment_submitted', amount: '1', currency: 'usdc', deposit_tx_hash: '0xlive',
        from_address: null, source_payment_rail: 'ethereum', destination: '{}', developer_fee: null, subtotal_amount: null, exchange_rate: null, converted_amount: null, outgoing_amount: null,
        destination_tx_hash: null, refund_tx_hash: null, return_reason: null, pending_entry_id: null, next_step_at: '2100-01-01T00:00:00.000Z', created_at: now, updated_at: now,
      })
      .execute()
    await refuse(`has a live drain in flight (${drainId}, payment_submitted)`)
    await server.app.db.updateTable('drains').set({ next_step_at: null, state: 'payment_processed' }).where('id', '=', drainId).execute()
    // A live transfer awaiting funds, then one moving: money on its way.
    const transferId = '00000000-0000-4000-8000-0000000000e1'
    await server.app.db
      .insertInto('transfers')
      .values({
        id: transferId, environment: 'live', app_id: key.appId, kind: 'direct_wallet', state: 'awaiting_funds', wallet_id: null, currency: 'usdc', amount: '1', developer_fee: '0',
        destination_currency: 'usdc', source: '{}', destination: '{}', deposit_instructions: '{}', customer: null, exchange_rate: null, converted_amount: null,
        destination_tx_hash: null, refund_tx_hash: null, return_reason: null, pending_entry_id: null, next_step_at: null, created_at: now, updated_at: now,
      })
      .execute()
    await refuse(`has a live transfer in flight (${transferId}, awaiting_funds)`)
    await server.app.db.updateTable('transfers').set({ state: 'payment_submitted', next_step_at: '2100-01-01T00:00:00.000Z' }).where('id', '=', transferId).execute()
    await refuse(`has a live transfer in flight (${transferId}, payment_submitted)`)
    await server.app.db.updateTable('transfers').set({ state: 'payment_processed', next_step_at: null }).where('id', '=', transferId).execute()
    const deletion = await cliJson<{ removed: { customers: number } }>('apps', 'delete', '--app', key.appId, '--confirm', key.appId)
    expect(deletion.removed.customers).toBe(1)
    expect((await list(key)).status).toBe(401)
    expect(await countOf('ledger_accounts', key.appId)).toBeGreaterThan(0)
  })

  it('while its requests are under way: every request sent after the deletion returned is refused', async () => {
    const key = await server.createKey()
    let deletedAt: number | undefined
    const after: number[] = []
    let before = 0
    let stop = false
    const callers = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const sentAfter = deletedAt !== undefined
        const { status: code } = await list(key)
        if (sentAfter) after.push(code)
        else if (code === 200) before++
      }
    })
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect((await cli('apps', 'delete', '--app', key.appId, '--confirm', key.appId)).code).toBe(0)
    deletedAt = Date.now()
    await new Promise((resolve) => setTimeout(resolve, 300))
    stop = true
    await Promise.all(callers)
    expect(before).toBeGreaterThan(0)
    expect(after.length).toBeGreaterThan(8)
    expect(new Set(after)).toEqual(new Set([401]))
  })
})

describe('the CLI\'s usage', () => {
  it('help keys and help apps list the new commands', async () => {
    const keys = await cli('help', 'keys')
    expect(keys.stdout).toMatch(/^ {2}keys rotate --key CLIENT_KEY_OR_ID \[--grace SECONDS\]$/m)
    expect(keys.stdout).toMatch(/^ {2}keys expire --key CLIENT_KEY_OR_ID \(--at ISO_8601_TIME \| --in SECONDS \| --never\)$/m)
    expect(keys.stdout).toMatch(/^ {2}keys scopes --key CLIENT_KEY_OR_ID --scopes a,b$/m)
    const apps = await cli('help', 'apps', 'delete')
    expect(apps.stdout).toMatch(/^ {2}apps delete --app APP_ID --confirm APP_ID$/m)
  })
})
