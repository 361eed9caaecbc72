import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI, cleanUp, freshDb, ROOT, serviceEnv, track } from '../processes.js'

const RUN_TIMEOUT_MS = 10_000

const ALL_SCOPES = [
  'webhook:create',
  'webhook:read',
  'webhook:update',
  'webhook:delete',
  'customer:create',
  'customer:read',
  'customer:update',
  'liquidation_address:create',
  'liquidation_address:read',
  'tax:create',
  'tax:read',
  'tax:update',
  'tax:delete',
]

const KEY_FIELDS = ['active', 'app_id', 'client_key', 'client_secret', 'created_at', 'environment', 'id', 'rate_limit_per_hour', 'scopes']
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

interface RunResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

interface AppOut {
  id: string
  name: string
  created_at: string
}

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

afterAll(cleanUp)

function run(command: string, args: string[], databaseUrl: string, cwd: string = ROOT): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = track(spawn(command, args, { cwd, env: serviceEnv({ DATABASE_URL: databaseUrl }), stdio: ['ignore', 'pipe', 'pipe'] }))
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${RUN_TIMEOUT_MS} ms`))
    }, RUN_TIMEOUT_MS)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

function cli(databaseUrl: string, ...args: string[]): Promise<RunResult> {
  return run(process.execPath, [CLI, ...args], databaseUrl)
}

/** Asserts a successful --json run printed exactly one JSON document (one line) and returns it. */
function oneJson(result: RunResult): unknown {
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  expect(result.stdout.endsWith('\n')).toBe(true)
  const lines = result.stdout.split('\n')
  expect(lines).toHaveLength(2)
  expect(lines[1]).toBe('')
  return JSON.parse(result.stdout)
}

/** Asserts a usage failure: exit 2, exactly one non-empty line on stderr, nothing on stdout. */
function expectUsageError(result: RunResult): void {
  expect(result.stdout).toBe('')
  expect(result.code).toBe(2)
  const lines = result.stderr.split('\n')
  expect(lines, `stderr was ${JSON.stringify(result.stderr)}`).toHaveLength(2)
  expect(lines[0]?.trim()).not.toBe('')
  expect(lines[1]).toBe('')
}

function isIsoTimestamp(value: string): boolean {
  return !Number.isNaN(Date.parse(value)) && new Date(value).toISOString() === value
}

async function createApp(url: string, name: string): Promise<AppOut> {
  return oneJson(await cli(url, 'apps', 'create', '--name', name, '--json')) as AppOut
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
    const { url } = freshDb('devplatform-cli-')
    const app = await createApp(url, 'Acme Payments')
    expect(Object.keys(app).sort()).toEqual(['created_at', 'id', 'name'])
    expect(app.id).toMatch(UUID)
    expect(app.name).toBe('Acme Payments')
    expect(isIsoTimestamp(app.created_at)).toBe(true)

    const list = oneJson(await cli(url, 'apps', 'list', '--json'))
    expect(list).toEqual([app])
  })

  it('apps list --json on an empty database is an empty array', async () => {
    const { url } = freshDb('devplatform-cli-')
    expect(oneJson(await cli(url, 'apps', 'list', '--json'))).toEqual([])
  })

  it('without --json prints a readable table', async () => {
    const { url } = freshDb('devplatform-cli-')
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

  it('works as `npx devplatform` from the repository root on the same DATABASE_URL', async () => {
    const { url } = freshDb('devplatform-cli-')
    const app = await createApp(url, 'Via npx')
    const result = await run('npx', ['devplatform', 'apps', 'list', '--json'], url, ROOT)
    expect(result.code).toBe(0)
    // npm itself may print warnings on stderr; stdout must be the one JSON document.
    expect(result.stdout.split('\n')).toHaveLength(2)
    expect(JSON.parse(result.stdout)).toEqual([app])
  })
})

describe('devplatform keys create', () => {
  it('defaults to a production key with every scope and the production limit', async () => {
    const { url } = freshDb('devplatform-cli-')
    const app = await createApp(url, 'Keys')
    const key = await createKey(url, app.id)
    expect(Object.keys(key).sort()).toEqual(KEY_FIELDS)
    expect(key.id).toMatch(UUID)
    expect(key.app_id).toBe(app.id)
    expect(key.client_key).toMatch(/^pk_live_[A-Za-z0-9_-]{22,}$/)
    expect(key.client_secret).toMatch(/^sk_live_[A-Za-z0-9_-]{22,}$/)
    expect(key.environment).toBe('production')
    expect(key.scopes).toEqual(ALL_SCOPES)
    expect(key.rate_limit_per_hour).toBe(1000)
    expect(key.active).toBe(true)
    expect(isIsoTimestamp(key.created_at)).toBe(true)
  })

  it('--environment development gives pk_test_/sk_test_ and the development limit', async () => {
    const { url } = freshDb('devplatform-cli-')
    const app = await createApp(url, 'Dev')
    const key = await createKey(url, app.id, '--environment', 'development')
    expect(Object.keys(key).sort()).toEqual(KEY_FIELDS)
    expect(key.client_key).toMatch(/^pk_test_[A-Za-z0-9_-]{22,}$/)
    expect(key.client_secret).toMatch(/^sk_test_[A-Za-z0-9_-]{22,}$/)
    expect(key.environment).toBe('development')
    expect(key.rate_limit_per_hour).toBe(100)
    expect(key.scopes).toEqual(ALL_SCOPES)

    const prod = await createKey(url, app.id, '--environment', 'production')
    expect(prod.client_key).toMatch(/^pk_live_/)
    expect(prod.rate_limit_per_hour).toBe(1000)
  })

  it('--scopes limits the key to those scopes; --rate-limit overrides the hourly limit', async () => {
    const { url } = freshDb('devplatform-cli-')
    const app = await createApp(url, 'Scoped')
    const scoped = await createKey(url, app.id, '--scopes', 'webhook:read,tax:read')
    expect([...scoped.scopes].sort()).toEqual(['tax:read', 'webhook:read'])
    expect(scoped.rate_limit_per_hour).toBe(1000)

    const fast = await createKey(url, app.id, '--rate-limit', '5000')
    expect(fast.rate_limit_per_hour).toBe(5000)
    expect(fast.scopes).toEqual(ALL_SCOPES)

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
    const { url } = freshDb('devplatform-cli-')
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
    const { url } = freshDb('devplatform-cli-')
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
    const { url } = freshDb('devplatform-cli-')
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

describe('devplatform usage errors: one line on stderr, exit code 2, nothing on stdout', () => {
  const appFree: [string, string[]][] = [
    ['unknown flag', ['apps', 'list', '--bogus', '--json']],
    ['a flag of another command', ['apps', 'list', '--app', 'x', '--json']],
    ['missing --name', ['apps', 'create', '--json']],
    ['--name without a value', ['apps', 'create', '--name']],
    ['missing --app on keys create', ['keys', 'create', '--json']],
    ['missing --app on keys list', ['keys', 'list', '--json']],
    ['missing --key on keys deactivate', ['keys', 'deactivate', '--json']],
    ['unknown application on keys create', ['keys', 'create', '--app', '00000000-0000-4000-8000-000000000000', '--json']],
    ['unknown application on keys list', ['keys', 'list', '--app', '00000000-0000-4000-8000-000000000000', '--json']],
    ['unknown key on keys deactivate', ['keys', 'deactivate', '--key', 'pk_live_doesnotexist', '--json']],
    ['unknown command', ['apps', 'destroy', '--json']],
    ['unknown top-level command', ['frobnicate']],
    ['no command at all', []],
  ]

  it.each(appFree)('%s', async (_label, args) => {
    const { url } = freshDb('devplatform-cli-')
    expectUsageError(await cli(url, ...args))
  })

  const withApp: [string, string[]][] = [
    ['bad --environment', ['--environment', 'staging']],
    ['unknown scope', ['--scopes', 'webhook:read,nope:read']],
    ['--rate-limit 0', ['--rate-limit', '0']],
    ['--rate-limit abc', ['--rate-limit', 'abc']],
  ]

  it.each(withApp)('keys create with %s on an existing application creates nothing', async (_label, extra) => {
    const { url } = freshDb('devplatform-cli-')
    const app = await createApp(url, 'Errors')
    expectUsageError(await cli(url, 'keys', 'create', '--app', app.id, ...extra, '--json'))
    expect(oneJson(await cli(url, 'keys', 'list', '--app', app.id, '--json'))).toEqual([])
  })
})
