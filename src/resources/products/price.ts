/**
 * Product prices: exact decimals in the product's currency, integers of its minor unit inside,
 * decimal strings on the wire. The product currencies are fiat ISO codes, not the ledger's
 * (src/ledger/amount.ts), so they have their own table of decimals.
 */

/** Decimal places of each currency a product may be priced in (JPY has no minor unit). */
export const PRODUCT_CURRENCY_DECIMALS = {
  USD: 2,
  EUR: 2,
  GBP: 2,
  CAD: 2,
  AUD: 2,
  JPY: 0,
} as const

export type ProductCurrency = keyof typeof PRODUCT_CURRENCY_DECIMALS

export const PRODUCT_CURRENCIES = Object.keys(PRODUCT_CURRENCY_DECIMALS) as ProductCurrency[]

/** Most digits before the decimal point: 999,999,999.99 USD, ¥999,999,999. */
export const MAX_PRICE_INTEGER_DIGITS = 9

const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/

/** Why a price is refused; the message names the field as the caller sent it. */
export class PriceError extends Error {}

/**
 * The price as text: a decimal string as sent, or a JSON number as the shortest decimal that
 * reads back as the same number (the text a client wrote for 19.99 is "19.99").
 */
export function priceText(value: string | number): string {
  return typeof value === 'number' ? String(value) : value.trim()
}

/**
 * `text` in minor units of `currency`: a plain decimal (digits, at most one point, no sign, no
 * exponent) above zero, with at most the currency's decimals and MAX_PRICE_INTEGER_DIGITS before
 * the point. More decimals than the currency has is refused, never rounded.
 */
export function parsePrice(text: string, currency: ProductCurrency): bigint {
  if (/^-/.test(text)) throw new PriceError('price must be greater than 0')
  const match = DECIMAL.exec(text)
  if (match === null) throw new PriceError(`price must be a decimal number such as 19.99 (got ${JSON.stringify(text.slice(0, 40))})`)
  const whole = match[1] ?? '0'
  const fraction = match[2] ?? ''
  const decimals = PRODUCT_CURRENCY_DECIMALS[currency]
  if (fraction.length > decimals) {
    throw new PriceError(decimals === 0 ? `price must be a whole number in ${currency}, which has no minor unit` : `price has more than ${decimals} decimals, the most ${currency} has`)
  }
  if (whole.length > MAX_PRICE_INTEGER_DIGITS) throw new PriceError(`price must be at most ${maxPrice(currency)} ${currency}`)
  const units = BigInt(whole + fraction.padEnd(decimals, '0'))
  if (units === 0n) throw new PriceError('price must be greater than 0')
  return units
}

/** The largest price of a currency, as text ("999999999.99"). */
export function maxPrice(currency: ProductCurrency): string {
  const decimals = PRODUCT_CURRENCY_DECIMALS[currency]
  return '9'.repeat(MAX_PRICE_INTEGER_DIGITS) + (decimals === 0 ? '' : `.${'9'.repeat(decimals)}`)
}

/** `units` minor units as a decimal string with all of the currency's decimals ("12.50", "1500"). */
export function formatPrice(units: bigint, currency: ProductCurrency): string {
  const decimals = PRODUCT_CURRENCY_DECIMALS[currency]
  if (decimals === 0) return units.toString()
  const digits = units.toString().padStart(decimals + 1, '0')
  return `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`
}

export function isProductCurrency(value: string): value is ProductCurrency {
  return Object.hasOwn(PRODUCT_CURRENCY_DECIMALS, value)
}
