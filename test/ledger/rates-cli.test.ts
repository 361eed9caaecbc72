import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { type Db } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../backend.js'
import { CLI, cleanUp, exitWithin, launch, tempDir } from '../processes.js'

let fresh: FreshDatabase
let db: Db
let dir: string

beforeAll(async () => {
  fresh = await freshDatabase()
  db = await openDatabase(parseDatabaseUrl(fresh.url))
  dir = tempDir('devplatform-rates-cli-')
})
beforeEach(async () => {
  await db.deleteFrom('exchange_rates').execute()
})
afterAll(async () => {
  await db.destroy()
  cleanUp()
  await dropFreshDatabases()
})

async function devplatform(...args: string[]) {
  const running = launch(CLI, args, { DATABASE_URL: fresh.url })
  const exit = await exitWithin(running, 20_000)
  return { code: exit.code, stdout: running.stdout(), stderr: running.stderr() }
}

/** Asserts a usage failure: exit 2, one line on stderr naming `text`, nothing on stdout. */
function expectUsageError(result: { code: number | null; stdout: string; stderr: string }, text: string): void {
  expect(result.stdout).toBe('')
  expect(result.code).toBe(2)
  expect(result.stderr.split('\n')).toHaveLength(2)
  expect(result.stderr).toContain(text)
}

const iso = (ms: number) => new Date(ms).toISOString()
let fileCount = 0
function file(content: unknown): string {
  const path = join(dir, `rates-${++fileCount}.json`)
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
  return path
}

const rate = (overrides: Record<string, string> = {}) => ({
  environment: 'live',
  from: 'usd',
  to: 'eur',
  midmarket_rate: '0.85000',
  buy_rate: '0.84500',
  sell_rate: '0.85500',
  timestamp: '2026-01-15T10:30:00Z',
  ...overrides,
})

async function stored(): Promise<number> {
  const row = await db.selectFrom('exchange_rates').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

describe('devplatform rates load', () => {
  it('loads every rate of the file; loading it again adds nothing', async () => {
    const path = file([rate(), rate({ environment: 'sandbox', from: 'eur', to: 'usd', midmarket_rate: '1.2', buy_rate: '1.19', sell_rate: '1.21' })])
    const first = await devplatform('rates', 'load', path, '--json')
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(JSON.parse(first.stdout)).toEqual({ added: 2, unchanged: 0 })
    expect(await devplatform('rates', 'load', path)).toEqual({ code: 0, stdout: '0 rates loaded, 2 already loaded\n', stderr: '' })
    expect(await stored()).toBe(2)
  })

  it('--environment gives rates that name none their environment', async () => {
    const { environment: _, ...anonymous } = rate()
    const result = await devplatform('rates', 'load', file([anonymous]), '--environment', 'sandbox', '--json')
    expect(JSON.parse(result.stdout)).toEqual({ added: 1, unchanged: 0 })
    expect(await db.selectFrom('exchange_rates').select('environment').execute()).toEqual([{ environment: 'sandbox' }])
  })

  it.each([
    ['a rate with buy not below midmarket', [rate(), rate({ from: 'eur', to: 'usd', buy_rate: '0.85' })], 'rate 2: buy_rate < midmarket_rate < sell_rate must hold (got 0.85, 0.85000, 0.85500)'],
    ['a timestamp in the future', [rate({ timestamp: iso(Date.now() + 60_000) })], 'is in the future'],
    ['an unknown pair', [rate({ to: 'gbp' })], 'rate 1: to must be one of usd, eur, mxn (got "gbp")'],
    ['a rate as a number', [{ ...rate(), sell_rate: 0.855 }], 'rate 1: sell_rate must be a string'],
    ['not JSON', '[{', 'not JSON'],
    ['an empty array', [], 'the document holds no rates'],
  ])('refuses %s: exit 2, one line naming the file and the rate, nothing stored', async (_label, content, message) => {
    const path = file(content)
    const result = await devplatform('rates', 'load', path)
    expectUsageError(result, `devplatform: ${path}: `)
    expect(result.stderr).toContain(message)
    expect(await stored()).toBe(0)
  })

  it('a rate that differs from a stored one of the same time refuses the whole file', async () => {
    await devplatform('rates', 'load', file([rate()]))
    const result = await devplatform('rates', 'load', file([rate({ timestamp: '2026-01-15T11:00:00Z' }), rate({ sell_rate: '0.86' })]))
    expectUsageError(result, 'rate 2: the live usd to eur rate of 2026-01-15T10:30:00.000Z was loaded at')
    expect(await stored()).toBe(1)
  })

  it('refuses an --environment the file contradicts, a file that is not there, and a missing or second FILE', async () => {
    expectUsageError(await devplatform('rates', 'load', file([rate()]), '--environment', 'sandbox'), 'rate 1: environment live contradicts --environment sandbox')
    expectUsageError(await devplatform('rates', 'load', join(dir, 'nowhere.json')), `cannot read ${join(dir, 'nowhere.json')}: ENOENT`)
    expectUsageError(await devplatform('rates', 'load', dir), `${dir} is not a file`)
    expectUsageError(await devplatform('rates', 'load'), '"rates load" takes one FILE (got 0)')
    expectUsageError(await devplatform('rates', 'load', 'a.json', 'b.json'), '"rates load" takes one FILE (got 2)')
    expectUsageError(await devplatform('rates', 'load', file([rate()]), '--environment', 'production'), '--environment must be sandbox or live for "rates load" (got production)')
    expectUsageError(await devplatform('rates', 'load', file([rate()]), '--limit', '5'), 'option --limit does not apply to "rates load"')
    expect(await stored()).toBe(0)
  })
})

describe('devplatform rates list', () => {
  it('lists the loaded rates newest first, of one environment or both, up to --limit', async () => {
    await devplatform(
      'rates',
      'load',
      file([rate({ timestamp: '2026-01-15T10:00:00Z' }), rate({ environment: 'sandbox', timestamp: '2026-01-15T11:00:00Z' }), rate({ timestamp: '2026-01-15T12:00:00Z', midmarket_rate: '0.86', sell_rate: '0.87' })]),
    )
    const all = await devplatform('rates', 'list', '--json')
    expect(all.code).toBe(0)
    const listed = JSON.parse(all.stdout) as Record<string, string>[]
    expect(listed.map((row) => [row.environment, row.timestamp])).toEqual([
      ['live', '2026-01-15T12:00:00.000Z'],
      ['sandbox', '2026-01-15T11:00:00.000Z'],
      ['live', '2026-01-15T10:00:00.000Z'],
    ])
    expect(listed[0]).toEqual({
      environment: 'live',
      from: 'usd',
      to: 'eur',
      midmarket_rate: '0.86',
      buy_rate: '0.84500',
      sell_rate: '0.87',
      timestamp: '2026-01-15T12:00:00.000Z',
      loaded_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    })
    const live = JSON.parse((await devplatform('rates', 'list', '--environment', 'live', '--limit', '1', '--json')).stdout) as Record<string, string>[]
    expect(live.map((row) => row.timestamp)).toEqual(['2026-01-15T12:00:00.000Z'])
    const text = await devplatform('rates', 'list', '--environment', 'sandbox')
    expect(text.stdout.split('\n')[0]).toMatch(/^environment\s+from\s+to\s+midmarket_rate\s+buy_rate\s+sell_rate\s+timestamp\s+loaded_at$/)
    expect(text.stdout.split('\n')).toHaveLength(3)
  })

  it('an empty list, and the usage errors', async () => {
    expect((await devplatform('rates', 'list')).stdout).toBe('(none)\n')
    expectUsageError(await devplatform('rates', 'list', '--limit', '0'), '--limit must be a whole number from 1 to 1000 (got 0)')
    expectUsageError(await devplatform('rates', 'list', '--limit', '1001'), '--limit must be a whole number from 1 to 1000 (got 1001)')
    expect((await devplatform('rates', 'list', '--limit', '1000')).code).toBe(0)
    expectUsageError(await devplatform('rates', 'list', '--environment', 'development'), '--environment must be sandbox or live for "rates list" (got development)')
    expectUsageError(await devplatform('rates', 'list', 'extra'), 'unknown command: rates list extra')
  })

  it('help rates prints the part of both commands', async () => {
    const result = await devplatform('help', 'rates')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^ {2}rates load FILE \[--environment sandbox\|live\]\n[\s\S]* {2}rates list \[--environment sandbox\|live\] \[--limit N\]\n/)
  })
})
