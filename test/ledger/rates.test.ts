import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { type Db } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { CURRENCY_DECIMALS, type Currency } from '../../src/ledger/amount.js'
import { RatesFile, RatesFileError } from '../../src/ledger/rates-file.js'
import {
  convert,
  ExchangeRates,
  type LoadedRate,
  listRates,
  MAX_RATES_PER_DOCUMENT,
  parseRatesDocument,
  RateUnavailable,
  RatesDocumentError,
  rateCurrencyOf,
  SANDBOX_DEFAULT_RATES,
  saveRates,
} from '../../src/ledger/rates.js'
import { dropFreshDatabases, freshDatabase } from '../backend.js'

let db: Db
beforeAll(async () => {
  const fresh = await freshDatabase()
  db = await openDatabase(parseDatabaseUrl(fresh.url, 'DATABASE_URL', 5))
})
afterAll(async () => {
  await db.destroy()
  await dropFreshDatabases()
})
beforeEach(async () => {
  await db.deleteFrom('exchange_rates').execute()
})

const NOW = Date.parse('2026-06-01T12:00:00.000Z')
const HOUR = 3_600_000
const iso = (ms: number) => new Date(ms).toISOString()

function rate(overrides: Partial<LoadedRate> = {}): LoadedRate {
  return { environment: 'live', from: 'usd', to: 'eur', midmarket: '0.9', buy: '0.89', sell: '0.91', asOf: iso(NOW - 1000), ...overrides }
}

async function count(): Promise<number> {
  const row = await db.selectFrom('exchange_rates').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

describe('rateCurrencyOf: the fiat each currency stands for', () => {
  it('maps every stablecoin to its fiat and every fiat to itself', () => {
    const expected: Record<Currency, string> = { usdc: 'usd', usdt: 'usd', pyusd: 'usd', dai: 'usd', usd: 'usd', eurc: 'eur', eur: 'eur', mxn: 'mxn' }
    for (const currency of Object.keys(CURRENCY_DECIMALS) as Currency[]) expect(rateCurrencyOf(currency), currency).toBe(expected[currency])
  })
})

describe('convert: exact, rounded down to the smallest unit of the destination', () => {
  it('converts across 6, 2 and 18 decimals', () => {
    // 1 USDC at 0.845 → 0.84 EUR (0.845 rounded down to cents)
    expect(convert(1_000_000n, 'usdc', 'eur', '0.845')).toBe(84n)
    // 1 USDC → EURC at 0.845: exactly 0.845000
    expect(convert(1_000_000n, 'usdc', 'eurc', '0.845')).toBe(845_000n)
    // 12.34 USD → USDC at 1: 12.340000
    expect(convert(1234n, 'usd', 'usdc', '1')).toBe(12_340_000n)
    // 1 DAI (18 decimals) → USDC at 1: 1.000000, the 12 extra decimals dropped
    expect(convert(10n ** 18n, 'dai', 'usdc', '1')).toBe(1_000_000n)
    // 0.000000999999999999 DAI is less than one USDC unit: 0
    expect(convert(999_999_999_999n, 'dai', 'usdc', '1')).toBe(0n)
    expect(convert(1_000_000_000_000n, 'dai', 'usdc', '1')).toBe(1n)
    // 1 USDC → DAI at 1.17647: every digit kept
    expect(convert(1_000_000n, 'usdc', 'dai', '1.17647')).toBe(1_176_470_000_000_000_000n)
    // 1 MXN at 0.05405 → 0.05 USD
    expect(convert(100n, 'mxn', 'usd', '0.05405')).toBe(5n)
  })

  it('rounds down at the exact boundary of a unit, never up', () => {
    // 0.01 USD at 0.5 is half a cent: 0
    expect(convert(1n, 'usd', 'eur', '0.5')).toBe(0n)
    expect(convert(2n, 'usd', 'eur', '0.5')).toBe(1n)
    expect(convert(3n, 'usd', 'eur', '0.5')).toBe(1n)
    // 0.999999 of a unit short of 1 EUR stays 0.99
    expect(convert(999_999n, 'usdc', 'eur', '1')).toBe(99n)
    expect(convert(1_000_000n, 'usdc', 'eur', '1')).toBe(100n)
    expect(convert(0n, 'usdc', 'eur', '0.85')).toBe(0n)
  })

  it('is exact on huge DAI amounts (past 2^64 and 2^128)', () => {
    const units = 123_456_789_012_345_678_901_234_567_890_123_456_789n
    expect(convert(units, 'dai', 'dai', '1')).toBe(units)
    expect(convert(units, 'dai', 'eurc', '0.845')).toBe((units * 845n) / 10n ** 15n)
    expect(convert(units, 'dai', 'dai', '0.000000000000000001')).toBe(units / 10n ** 18n)
  })

  it('for any amount and rate: result ≤ exact value < result + 1 unit (property)', () => {
    const currencies = Object.keys(CURRENCY_DECIMALS) as Currency[]
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        fc.constantFrom(...currencies),
        fc.constantFrom(...currencies),
        fc.bigInt({ min: 1n, max: 10n ** 20n }),
        fc.integer({ min: 0, max: 18 }),
        (units, from, to, digits, scale) => {
          const text = digits.toString().padStart(scale + 1, '0')
          const rateText = scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`
          fc.pre(/^(0|[1-9][0-9]{0,11})(\.[0-9]+)?$/.test(rateText))
          const result = convert(units, from, to, rateText)
          // exact value in `to` units = units × digits × 10^to / 10^(from + scale)
          const numerator = units * digits * 10n ** BigInt(CURRENCY_DECIMALS[to])
          const denominator = 10n ** BigInt(CURRENCY_DECIMALS[from] + scale)
          expect(result * denominator <= numerator).toBe(true)
          expect((result + 1n) * denominator > numerator).toBe(true)
        },
      ),
      { numRuns: 2000 },
    )
  })

  it('refuses a negative amount and a rate that is not a positive decimal', () => {
    expect(() => convert(-1n, 'usdc', 'eur', '1')).toThrow(RangeError)
    for (const bad of ['0', '0.000', '-1', '1e3', '', '.5', '1.', 'abc', '1,5', '1234567890123.5', `0.${'1'.repeat(19)}`]) {
      expect(() => convert(1n, 'usdc', 'eur', bad), bad).toThrow(RangeError)
    }
    // the longest accepted: 12 digits before the point, 18 after
    expect(convert(10n ** 18n, 'dai', 'dai', `123456789012.${'0'.repeat(17)}1`)).toBe(123_456_789_012_000_000_000_000_000_001n)
  })
})

describe('ExchangeRates.current', () => {
  const rates = new ExchangeRates({ maxAgeMs: HOUR, now: () => NOW })

  it('the same fiat on both sides is 1, whatever is stored, in either environment', async () => {
    for (const environment of ['sandbox', 'live'] as const) {
      expect(await rates.current(db, environment, 'usd', 'usd')).toEqual({ from: 'usd', to: 'usd', midmarket: '1', buy: '1', sell: '1', asOf: iso(NOW) })
    }
  })

  it('a rate exactly maxAgeMs old is used; one millisecond older is not (live: RateUnavailable naming the pair and the age)', async () => {
    await saveRates(db, [rate({ asOf: iso(NOW - HOUR) })])
    expect(await rates.current(db, 'live', 'usd', 'eur')).toEqual({ from: 'usd', to: 'eur', midmarket: '0.9', buy: '0.89', sell: '0.91', asOf: iso(NOW - HOUR) })
    const later = new ExchangeRates({ maxAgeMs: HOUR, now: () => NOW + 1 })
    const error = await later.current(db, 'live', 'usd', 'eur').catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RateUnavailable)
    expect((error as Error).message).toBe(`No live usd to eur exchange rate is at most 3600 s old: the newest is from ${iso(NOW - HOUR)}`)
  })

  it('live without any rate of the pair: RateUnavailable saying none was loaded', async () => {
    await saveRates(db, [rate({ from: 'eur', to: 'usd', midmarket: '1.1', buy: '1.09', sell: '1.11' })])
    await expect(rates.current(db, 'live', 'usd', 'eur')).rejects.toThrow('No live usd to eur exchange rate is at most 3600 s old: none has been loaded')
    // one direction loaded is not the other: no rate is derived by inverting
    await expect(rates.current(db, 'live', 'eur', 'usd')).resolves.toMatchObject({ midmarket: '1.1' })
  })

  it('the newest time wins, whatever the order of loading', async () => {
    await saveRates(db, [rate({ asOf: iso(NOW - 10), midmarket: '0.95', buy: '0.94', sell: '0.96' })])
    await saveRates(db, [rate({ asOf: iso(NOW - 20), midmarket: '0.8', buy: '0.79', sell: '0.81' })])
    expect((await rates.current(db, 'live', 'usd', 'eur')).midmarket).toBe('0.95')
  })

  it('sandbox: a fresh loaded rate comes first; without one (none or stale) the fixed default, timestamped now', async () => {
    const defaultRate = { from: 'usd', to: 'eur', midmarket: '0.85000', buy: '0.84500', sell: '0.85500', asOf: iso(NOW) }
    expect(await rates.current(db, 'sandbox', 'usd', 'eur')).toEqual(defaultRate)
    await saveRates(db, [rate({ environment: 'sandbox', asOf: iso(NOW - HOUR - 1) })])
    expect(await rates.current(db, 'sandbox', 'usd', 'eur')).toEqual(defaultRate)
    await saveRates(db, [rate({ environment: 'sandbox', asOf: iso(NOW - HOUR) })])
    expect(await rates.current(db, 'sandbox', 'usd', 'eur')).toMatchObject({ midmarket: '0.9', asOf: iso(NOW - HOUR) })
  })

  it('environments never mix: a live rate is not the sandbox\'s, a sandbox rate is not live\'s', async () => {
    await saveRates(db, [rate({ environment: 'live', midmarket: '0.7', buy: '0.69', sell: '0.71' })])
    expect((await rates.current(db, 'sandbox', 'usd', 'eur')).midmarket).toBe('0.85000')
    await db.deleteFrom('exchange_rates').execute()
    await saveRates(db, [rate({ environment: 'sandbox' })])
    await expect(rates.current(db, 'live', 'usd', 'eur')).rejects.toBeInstanceOf(RateUnavailable)
  })

  it('the sandbox defaults cover every pair, each with buy < midmarket < sell', () => {
    const pairs = SANDBOX_DEFAULT_RATES.map((defaultRate) => `${defaultRate.from}-${defaultRate.to}`).sort()
    expect(pairs).toEqual(['eur-mxn', 'eur-usd', 'mxn-eur', 'mxn-usd', 'usd-eur', 'usd-mxn'])
    for (const defaultRate of SANDBOX_DEFAULT_RATES) {
      // loading them is the check: the loader refuses a rate that is not buy < midmarket < sell
      const document = JSON.stringify([{ environment: 'sandbox', from: defaultRate.from, to: defaultRate.to, midmarket_rate: defaultRate.midmarket, buy_rate: defaultRate.buy, sell_rate: defaultRate.sell, timestamp: iso(NOW) }])
      expect(parseRatesDocument(document, { now: NOW })).toHaveLength(1)
    }
  })
})

describe('parseRatesDocument: every rule at its boundary', () => {
  const good = { environment: 'live', from: 'usd', to: 'eur', midmarket_rate: '0.85000', buy_rate: '0.84500', sell_rate: '0.85500', timestamp: '2026-06-01T11:00:00Z' }
  const parse = (items: unknown, environment?: 'sandbox' | 'live') => parseRatesDocument(typeof items === 'string' ? items : JSON.stringify(items), { now: NOW, ...(environment === undefined ? {} : { environment }) })
  const refused = (items: unknown, message: string, environment?: 'sandbox' | 'live') => {
    expect(() => parse(items, environment)).toThrow(RatesDocumentError)
    expect(() => parse(items, environment)).toThrow(message)
  }

  it('reads a good document, timestamps normalised to UTC with milliseconds, rate texts kept as written', () => {
    expect(parse([good, { ...good, from: 'eur', to: 'usd', midmarket_rate: '1.17647', buy_rate: '1.17', sell_rate: '1.183', timestamp: '2026-06-01T13:30:00.5+02:00' }])).toEqual([
      { environment: 'live', from: 'usd', to: 'eur', midmarket: '0.85000', buy: '0.84500', sell: '0.85500', asOf: '2026-06-01T11:00:00.000Z' },
      { environment: 'live', from: 'eur', to: 'usd', midmarket: '1.17647', buy: '1.17', sell: '1.183', asOf: '2026-06-01T11:30:00.500Z' },
    ])
  })

  it('the document: JSON, an array, 1 to MAX_RATES_PER_DOCUMENT rates', () => {
    refused('{', 'not JSON')
    refused({ rates: [good] }, 'the document must be a JSON array of rates')
    refused([], 'the document holds no rates')
    expect(parse(Array.from({ length: MAX_RATES_PER_DOCUMENT }, (_, i) => ({ ...good, timestamp: iso(NOW - i * 1000) })))).toHaveLength(MAX_RATES_PER_DOCUMENT)
    refused(Array.from({ length: MAX_RATES_PER_DOCUMENT + 1 }, () => good), `the document holds ${MAX_RATES_PER_DOCUMENT + 1} rates; at most ${MAX_RATES_PER_DOCUMENT} at once`)
  })

  it('each rate: an object of the known fields, each required one present and a string', () => {
    refused([good, 5], 'rate 2: must be an object')
    refused([{ ...good, loaded_at: 'x' }], 'rate 1: unknown field "loaded_at"')
    for (const field of ['from', 'to', 'midmarket_rate', 'buy_rate', 'sell_rate', 'timestamp']) {
      const without: Record<string, string> = { ...good }
      delete without[field]
      refused([without], `rate 1: ${field} is required`)
    }
    refused([{ ...good, midmarket_rate: 0.85 }], 'rate 1: midmarket_rate must be a string (a rate is a decimal string like "0.85", so no float rounds it)')
  })

  it('environment: sandbox or live, from the rate or --environment, never contradicting it', () => {
    const { environment: _, ...anonymous } = good
    refused([anonymous], 'rate 1: environment is required (sandbox or live)')
    expect(parse([anonymous], 'sandbox')[0]?.environment).toBe('sandbox')
    expect(parse([good], 'live')[0]?.environment).toBe('live')
    refused([good], 'rate 1: environment live contradicts --environment sandbox', 'sandbox')
    refused([{ ...good, environment: 'production' }], 'rate 1: environment must be sandbox or live (got "production")')
  })

  it('the pair: usd, eur or mxn on each side, two different ones', () => {
    for (const [from, to] of [['usd', 'mxn'], ['mxn', 'eur'], ['eur', 'usd']]) expect(parse([{ ...good, from, to }])).toHaveLength(1)
    refused([{ ...good, from: 'usdc' }], 'rate 1: from must be one of usd, eur, mxn (got "usdc")')
    refused([{ ...good, to: 'USD' }], 'rate 1: to must be one of usd, eur, mxn (got "USD")')
    refused([{ ...good, to: 'usd' }], 'rate 1: from and to are both usd; a rate is between two different currencies')
  })

  it('rates: positive decimals, at most 12 digits before the point and 18 after', () => {
    const widest = `999999999999.${'9'.repeat(18)}`
    expect(parse([{ ...good, buy_rate: '0.000000000000000001', midmarket_rate: '1', sell_rate: widest }])).toHaveLength(1)
    for (const bad of ['0', '0.0', '-0.85', '+0.85', '1e-1', '.85', '0.', '00.85', ' 0.85', '0,85', `1000000000000`, `0.${'0'.repeat(18)}1`]) {
      refused([{ ...good, buy_rate: bad }], `rate 1: buy_rate must be a positive decimal string`)
    }
  })

  it('buy < midmarket < sell, compared exactly (equal on either side is refused)', () => {
    expect(parse([{ ...good, buy_rate: '0.849999999999999999', sell_rate: '0.850000000000000001' }])).toHaveLength(1)
    refused([{ ...good, buy_rate: '0.85' }], 'rate 1: buy_rate < midmarket_rate < sell_rate must hold (got 0.85, 0.85000, 0.85500)')
    refused([{ ...good, sell_rate: '0.850' }], 'buy_rate < midmarket_rate < sell_rate must hold')
    refused([{ ...good, buy_rate: '0.86' }], 'buy_rate < midmarket_rate < sell_rate must hold')
    refused([{ ...good, sell_rate: '0.84' }], 'buy_rate < midmarket_rate < sell_rate must hold')
  })

  it('timestamp: a real ISO 8601 instant with Z or an offset, not after now', () => {
    expect(parse([{ ...good, timestamp: iso(NOW) }])[0]?.asOf).toBe(iso(NOW))
    refused([{ ...good, timestamp: iso(NOW + 1) }], `rate 1: timestamp ${iso(NOW + 1)} is in the future (now is ${iso(NOW)})`)
    expect(parse([{ ...good, timestamp: '2026-06-01T14:00:00+02:00' }])[0]?.asOf).toBe(iso(NOW))
    refused([{ ...good, timestamp: '2026-06-01T14:00:00.001+02:00' }], 'is in the future')
    expect(parse([{ ...good, timestamp: '2024-02-29T00:00:00Z' }])).toHaveLength(1)
    for (const bad of ['2026-06-01', '2026-06-01T11:00:00', '2025-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z', '2026-06-01T24:00:00Z', '2026-06-01T11:60:00Z', '2026-06-01T11:00:60Z', '2026-06-01 11:00:00Z', '1717236000', 'yesterday']) {
      refused([{ ...good, timestamp: bad }], 'rate 1: timestamp must be an ISO 8601 date and time with Z or an offset')
    }
  })

  it('two rates of one environment, pair and time: refused when they differ, kept when they are the same rate', () => {
    expect(parse([good, { ...good, midmarket_rate: '0.85' }])).toHaveLength(2)
    refused([good, { ...good, timestamp: '2026-06-01T13:00:00+02:00', sell_rate: '0.856' }], 'rate 2: another rate of the document has the same environment, pair and timestamp')
    expect(parse([good, { ...good, environment: 'sandbox', sell_rate: '0.856' }])).toHaveLength(2)
  })
})

describe('saveRates and listRates', () => {
  it('stores every rate in one go; loading the same rates again adds nothing', async () => {
    const first = [rate(), rate({ from: 'eur', to: 'usd', midmarket: '1.1', buy: '1.09', sell: '1.11' }), rate({ environment: 'sandbox' })]
    expect(await saveRates(db, first)).toEqual({ added: 3, unchanged: 0 })
    expect(await saveRates(db, [...first, rate({ asOf: iso(NOW) })])).toEqual({ added: 1, unchanged: 3 })
    expect(await count()).toBe(4)
    // "0.90" is the rate "0.9": unchanged, and the stored text stays
    expect(await saveRates(db, [rate({ midmarket: '0.90' })])).toEqual({ added: 0, unchanged: 1 })
  })

  it('a rate that differs from a stored one of the same time refuses the whole load: nothing changes', async () => {
    await saveRates(db, [rate()])
    const attempt = saveRates(db, [rate({ asOf: iso(NOW) }), rate({ sell: '0.92' })])
    await expect(attempt).rejects.toThrow(RatesDocumentError)
    await expect(saveRates(db, [rate({ sell: '0.92' })])).rejects.toThrow(/rate 1: the live usd to eur rate of .* was loaded at .* with other values/)
    expect(await count()).toBe(1)
  })

  it('lists newest first, one environment or both, up to the limit', async () => {
    await saveRates(db, [rate({ asOf: iso(NOW - 3000) }), rate({ environment: 'sandbox', asOf: iso(NOW - 2000) }), rate({ asOf: iso(NOW - 1000) })])
    const all = await listRates(db, { limit: 10 })
    expect(all.map((stored) => [stored.environment, stored.asOf])).toEqual([
      ['live', iso(NOW - 1000)],
      ['sandbox', iso(NOW - 2000)],
      ['live', iso(NOW - 3000)],
    ])
    expect(all[0]).toEqual({ ...rate({ asOf: iso(NOW - 1000) }), loadedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/) })
    expect((await listRates(db, { environment: 'live', limit: 1 })).map((stored) => stored.asOf)).toEqual([iso(NOW - 1000)])
  })
})

describe('RatesFile: EXCHANGE_RATES_FILE', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'devplatform-rates-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const document = (midmarket: string, timestamp = iso(Date.now() - 1000)) =>
    JSON.stringify([{ environment: 'live', from: 'usd', to: 'eur', midmarket_rate: midmarket, buy_rate: '0.1', sell_rate: '9', timestamp }])
  const logs: { level: string; message: string }[] = []
  const log = {
    info: (_object: unknown, message?: string) => void logs.push({ level: 'info', message: message ?? '' }),
    error: (_object: unknown, message?: string) => void logs.push({ level: 'error', message: message ?? '' }),
  }
  const live = new ExchangeRates({ maxAgeMs: HOUR })
  const until = async (condition: () => Promise<boolean>) => {
    const deadline = Date.now() + 5_000
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('condition not met within 5 s')
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  it('a file that is missing or holds a bad rate stops start: nothing loaded, the variable and the problem named', async () => {
    await expect(new RatesFile(join(dir, 'missing.json'), db, log).start()).rejects.toThrow(/^EXCHANGE_RATES_FILE: cannot read .*missing\.json: ENOENT/)
    const bad = join(dir, 'bad.json')
    writeFileSync(bad, JSON.stringify([{ environment: 'live', from: 'usd', to: 'eur', midmarket_rate: '0.9', buy_rate: '0.95', sell_rate: '1', timestamp: iso(Date.now()) }]))
    const error = await new RatesFile(bad, db, log).start().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RatesFileError)
    expect((error as Error).message).toBe(`EXCHANGE_RATES_FILE: ${bad}: rate 1: buy_rate < midmarket_rate < sell_rate must hold (got 0.95, 0.9, 1)`)
    await expect(new RatesFile(dir, db, log).start()).rejects.toThrow(`EXCHANGE_RATES_FILE: ${dir} is not a file`)
    expect(await count()).toBe(0)
  })

  it('loads at start, again when the file changes; a bad version is logged once and the rates loaded before stay', async () => {
    const path = join(dir, 'rates.json')
    writeFileSync(path, document('0.9'))
    const file = new RatesFile(path, db, log, { checkMs: 20 })
    await file.start()
    try {
      expect((await live.current(db, 'live', 'usd', 'eur')).midmarket).toBe('0.9')
      writeFileSync(path, document('0.8', iso(Date.now())))
      await until(async () => (await live.current(db, 'live', 'usd', 'eur')).midmarket === '0.8')
      logs.length = 0
      writeFileSync(path, '[{"environment": "live"')
      await until(async () => logs.some((line) => line.level === 'error'))
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(logs.filter((line) => line.level === 'error')).toEqual([{ level: 'error', message: expect.stringMatching(/^EXCHANGE_RATES_FILE: .*rates\.json: not JSON: .*; the exchange rates loaded before stay$/) }])
      expect((await live.current(db, 'live', 'usd', 'eur')).midmarket).toBe('0.8')
      expect(await count()).toBe(2)
    } finally {
      await file.stop()
    }
  })
})
