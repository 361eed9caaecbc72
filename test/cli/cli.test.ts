import { DEFAULT_SCOPES } from '../../src/resources/index.js'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type ServerResponse } from 'node:http'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../helper.js'
import { dropFreshDatabases, freshDatabase } from '../backend.js'
import { cleanUp, freshDb, tempDir, waitUntil } from '../processes.js'
import { cli, cliWith, createApp, expectUsageError, oneJson } from './cli-run.js'

const KEY_FIELDS = ['active', 'app_id', 'client_key', 'client_secret', 'created_at', 'environment', 'expires_at', 'id', 'previous_secret_expires_at', 'rate_limit_per_hour', 'scopes']
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

interface KeyOut {
  id: string
  app_id: string
  client_key: string
  client_secret?: string
  environment: string
  scopes: string[]
  rate_limit_per_hour: number
  active: boolean
  created_at: string
}

afterAll(async () => {
  cleanUp()
  await dropFreshDatabases()
})

function isIsoTimestamp(value: string): boolean {
  return !Number.isNaN(Date.parse(value)) && new Date(value).toISOString() === value
}

async function createKey(url: string, appId: string, ...extra: string[]): Promise<KeyOut> {
  return oneJson(await cli(url, 'keys', 'create', '--app', appId, ...extra, '--json')) as KeyOut
}

/** Every file SQLite keeps next to (and including) the database, concatenated. */
function databaseBytes(dir: string): Buffer {
  return Buffer.concat(readdirSync(dir).map((name) => readFileSync(join(dir, name))))
}

describe('devplatform apps', () => {
  it('apps create --json prints exactly one {id,name,created_at} document and apps list --json lists it', async () => {
    const { url } = await freshDatabase()
    const app = await createApp(url, 'Acme Payments')
    expect(Object.keys(app).sort()).toEqual(['created_at', 'id', 'name'])
    expect(app.id).toMatch(UUID)
    expect(app.name).toBe('Acme Payments')
    expect(isIsoTimestamp(app.created_at)).toBe(true)

    const list = oneJson(await cli(url, 'apps', 'list', '--json'))
    expect(list).toEqual([app])
  })

  it('apps brand sets the merchant the hosted pages show, checks the logo as a product image, and refuses a wrong colour', async () => {
    const { url } = await freshDatabase()
    const app = await createApp(url, 'Brand App')
    const images = tempDir('devplatform-brand-')
    const logo = join(images, 'logo.png')
    writeFileSync(logo, Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)]))
    const notImage = join(images, 'logo.svg')
    writeFileSync(notImage, '<svg xmlns="http://www.w3.org/2000/svg"/>')
    const vars = { PRODUCT_IMAGES_DIR: images }
    expect(oneJson(await cliWith(vars, url, 'apps', 'brand', '--app', app.id, '--json'))).toEqual({ app_id: app.id, display_name: 'Brand App', brand_color: '#1d4ed8', on_brand_color: '#ffffff', support_email: null, logo_path: null })
    const set = oneJson(await cliWith(vars, url, 'apps', 'brand', '--app', app.id, '--display-name', 'Acme Widgets', '--color', '#FACC15', '--support-email', 'billing@acme.example', '--logo', logo, '--json'))
    expect(set).toMatchObject({ display_name: 'Acme Widgets', brand_color: '#facc15', on_brand_color: '#111111', support_email: 'billing@acme.example', logo_path: expect.stringMatching(/^\/brand-logos\/[0-9a-f-]{36}$/) })
    expectUsageError(await cliWith(vars, url, 'apps', 'brand', '--app', app.id, '--color', 'yellow'))
    expectUsageError(await cliWith(vars, url, 'apps', 'brand', '--app', app.id, '--logo', notImage))
    expect(oneJson(await cliWith(vars, url, 'apps', 'brand', '--app', app.id, '--no-logo', '--json'))).toMatchObject({ display_name: 'Acme Widgets', logo_path: null })
  })

  it('apps list --json on an empty database is an empty array', async () => {
    const { url } = await freshDatabase()
    expect(oneJson(await cli(url, 'apps', 'list', '--json'))).toEqual([])
  })

  it('without --json prints a readable table', async () => {
    const { url } = await freshDatabase()
    const created = await cli(url, 'apps', 'create', '--name', 'Table App')
    expect(created.code).toBe(0)
    expect(created.stderr).toBe('')
    const [header] = created.stdout.split('\n')
    expect(header).toMatch(/\bid\b/)
    expect(header).toMatch(/\bname\b/)
    expect(() => JSON.parse(created.stdout)).toThrow()
    expect(created.stdout).toContain('Table App')

    const listed = await cli(url, 'apps', 'list')
    expect(listed.code).toBe(0)
    expect(listed.stdout.split('\n')[0]).toMatch(/\bname\b/)
    expect(listed.stdout).toContain('Table App')
  })

})

describe('devplatform keys create', () => {
  it('defaults to a production key with every scope but the opt-in ones (console:link) and the production limit', async () => {
    const { url } = await freshDatabase()
    const app = await createApp(url, 'Keys')
    const key = await createKey(url, app.id)
    expect(Object.keys(key).sort()).toEqual(KEY_FIELDS)
    expect(key.id).toMatch(UUID)
    expect(key.app_id).toBe(app.id)
    expect(key.client_key).toMatch(/^pk_live_[A-Za-z0-9_-]{22,}$/)
    expect(key.client_secret).toMatch(/^sk_live_[A-Za-z0-9_-]{22,}$/)
    expect(key.environment).toBe('production')
    expect(key.scopes).toEqual(DEFAULT_SCOPES)
    expect(key.rate_limit_per_hour).toBe(1000)
    expect(key.active).toBe(true)
    expect(isIsoTimestamp(key.created_at)).toBe(true)
  })

  it('--environment development gives pk_test_/sk_test_ and the development limit', async () => {
    const { url } = await freshDatabase()
    const app = await createApp(url, 'Dev')
    const key = await createKey(url, app.id, '--environment', 'development')
    expect(Object.keys(key).sort()).toEqual(KEY_FIELDS)
    expect(key.client_key).toMatch(/^pk_test_[A-Za-z0-9_-]{22,}$/)
    expect(key.client_secret).toMatch(/^sk_test_[A-Za-z0-9_-]{22,}$/)
    expect(key.environment).toBe('development')
    expect(key.rate_limit_per_hour).toBe(100)
    expect(key.scopes).toEqual(DEFAULT_SCOPES)

    const prod = await createKey(url, app.id, '--environment', 'production')
    expect(prod.client_key).toMatch(/^pk_live_/)
    expect(prod.rate_limit_per_hour).toBe(1000)
  })

  it('--scopes limits the key to those scopes; --rate-limit overrides the hourly limit', async () => {
    const { url } = await freshDatabase()
    const app = await createApp(url, 'Scoped')
    const scoped = await createKey(url, app.id, '--scopes', 'webhook:read,tax:read')
    expect([...scoped.scopes].sort()).toEqual(['tax:read', 'webhook:read'])
    expect(scoped.rate_limit_per_hour).toBe(1000)

    const fast = await createKey(url, app.id, '--rate-limit', '5000')
    expect(fast.rate_limit_per_hour).toBe(5000)
    expect(fast.scopes).toEqual(DEFAULT_SCOPES)

    const fastDev = await createKey(url, app.id, '--environment', 'development', '--rate-limit', '5000')
    expect(fastDev.rate_limit_per_hour).toBe(5000)

    const listed = oneJson(await cli(url, 'keys', 'list', '--app', app.id, '--json')) as KeyOut[]
    const byId = new Map(listed.map((k) => [k.id, k]))
    expect(byId.get(scoped.id)?.scopes.slice().sort()).toEqual(['tax:read', 'webhook:read'])
    expect(byId.get(fast.id)?.rate_limit_per_hour).toBe(5000)
    expect(byId.get(fastDev.id)?.rate_limit_per_hour).toBe(5000)
  })

  it('secrets carry at least 128 random bits, differ between keys, and are stored only as a SHA-256 digest', async () => {
    const { url, dir, file } = freshDb('devplatform-cli-')
    const app = await createApp(url, 'Secrets')
    const first = await createKey(url, app.id)
    const second = await createKey(url, app.id)
    const secrets = [first.client_secret ?? '', second.client_secret ?? '']
    for (const secret of secrets) {
      const random = secret.slice('sk_live_'.length)
      expect(random).toMatch(/^[A-Za-z0-9_-]+$/)
      // base64url: 6 bits a character, so 22 characters are at least 128 bits
      expect(random.length).toBeGreaterThanOrEqual(22)
    }
    expect(secrets[0]).not.toBe(secrets[1])
    expect(first.client_key).not.toBe(second.client_key)

    expect(existsSync(file)).toBe(true)
    const bytes = databaseBytes(dir)
    for (const secret of secrets) {
      expect(bytes.includes(Buffer.from(secret, 'utf8'))).toBe(false)
      // nor the random part on its own
      expect(bytes.includes(Buffer.from(secret.slice('sk_live_'.length), 'utf8'))).toBe(false)
      const digest = createHash('sha256').update(secret, 'utf8').digest('hex')
      expect(bytes.includes(Buffer.from(digest, 'utf8'))).toBe(true)
    }
  })

  it('without --json prints a table with a client_key header', async () => {
    const { url } = await freshDatabase()
    const app = await createApp(url, 'Table keys')
    const result = await cli(url, 'keys', 'create', '--app', app.id)
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
    const [header] = result.stdout.split('\n')
    expect(header).toContain('client_key')
    expect(result.stdout).toMatch(/pk_live_/)
    expect(result.stdout).toMatch(/sk_live_/)
  })
})

describe('devplatform keys list and deactivate', () => {
  it('keys list never shows the client secret, in JSON or as a table', async () => {
    const { url } = await freshDatabase()
    const app = await createApp(url, 'List')
    const key = await createKey(url, app.id)
    const other = await createApp(url, 'Other')
    await createKey(url, other.id)

    const listedResult = await cli(url, 'keys', 'list', '--app', app.id, '--json')
    const listed = oneJson(listedResult) as KeyOut[]
    expect(listed).toHaveLength(1)
    const [only] = listed
    expect(only).toBeDefined()
    expect(Object.keys(only ?? {})).not.toContain('client_secret')
    const { client_secret: _secret, ...withoutSecret } = key
    expect(only).toEqual(withoutSecret)
    expect(listedResult.stdout).not.toContain(key.client_secret ?? '')
    expect(listedResult.stdout).not.toContain('sk_live_')

    const table = await cli(url, 'keys', 'list', '--app', app.id)
    expect(table.code).toBe(0)
    expect(table.stdout.split('\n')[0]).toContain('client_key')
    expect(table.stdout).toContain(key.client_key)
    expect(table.stdout).not.toContain('client_secret')
    expect(table.stdout).not.toContain('sk_live_')
  })

  it('keys deactivate --key works with the client key and with the id', async () => {
    const { url } = await freshDatabase()
    const app = await createApp(url, 'Deactivate')
    const byClientKey = await createKey(url, app.id)
    const byId = await createKey(url, app.id)
    const untouched = await createKey(url, app.id)

    const first = oneJson(await cli(url, 'keys', 'deactivate', '--key', byClientKey.client_key, '--json')) as KeyOut
    expect(first.id).toBe(byClientKey.id)
    expect(first.active).toBe(false)
    expect(Object.keys(first)).not.toContain('client_secret')

    const second = oneJson(await cli(url, 'keys', 'deactivate', '--key', byId.id, '--json')) as KeyOut
    expect(second.id).toBe(byId.id)
    expect(second.client_key).toBe(byId.client_key)
    expect(second.active).toBe(false)

    const listed = oneJson(await cli(url, 'keys', 'list', '--app', app.id, '--json')) as KeyOut[]
    const active = new Map(listed.map((k) => [k.id, k.active]))
    expect(active.get(byClientKey.id)).toBe(false)
    expect(active.get(byId.id)).toBe(false)
    expect(active.get(untouched.id)).toBe(true)
  })
})

describe('devplatform console link', () => {
  it('prints a single-use link under PUBLIC_URL with its role and expiry; a bad role, ttl or application exits 2 and makes nothing', async () => {
    const { url } = await freshDatabase()
    const app = await createApp(url, 'Console')
    const before = Date.now()
    const link = oneJson(await cliWith({ PUBLIC_URL: 'https://pay.example.com' }, url, 'console', 'link', '--app', app.id, '--role', 'admin', '--ttl', '1h', '--json')) as { url: string; role: string; expires_at: string }
    expect(link.url).toMatch(/^https:\/\/pay\.example\.com\/console\/open\/[A-Za-z0-9_-]{43}$/)
    expect(link.role).toBe('admin')
    expect(Date.parse(link.expires_at) - before).toBeGreaterThan(3_590_000)
    const plain = await cli(url, 'console', 'link', '--app', app.id)
    expect(plain.code).toBe(0)
    expect(plain.stdout).toContain('viewer')
    expect(plain.stdout).toContain('it is shown only now')
    expectUsageError(await cli(url, 'console', 'link', '--app', app.id, '--role', 'owner'))
    expectUsageError(await cli(url, 'console', 'link', '--app', app.id, '--ttl', '25h'))
    expectUsageError(await cli(url, 'console', 'link', '--app', MISSING_UUID))
    expect((await cli(url, 'console', 'link', '--app', app.id, '--ttl', '59s')).stderr).toContain('--ttl must be from 1 minute to 24 hours')
  })
})

describe('devplatform usage errors: one line on stderr, exit code 2, nothing on stdout', () => {
  // What is refused before the database is opened is in test/cli/cli-usage.test.ts, on one backend;
  // a missing required option is found once the command runs, with its database open.
  const withDatabase: [string, string[]][] = [
    ['missing --name', ['apps', 'create', '--json']],
    ['missing --app on keys create', ['keys', 'create', '--json']],
    ['missing --app on keys list', ['keys', 'list', '--json']],
    ['missing --key on keys deactivate', ['keys', 'deactivate', '--json']],
    ['missing --webhook on deliveries list', ['deliveries', 'list', '--json']],
    ['unknown application on keys create', ['keys', 'create', '--app', '00000000-0000-4000-8000-000000000000', '--json']],
    ['unknown application on keys list', ['keys', 'list', '--app', '00000000-0000-4000-8000-000000000000', '--json']],
    ['unknown key on keys deactivate', ['keys', 'deactivate', '--key', 'pk_live_doesnotexist', '--json']],
    ['unknown webhook on deliveries list', ['deliveries', 'list', '--webhook', '00000000-0000-4000-8000-000000000000', '--json']],
  ]

  it.each(withDatabase)('%s', async (_label, args) => {
    const { url } = await freshDatabase()
    expectUsageError(await cli(url, ...args))
  })

  const withApp: [string, string[]][] = [
    ['bad --environment', ['--environment', 'staging']],
    ['unknown scope', ['--scopes', 'webhook:read,nope:read']],
    ['--rate-limit 0', ['--rate-limit', '0']],
    ['--rate-limit abc', ['--rate-limit', 'abc']],
  ]

  it.each(withApp)('keys create with %s on an existing application creates nothing', async (_label, extra) => {
    const { url } = await freshDatabase()
    const app = await createApp(url, 'Errors')
    expectUsageError(await cli(url, 'keys', 'create', '--app', app.id, ...extra, '--json'))
    expect(oneJson(await cli(url, 'keys', 'list', '--app', app.id, '--json'))).toEqual([])
  })
})

interface AuditAttemptOut {
  attempt: number
  started_at: string
  duration_ms: number
  outcome: string
  status_code: number | null
  error: string | null
  response_body: string | null
}

interface AuditDeliveryOut {
  id: string
  event_id: string
  event_type: string
  event_created_at: string
  status: string
  attempts: number
  next_attempt_at: string | null
  held_back_until: string | null
  created_at: string
  updated_at: string
  attempt_log: AuditAttemptOut[]
}

interface AuditOut {
  webhook: {
    id: string
    app_id: string
    name: string
    url: string
    isActive: boolean
    encrypted: boolean
    deleted_at: string | null
    delivery_stats: { total_events: number; successful_deliveries: number; failed_deliveries: number; last_delivery: string | null }
    circuit: { state: 'open' | 'closed'; consecutive_failures: number; retry_at: string | null }
  }
  deliveries: AuditDeliveryOut[]
}

const AUDIT_WEBHOOK_FIELDS = ['app_id', 'circuit', 'deleted_at', 'delivery_stats', 'encrypted', 'id', 'isActive', 'name', 'url']
const AUDIT_STATS_FIELDS = ['failed_deliveries', 'last_delivery', 'successful_deliveries', 'total_events']
const AUDIT_DELIVERY_FIELDS = ['attempt_log', 'attempts', 'created_at', 'event_created_at', 'event_id', 'event_type', 'held_back_until', 'id', 'next_attempt_at', 'status', 'updated_at']
const AUDIT_ATTEMPT_FIELDS = ['attempt', 'duration_ms', 'error', 'outcome', 'response_body', 'started_at', 'status_code']

interface CreatedWebhook {
  id: string
  name: string
  url: string
  signing_secret: string
}

describe('devplatform deliveries list', () => {
  let server: TestServer
  let key: TestKey
  let receiver: Server
  let receiverBase = ''
  let databaseUrl = ''
  const hanging = new Set<ServerResponse>()
  /** answered 200 (and its webhook deleted), answered 500 twice (and deleted), still waiting for an answer */
  let okHook: CreatedWebhook
  let failHook: CreatedWebhook
  let hangHook: CreatedWebhook
  let deletedAt: Map<string, string>

  /** The database as the test sees it, independently of the CLI. */
  function query<T>(sqlText: string, ...params: unknown[]): Promise<T[]> {
    return server.database.query<T>(sqlText, ...params)
  }

  async function createWebhook(name: string, path: string): Promise<CreatedWebhook> {
    const res = await server.request<CreatedWebhook>('POST', '/api/v0/webhooks', { key, body: { name, url: `${receiverBase}${path}` } })
    expect(res.status, res.text).toBe(201)
    expect(res.body.signing_secret).toMatch(/^whsec_/)
    return res.body
  }

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      request.resume()
      request.on('end', () => {
        if (request.url === '/ok') response.writeHead(200, { 'content-type': 'text/plain' }).end('thanks')
        else if (request.url === '/fail') response.writeHead(500, { 'content-type': 'text/plain' }).end('nope')
        else hanging.add(response)
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    const address = receiver.address()
    if (address === null || typeof address === 'string') throw new Error('receiver has no port')
    receiverBase = `http://127.0.0.1:${address.port}`

    // One retry 50 ms after a failure, then the delivery has failed for good.
    server = await startTestServer({ webhooks: { dispatcher: true, timeoutMs: 60_000 }, delivery: { retrySchedule: [50] } })
    databaseUrl = server.database.url
    key = await server.createKey()
    okHook = await createWebhook('audit ok', '/ok')
    failHook = await createWebhook('audit fail', '/fail')
    for (const n of [1, 2]) {
      const res = await server.request('POST', '/api/v0/taxes', { key, body: { name: `VAT ${n}`, percentage: 20 } })
      expect(res.status, res.text).toBe(201)
    }
    // okHook: webhook.created ×2 + tax.created ×2; failHook: its own webhook.created + tax.created ×2.
    await waitUntil('every delivery to settle', async () => {
      const [row] = await query<{ settled: number; pending: number }>(
        "select count(case when status in ('succeeded', 'failed') then 1 end) as settled, count(case when status = 'pending' then 1 end) as pending from deliveries",
      )
      return row?.settled === 7 && row.pending === 0 ? true : undefined
    })
    for (const hook of [okHook, failHook]) {
      const res = await server.request('DELETE', `/api/v0/webhooks/${hook.id}`, { key })
      expect(res.status, res.text).toBe(200)
    }
    deletedAt = new Map((await query<{ id: string; deleted_at: string }>('select id, deleted_at from webhooks where deleted_at is not null')).map((r) => [r.id, r.deleted_at]))
    expect(deletedAt.size).toBe(2)
    // Its own webhook.created goes on the wire and stays there: a pending, claimed delivery.
    hangHook = await createWebhook('audit hang', '/hang')
    await waitUntil('the hanging request', () => (hanging.size === 1 ? true : undefined))
  }, 30_000)

  afterAll(async () => {
    for (const response of hanging) response.end()
    await server?.close()
    receiver?.closeAllConnections()
    await new Promise((resolve) => receiver?.close(resolve))
  })

  function expectNoSecret(stdout: string): void {
    for (const hook of [okHook, failHook, hangHook]) expect(stdout).not.toContain(hook.signing_secret)
    expect(stdout).not.toContain('whsec_')
    expect(stdout).not.toContain('signing_secret')
  }

  /** What --json must print for `webhookId`, built from the database with plain SQL. */
  async function expectedDocument(webhookId: string, limit = 50): Promise<AuditOut> {
    const [w] = await query<{
      id: string
      app_id: string
      name: string
      url: string
      is_active: number
      encrypted: number
      deleted_at: string | null
      total_events: number
      successful_deliveries: number
      failed_deliveries: number
      last_delivery: string | null
      consecutive_failures: number
      circuit_retry_at: string | null
    }>('select *, (select cast(coalesce(sum(events), 0) as integer) from webhook_event_counts where webhook_id = webhooks.id) as total_events from webhooks where id = ?', webhookId)
    if (w === undefined) throw new Error(`no webhook ${webhookId}`)
    const deliveries = await query<Omit<AuditDeliveryOut, 'attempt_log'>>(
      `select d.id, d.event_id, e.type as event_type, e.created_at as event_created_at, d.status, d.attempts,
              case when d.status = 'pending' then d.next_attempt_at end as next_attempt_at,
              case when d.status = 'pending' and w.consecutive_failures >= 5 then w.circuit_retry_at end as held_back_until, d.created_at, d.updated_at
         from deliveries d join events e on e.id = d.event_id join webhooks w on w.id = d.webhook_id
        where d.webhook_id = ? order by d.created_at desc, d.id desc limit ?`,
      webhookId,
      limit,
    )
    return {
      webhook: {
        id: w.id,
        app_id: w.app_id,
        name: w.name,
        url: w.url,
        // A deleted webhook is shown inactive, whatever its row's is_active says.
        isActive: w.is_active === 1 && w.deleted_at === null,
        encrypted: w.encrypted === 1,
        deleted_at: w.deleted_at,
        delivery_stats: {
          total_events: w.total_events,
          successful_deliveries: w.successful_deliveries,
          failed_deliveries: w.failed_deliveries,
          last_delivery: w.last_delivery,
        },
        circuit: {
          state: w.consecutive_failures >= 5 ? 'open' : 'closed',
          consecutive_failures: w.consecutive_failures,
          retry_at: w.consecutive_failures >= 5 ? w.circuit_retry_at : null,
        },
      },
      deliveries: await Promise.all(
        deliveries.map(async (d) => ({
          ...d,
          attempt_log: await query<AuditAttemptOut>(
            `select attempt, started_at, duration_ms, outcome, status_code, error, response_body
               from delivery_attempts where delivery_id = ? order by started_at, attempt`,
            d.id,
          ),
        })),
      ),
    }
  }

  function expectExactShape(doc: AuditOut): void {
    expect(Object.keys(doc).sort()).toEqual(['deliveries', 'webhook'])
    expect(Object.keys(doc.webhook).sort()).toEqual(AUDIT_WEBHOOK_FIELDS)
    expect(Object.keys(doc.webhook.delivery_stats).sort()).toEqual(AUDIT_STATS_FIELDS)
    for (const delivery of doc.deliveries) {
      expect(Object.keys(delivery).sort()).toEqual(AUDIT_DELIVERY_FIELDS)
      for (const attempt of delivery.attempt_log) expect(Object.keys(attempt).sort()).toEqual(AUDIT_ATTEMPT_FIELDS)
    }
  }

  it('--json shows a deleted webhook (answered 500 twice) with every delivery and attempt, newest delivery first', async () => {
    const result = await cli(databaseUrl, 'deliveries', 'list', '--webhook', failHook.id, '--json')
    const doc = oneJson(result) as AuditOut
    expectNoSecret(result.stdout)
    expectExactShape(doc)
    expect(doc).toEqual(await expectedDocument(failHook.id))

    expect(doc.webhook).toMatchObject({ id: failHook.id, app_id: key.appId, name: 'audit fail', url: `${receiverBase}/fail`, isActive: false, encrypted: false })
    expect(doc.webhook.deleted_at).toBe(deletedAt.get(failHook.id))
    expect(isIsoTimestamp(doc.webhook.deleted_at ?? '')).toBe(true)
    expect(doc.webhook.delivery_stats).toMatchObject({ total_events: 3, successful_deliveries: 0, failed_deliveries: 6 })
    expect(doc.deliveries.map((d) => d.event_type)).toEqual(['tax.created', 'tax.created', 'webhook.created'])
    const created = doc.deliveries.map((d) => d.created_at)
    expect(created).toEqual([...created].sort().reverse())
    for (const delivery of doc.deliveries) {
      expect(delivery.status).toBe('failed')
      expect(delivery.attempts).toBe(2)
      expect(delivery.next_attempt_at).toBeNull()
      expect(isIsoTimestamp(delivery.event_created_at)).toBe(true)
      expect(delivery.attempt_log.map((a) => [a.attempt, a.outcome, a.status_code, a.error, a.response_body])).toEqual([
        [1, 'failed', 500, 'HTTP 500', 'nope'],
        [2, 'failed', 500, 'HTTP 500', 'nope'],
      ])
      const [first, second] = delivery.attempt_log
      expect(isIsoTimestamp(first?.started_at ?? '')).toBe(true)
      expect((first?.started_at ?? '') <= (second?.started_at ?? '')).toBe(true)
      expect(first?.duration_ms).toBeGreaterThanOrEqual(0)
    }
    expect(doc.webhook.delivery_stats.last_delivery).toBe(doc.deliveries.flatMap((d) => d.attempt_log.map((a) => a.started_at)).sort().at(-1))
  })

  it('--json shows a deleted webhook that was answered 200: one succeeded attempt per delivery', async () => {
    const result = await cli(databaseUrl, 'deliveries', 'list', '--webhook', okHook.id, '--json')
    const doc = oneJson(result) as AuditOut
    expectNoSecret(result.stdout)
    expectExactShape(doc)
    expect(doc).toEqual(await expectedDocument(okHook.id))
    expect(doc.webhook.deleted_at).toBe(deletedAt.get(okHook.id))
    expect(doc.webhook.delivery_stats).toMatchObject({ total_events: 4, successful_deliveries: 4, failed_deliveries: 0 })
    expect(doc.deliveries.map((d) => d.event_type)).toEqual(['tax.created', 'tax.created', 'webhook.created', 'webhook.created'])
    for (const delivery of doc.deliveries) {
      expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1, next_attempt_at: null })
      expect(delivery.attempt_log.map((a) => [a.attempt, a.outcome, a.status_code, a.error, a.response_body])).toEqual([[1, 'succeeded', 200, null, 'thanks']])
    }
  })

  it('--json shows a pending delivery with its next_attempt_at and no attempt yet; a live webhook has deleted_at null', async () => {
    const result = await cli(databaseUrl, 'deliveries', 'list', '--webhook', hangHook.id.toUpperCase(), '--json')
    const doc = oneJson(result) as AuditOut
    expectNoSecret(result.stdout)
    expectExactShape(doc)
    expect(doc).toEqual(await expectedDocument(hangHook.id))
    expect(doc.webhook).toMatchObject({ id: hangHook.id, deleted_at: null, isActive: true })
    expect(doc.deliveries).toHaveLength(1)
    const [delivery] = doc.deliveries
    expect(delivery).toMatchObject({ event_type: 'webhook.created', status: 'pending', attempts: 0, attempt_log: [] })
    expect(isIsoTimestamp(delivery?.next_attempt_at ?? '')).toBe(true)
  })

  it('without --json prints a header line about the webhook, then the table, and nothing else', async () => {
    const result = await cli(databaseUrl, 'deliveries', 'list', '--webhook', failHook.id)
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
    expectNoSecret(result.stdout)
    expect(() => JSON.parse(result.stdout)).toThrow()
    const lines = result.stdout.split('\n')
    const expected = await expectedDocument(failHook.id)
    // header, column names, one line per delivery, and the final newline
    expect(lines).toHaveLength(2 + expected.deliveries.length + 1)
    expect(lines.at(-1)).toBe('')
    const [header, columns, ...rest] = lines
    expect(header).toContain(failHook.id)
    expect(header).toContain('audit fail')
    expect(header).toContain(`, inactive (deleted at ${deletedAt.get(failHook.id) ?? '?'});`)
    expect(columns?.split(/\s+/)).toEqual(['id', 'event_type', 'event_id', 'status', 'attempts', 'next_attempt_at', 'last_outcome', 'last_status_code'])
    expected.deliveries.forEach((delivery, i) => {
      expect(rest[i]?.split(/\s+/)).toEqual([delivery.id, delivery.event_type, delivery.event_id, 'failed', '2', 'failed', '500'])
    })

    const live = await cli(databaseUrl, 'deliveries', 'list', '--webhook', hangHook.id)
    expect(live.code).toBe(0)
    expectNoSecret(live.stdout)
    const [liveHeader, , liveRow] = live.stdout.split('\n')
    expect(liveHeader).toContain(hangHook.id)
    expect(liveHeader).not.toContain('deleted')
    expect(liveHeader).toContain('active')
    const pending = (await expectedDocument(hangHook.id)).deliveries[0]
    expect(liveRow?.split(/\s+/)).toEqual([pending?.id, 'webhook.created', pending?.event_id, 'pending', '0', pending?.next_attempt_at])
  })

  it('--limit takes the newest N, from 1 to 1000', async () => {
    const all = (await expectedDocument(okHook.id)).deliveries
    const one = oneJson(await cli(databaseUrl, 'deliveries', 'list', '--webhook', okHook.id, '--limit', '1', '--json')) as AuditOut
    expect(one.deliveries.map((d) => d.id)).toEqual([all[0]?.id])
    expect(one).toEqual(await expectedDocument(okHook.id, 1))
    const two = oneJson(await cli(databaseUrl, 'deliveries', 'list', '--webhook', okHook.id, '--limit', '2', '--json')) as AuditOut
    expect(two.deliveries.map((d) => d.id)).toEqual(all.slice(0, 2).map((d) => d.id))
    const most = oneJson(await cli(databaseUrl, 'deliveries', 'list', '--webhook', okHook.id, '--limit', '1000', '--json')) as AuditOut
    expect(most.deliveries).toHaveLength(4)
  })

  it.each([['0'], ['1001'], ['-1'], ['abc'], ['1.5'], ['']])('--limit %j is a usage error', async (limit) => {
    const result = await cli(databaseUrl, 'deliveries', 'list', '--webhook', okHook.id, `--limit=${limit}`, '--json')
    expectUsageError(result)
    expect(result.stderr).toContain('--limit')
  })

  it('an unknown webhook id is a usage error naming it', async () => {
    const result = await cli(databaseUrl, 'deliveries', 'list', '--webhook', MISSING_UUID)
    expectUsageError(result)
    expect(result.stderr).toBe(`devplatform: unknown webhook: ${MISSING_UUID}\n`)
  })
})
