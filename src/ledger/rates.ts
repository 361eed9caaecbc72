import { sql } from 'kysely'
import { backendOf, type Db, writeTransaction } from '../db/database.js'
import { isoOf, newId, nowIso } from '../db/time.js'
import { CURRENCY_DECIMALS, type Currency } from './amount.js'
import type { LedgerEnvironment } from './ledger.js'

/**
 * Exchange rates: where they come from, how old one may be, and the one conversion rule.
 * Rates are exact decimal texts, compared and multiplied as integers; never a binary float.
 * docs/exchange-rates.md is the operator's and the API user's account of all of it.
 */

/** The fiat currencies a rate is quoted between; each currency the platform moves stands for one. */
export const RATE_CURRENCIES = ['usd', 'eur', 'mxn'] as const
export type RateCurrency = (typeof RATE_CURRENCIES)[number]

export function isRateCurrency(value: string): value is RateCurrency {
  return (RATE_CURRENCIES as readonly string[]).includes(value)
}

const FIAT_OF: Readonly<Record<Currency, RateCurrency>> = { usdc: 'usd', usdt: 'usd', pyusd: 'usd', dai: 'usd', usd: 'usd', eurc: 'eur', eur: 'eur', mxn: 'mxn' }

/** The fiat a currency stands for: a stablecoin and its fiat convert 1:1 (usdc, usdt, pyusd, dai → usd; eurc → eur). */
export function rateCurrencyOf(currency: Currency): RateCurrency {
  return FIAT_OF[currency]
}

/** A rate from one fiat to another: decimal texts, buy < midmarket < sell, and when it was true. */
export interface ExchangeRate {
  from: RateCurrency
  to: RateCurrency
  midmarket: string
  buy: string
  sell: string
  /** ISO 8601: when the rate was true */
  asOf: string
}

/** A rate as an operator loads it: of one environment. */
export interface LoadedRate extends ExchangeRate {
  environment: LedgerEnvironment
}

/** A loaded rate as stored, with when it was loaded. */
export interface StoredRate extends LoadedRate {
  loadedAt: string
}

/** A positive decimal: at most 12 digits before the point and 18 after, no sign, no exponent. */
const RATE_TEXT = /^(0|[1-9][0-9]{0,11})(?:\.([0-9]{1,18}))?$/

/** `digits` / 10^`scale`. */
interface Decimal {
  digits: bigint
  scale: number
}

/** The positive decimal `text` stands for, or undefined when it is not one. */
function positiveDecimal(text: string): Decimal | undefined {
  const match = RATE_TEXT.exec(text)
  if (match === null) return undefined
  const fraction = match[2] ?? ''
  const digits = BigInt((match[1] ?? '0') + fraction)
  return digits > 0n ? { digits, scale: fraction.length } : undefined
}

function compareDecimals(a: Decimal, b: Decimal): number {
  const scale = Math.max(a.scale, b.scale)
  const left = a.digits * 10n ** BigInt(scale - a.scale)
  const right = b.digits * 10n ** BigInt(scale - b.scale)
  return left < right ? -1 : left > right ? 1 : 0
}

/**
 * `units` of `from`'s smallest unit converted at `rate` (units of `to` per unit of `from`, a
 * positive decimal text) into `to`'s smallest unit, rounded down: the one rounding rule of a
 * conversion. Exact for any size (bigint), so 10^30 DAI units lose nothing to a float.
 */
export function convert(units: bigint, from: Currency, to: Currency, rate: string): bigint {
  if (units < 0n) throw new RangeError(`convert takes a non-negative amount (got ${units})`)
  const decimal = positiveDecimal(rate)
  if (decimal === undefined) throw new RangeError(`"${rate}" is not a positive decimal rate`)
  const numerator = units * decimal.digits * 10n ** BigInt(CURRENCY_DECIMALS[to])
  return numerator / 10n ** BigInt(CURRENCY_DECIMALS[from] + decimal.scale)
}

/**
 * The sandbox's rates when no fresh one was loaded: fixed, so sandbox conversions can be
 * worked out by hand (usd → eur is the published client's example).
 */
export const SANDBOX_DEFAULT_RATES: readonly Omit<ExchangeRate, 'asOf'>[] = [
  { from: 'usd', to: 'eur', midmarket: '0.85000', buy: '0.84500', sell: '0.85500' },
  { from: 'eur', to: 'usd', midmarket: '1.17647', buy: '1.17000', sell: '1.18300' },
  { from: 'usd', to: 'mxn', midmarket: '18.50000', buy: '18.40000', sell: '18.60000' },
  { from: 'mxn', to: 'usd', midmarket: '0.05405', buy: '0.05375', sell: '0.05435' },
  { from: 'eur', to: 'mxn', midmarket: '21.76471', buy: '21.65000', sell: '21.88000' },
  { from: 'mxn', to: 'eur', midmarket: '0.04595', buy: '0.04570', sell: '0.04620' },
]

/** An age for messages: whole seconds when it is some, else milliseconds. */
function describeAge(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
}

/** How long a caller is told to wait when no rate is fresh (an operator has to load one): the API's Retry-After. */
export const RATE_RETRY_AFTER_SECONDS = 60

/** No rate of the pair is fresh enough: a conversion waits or fails, it never guesses. */
export class RateUnavailable extends Error {
  constructor(
    readonly environment: LedgerEnvironment,
    readonly from: RateCurrency,
    readonly to: RateCurrency,
    readonly maxAgeMs: number,
    /** when the newest stored rate of the pair was true; undefined when none was loaded */
    readonly newestAsOf: string | undefined,
  ) {
    super(
      `No ${environment} ${from} to ${to} exchange rate is at most ${describeAge(maxAgeMs)} old: ` +
        (newestAsOf === undefined ? 'none has been loaded' : `the newest is from ${newestAsOf}`),
    )
    this.name = 'RateUnavailable'
  }
}

/** The rates conversions use: the newest loaded one no older than `maxAgeMs`, or the sandbox's default. */
export class ExchangeRates {
  readonly maxAgeMs: number
  private readonly now: () => number

  constructor(options: { maxAgeMs: number; now?: () => number }) {
    this.maxAgeMs = options.maxAgeMs
    this.now = options.now ?? Date.now
  }

  /**
   * The newest rate of the environment no older than maxAgeMs (a rate exactly that old still
   * counts). In the sandbox, without one, the fixed default, timestamped now; in live, none is
   * RateUnavailable. The same fiat on both sides is 1, whatever is stored.
   */
  async current(db: Db, environment: LedgerEnvironment, from: RateCurrency, to: RateCurrency): Promise<ExchangeRate> {
    const now = this.now()
    if (from === to) return { from, to, midmarket: '1', buy: '1', sell: '1', asOf: isoOf(now) }
    const newest = await db
      .selectFrom('exchange_rates')
      .select(['midmarket_rate', 'buy_rate', 'sell_rate', 'as_of'])
      .where('environment', '=', environment)
      .where('from_currency', '=', from)
      .where('to_currency', '=', to)
      .orderBy('as_of', 'desc')
      .limit(1)
      .executeTakeFirst()
    if (newest !== undefined && now - Date.parse(newest.as_of) <= this.maxAgeMs) {
      return { from, to, midmarket: newest.midmarket_rate, buy: newest.buy_rate, sell: newest.sell_rate, asOf: newest.as_of }
    }
    const fallback = environment === 'sandbox' ? SANDBOX_DEFAULT_RATES.find((rate) => rate.from === from && rate.to === to) : undefined
    if (fallback !== undefined) return { ...fallback, asOf: isoOf(now) }
    throw new RateUnavailable(environment, from, to, this.maxAgeMs, newest?.as_of)
  }
}

/** Why a document of rates is refused; nothing of it was loaded. */
export class RatesDocumentError extends Error {}

/** The most rates one document may hold. */
export const MAX_RATES_PER_DOCUMENT = 10_000

const ENVIRONMENTS: readonly LedgerEnvironment[] = ['sandbox', 'live']
const RATE_FIELDS = ['environment', 'from', 'to', 'midmarket_rate', 'buy_rate', 'sell_rate', 'timestamp'] as const
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/

/** The instant an RFC 3339 timestamp names (a real calendar day, hours 0-23), or undefined. */
function instantOf(text: string): number | undefined {
  const match = TIMESTAMP.exec(text)
  if (match === null) return undefined
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] = match.slice(1).map((part) => Number(part ?? '0'))
  // Date.parse takes 2026-02-30 as 2026-03-02 and 24:00 as the next day: refused here instead.
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined
  const instant = Date.parse(text)
  return Number.isNaN(instant) ? undefined : instant
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The rates of a JSON document: an array of `{environment, from, to, midmarket_rate, buy_rate,
 * sell_rate, timestamp}`, rates as decimal strings. `environment` may be left out when
 * `options.environment` is given (the CLI's --environment), and may not contradict it. Each rate
 * is checked: a known pair of two different currencies, positive decimals with buy < midmarket <
 * sell, a timestamp not after `options.now`, no two different rates of one pair at one time.
 * The first problem is thrown, naming the rate (1 is the first) and the field.
 */
export function parseRatesDocument(text: string, options: { now: number; environment?: LedgerEnvironment }): LoadedRate[] {
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch (error) {
    throw new RatesDocumentError(`not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (!Array.isArray(document)) throw new RatesDocumentError('the document must be a JSON array of rates')
  if (document.length === 0) throw new RatesDocumentError('the document holds no rates')
  if (document.length > MAX_RATES_PER_DOCUMENT) throw new RatesDocumentError(`the document holds ${document.length} rates; at most ${MAX_RATES_PER_DOCUMENT} at once`)
  const rates = document.map((item: unknown, index) => parseRate(item, `rate ${index + 1}`, options))
  const seen = new Map<string, LoadedRate>()
  rates.forEach((rate, index) => {
    const key = `${rate.environment} ${rate.from} ${rate.to} ${rate.asOf}`
    const earlier = seen.get(key)
    if (earlier !== undefined && !sameRate(earlier, rate)) {
      throw new RatesDocumentError(`rate ${index + 1}: another rate of the document has the same environment, pair and timestamp (${key}) with different values`)
    }
    seen.set(key, rate)
  })
  return rates
}

function parseRate(item: unknown, name: string, options: { now: number; environment?: LedgerEnvironment }): LoadedRate {
  if (!isPlainObject(item)) throw new RatesDocumentError(`${name}: must be an object {environment, from, to, midmarket_rate, buy_rate, sell_rate, timestamp}`)
  const unknown = Object.keys(item).find((field) => !(RATE_FIELDS as readonly string[]).includes(field))
  if (unknown !== undefined) throw new RatesDocumentError(`${name}: unknown field "${unknown}" (the fields are ${RATE_FIELDS.join(', ')})`)
  const text = (field: (typeof RATE_FIELDS)[number]): string | undefined => {
    const value = item[field]
    if (value === undefined) return undefined
    if (typeof value !== 'string') throw new RatesDocumentError(`${name}: ${field} must be a string${typeof value === 'number' ? ` (a rate is a decimal string like "0.85", so no float rounds it)` : ''}`)
    return value
  }
  const required = (field: (typeof RATE_FIELDS)[number]): string => {
    const value = text(field)
    if (value === undefined) throw new RatesDocumentError(`${name}: ${field} is required`)
    return value
  }

  const named = text('environment')
  if (named === undefined && options.environment === undefined) throw new RatesDocumentError(`${name}: environment is required (sandbox or live)`)
  const environment = ENVIRONMENTS.find((candidate) => candidate === (named ?? options.environment))
  if (environment === undefined) throw new RatesDocumentError(`${name}: environment must be sandbox or live (got ${JSON.stringify(named)})`)
  if (options.environment !== undefined && environment !== options.environment) {
    throw new RatesDocumentError(`${name}: environment ${environment} contradicts --environment ${options.environment}`)
  }

  const currency = (field: 'from' | 'to'): RateCurrency => {
    const value = required(field)
    if (!isRateCurrency(value)) throw new RatesDocumentError(`${name}: ${field} must be one of ${RATE_CURRENCIES.join(', ')} (got ${JSON.stringify(value)})`)
    return value
  }
  const from = currency('from')
  const to = currency('to')
  if (from === to) throw new RatesDocumentError(`${name}: from and to are both ${from}; a rate is between two different currencies`)

  const decimal = (field: 'midmarket_rate' | 'buy_rate' | 'sell_rate'): [string, Decimal] => {
    const value = required(field)
    const parsed = positiveDecimal(value)
    if (parsed === undefined) throw new RatesDocumentError(`${name}: ${field} must be a positive decimal string (at most 12 digits before the point and 18 after; got ${JSON.stringify(value)})`)
    return [value, parsed]
  }
  const [midmarket, mid] = decimal('midmarket_rate')
  const [buy, buyDecimal] = decimal('buy_rate')
  const [sell, sellDecimal] = decimal('sell_rate')
  if (compareDecimals(buyDecimal, mid) >= 0 || compareDecimals(mid, sellDecimal) >= 0) {
    throw new RatesDocumentError(`${name}: buy_rate < midmarket_rate < sell_rate must hold (got ${buy}, ${midmarket}, ${sell})`)
  }

  const timestamp = required('timestamp')
  const instant = instantOf(timestamp)
  if (instant === undefined) throw new RatesDocumentError(`${name}: timestamp must be an ISO 8601 date and time with Z or an offset, e.g. 2026-01-15T10:30:00Z (got ${JSON.stringify(timestamp)})`)
  if (instant > options.now) throw new RatesDocumentError(`${name}: timestamp ${timestamp} is in the future (now is ${isoOf(options.now)})`)
  return { environment, from, to, midmarket, buy, sell, asOf: isoOf(instant) }
}

/** The same three rates, compared as numbers ("0.85" is "0.850"). */
function sameRate(a: Pick<ExchangeRate, 'midmarket' | 'buy' | 'sell'>, b: Pick<ExchangeRate, 'midmarket' | 'buy' | 'sell'>): boolean {
  const equal = (x: string, y: string) => {
    const left = positiveDecimal(x)
    const right = positiveDecimal(y)
    return left !== undefined && right !== undefined && compareDecimals(left, right) === 0
  }
  return equal(a.midmarket, b.midmarket) && equal(a.buy, b.buy) && equal(a.sell, b.sell)
}

/**
 * Stores `rates` in one transaction: all or none. A rate already stored (the same environment,
 * pair, time and values) is left as it is, so loading a document again changes nothing; one
 * that differs from a stored rate of the same environment, pair and time refuses the whole load
 * (a time holds one rate: a correction is a rate with a later time).
 */
export async function saveRates(db: Db, rates: readonly LoadedRate[]): Promise<{ added: number; unchanged: number }> {
  return writeTransaction(db, async (tx) => {
    // Instances loading the same file at once add it once between them.
    if (backendOf(tx) === 'postgres') await sql`select pg_advisory_xact_lock(hashtext('devplatform: exchange rates'))`.execute(tx)
    const loadedAt = nowIso()
    let added = 0
    let unchanged = 0
    for (const [index, rate] of rates.entries()) {
      const stored = await tx
        .selectFrom('exchange_rates')
        .select(['midmarket_rate', 'buy_rate', 'sell_rate', 'loaded_at'])
        .where('environment', '=', rate.environment)
        .where('from_currency', '=', rate.from)
        .where('to_currency', '=', rate.to)
        .where('as_of', '=', rate.asOf)
        .executeTakeFirst()
      if (stored !== undefined) {
        if (!sameRate({ midmarket: stored.midmarket_rate, buy: stored.buy_rate, sell: stored.sell_rate }, rate)) {
          throw new RatesDocumentError(
            `rate ${index + 1}: the ${rate.environment} ${rate.from} to ${rate.to} rate of ${rate.asOf} was loaded at ${stored.loaded_at} with other values ` +
              `(${stored.buy_rate}, ${stored.midmarket_rate}, ${stored.sell_rate}); a time holds one rate, so load a correction with a later timestamp`,
          )
        }
        unchanged++
        continue
      }
      await tx
        .insertInto('exchange_rates')
        .values({
          id: newId(),
          environment: rate.environment,
          from_currency: rate.from,
          to_currency: rate.to,
          midmarket_rate: rate.midmarket,
          buy_rate: rate.buy,
          sell_rate: rate.sell,
          as_of: rate.asOf,
          loaded_at: loadedAt,
        })
        .execute()
      added++
    }
    return { added, unchanged }
  })
}

/** The stored (loaded) rates, newest first; the sandbox's defaults are not stored. */
export async function listRates(db: Db, options: { environment?: LedgerEnvironment; limit: number }): Promise<StoredRate[]> {
  let query = db.selectFrom('exchange_rates').selectAll()
  if (options.environment !== undefined) query = query.where('environment', '=', options.environment)
  const rows = await query.orderBy('as_of', 'desc').orderBy('id', 'desc').limit(options.limit).execute()
  return rows.map((row) => ({
    environment: row.environment as LedgerEnvironment,
    from: row.from_currency as RateCurrency,
    to: row.to_currency as RateCurrency,
    midmarket: row.midmarket_rate,
    buy: row.buy_rate,
    sell: row.sell_rate,
    asOf: row.as_of,
    loadedAt: row.loaded_at,
  }))
}
