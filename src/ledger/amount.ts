/**
 * Money as integers of each currency's smallest unit, inside; decimal strings on the wire. Never a
 * binary float: a JSON number is taken from the request's own text, not through a double.
 */

/** Decimal places of each currency the platform moves. */
export const CURRENCY_DECIMALS = {
  usdc: 6,
  eurc: 6,
  pyusd: 6,
  usdt: 6,
  dai: 18,
  usd: 2,
  eur: 2,
  mxn: 2,
} as const

export type Currency = keyof typeof CURRENCY_DECIMALS

export function isCurrency(value: string): value is Currency {
  return Object.hasOwn(CURRENCY_DECIMALS, value)
}

/** Why a decimal text is not an amount of a currency. */
/** The largest amount one request may move, in whole units of any currency. */
export const MAX_AMOUNT_UNITS = 1_000_000_000n

export class AmountError extends Error {}

const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/

/**
 * The amount `text` (a plain decimal: digits, at most one point, no sign, no exponent) in the
 * currency's smallest unit. More decimals than the currency has is refused, not rounded.
 */
export function parseAmount(text: string, currency: Currency): bigint {
  const match = DECIMAL.exec(text)
  if (match === null) throw new AmountError(`"${text}" is not a decimal amount (digits, and at most one decimal point)`)
  const decimals = CURRENCY_DECIMALS[currency]
  const fraction = match[2] ?? ''
  if (fraction.length > decimals) throw new AmountError(`"${text}" has more than ${decimals} decimals, the most ${currency.toUpperCase()} has`)
  return BigInt((match[1] ?? '0') + fraction.padEnd(decimals, '0'))
}

/** `units` of the currency's smallest unit as a decimal string with all of the currency's decimals ("12.50"). */
export function formatAmount(units: bigint, currency: Currency): string {
  const decimals: number = CURRENCY_DECIMALS[currency]
  const sign = units < 0n ? '-' : ''
  const digits = (units < 0n ? -units : units).toString().padStart(decimals + 1, '0')
  return `${sign}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`
}

const PERCENT = /^(0|[1-9][0-9]?|100)(?:\.([0-9]{1,6}))?$/

/**
 * The fee of `percent` (a decimal text from 0 to 100, at most 6 decimals) on `units`, rounded
 * down to the smallest unit: the one rounding rule. The remainder goes on with the rest, so the
 * fee and the rest add up to `units` exactly.
 */
export function feeOf(units: bigint, percent: string): { fee: bigint; rest: bigint } {
  const match = PERCENT.exec(percent)
  if (match === null || Number(percent) > 100) throw new AmountError(`"${percent}" is not a percentage from 0 to 100 with at most 6 decimals`)
  const fraction = (match[2] ?? '').padEnd(6, '0')
  const millionths = BigInt((match[1] ?? '0') + fraction)
  const fee = (units * millionths) / 100_000_000n
  return { fee, rest: units - fee }
}
