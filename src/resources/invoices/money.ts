/**
 * An invoice's arithmetic: every amount is an integer of cents of the invoice's currency (USDC
 * and EURC counted to the cent, as the fiat prices of the products it sells are), exact until the
 * one rounding step: the tax, computed once on the subtotal and rounded half up to the cent.
 */
import { CURRENCY_DECIMALS, MAX_AMOUNT_UNITS } from '../../ledger/amount.js'
import type { ProductCurrency } from '../products/public.js'

export const INVOICE_CURRENCIES = ['usdc', 'eurc'] as const
export type InvoiceCurrency = (typeof INVOICE_CURRENCIES)[number]

/** The one product currency each invoice currency takes, at 1:1 (a stablecoin is worth its fiat). */
export const PRICED_IN: Readonly<Record<InvoiceCurrency, ProductCurrency>> = { usdc: 'USD', eurc: 'EUR' }

/** Decimals of every invoice amount on the wire. */
export const INVOICE_DECIMALS = 2
const CENTS_PER_UNIT = 100n

/** Ledger units (10⁻⁶ of a USDC or EURC) in one cent of an invoice: what a payment or a link amount is counted in. */
export const UNITS_PER_CENT = 10n ** BigInt(CURRENCY_DECIMALS.usdc - INVOICE_DECIMALS)

/** The most one invoice may total, in cents: the most one request may move. */
export const MAX_INVOICE_TOTAL = MAX_AMOUNT_UNITS * CENTS_PER_UNIT

/** Cents as a decimal string with two decimals ("12.50", "0.05"). */
export function formatCents(cents: bigint): string {
  const sign = cents < 0n ? '-' : ''
  const digits = (cents < 0n ? -cents : cents).toString().padStart(INVOICE_DECIMALS + 1, '0')
  return `${sign}${digits.slice(0, -INVOICE_DECIMALS)}.${digits.slice(-INVOICE_DECIMALS)}`
}

/** A percentage as an exact decimal: `digits` × 10^-`decimals` percent. */
export interface ExactPercent {
  digits: bigint
  decimals: number
}

const NUMBER_TEXT = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/

/**
 * The decimal a tax's percentage stands for: the shortest text that reads back as the stored
 * number (7.25 is 7.25, not the binary double nearest it), so the tax is what the caller wrote.
 */
export function exactPercent(value: number): ExactPercent {
  const match = NUMBER_TEXT.exec(String(value))
  if (match === null || value < 0) throw new Error(`not a percentage: ${value}`)
  const fraction = match[2] ?? ''
  const exponent = Number(match[3] ?? '0') - fraction.length
  const digits = BigInt((match[1] ?? '0') + fraction)
  return exponent >= 0 ? { digits: digits * 10n ** BigInt(exponent), decimals: 0 } : { digits, decimals: -exponent }
}

/** The percentage as plain decimal text ("7.25", "0.0000001"), as an invoice keeps it. */
export function percentText(percent: ExactPercent): string {
  if (percent.decimals === 0) return percent.digits.toString()
  const digits = percent.digits.toString().padStart(percent.decimals + 1, '0')
  const text = `${digits.slice(0, -percent.decimals)}.${digits.slice(-percent.decimals)}`
  return text.replace(/0+$/, '').replace(/\.$/, '')
}

/** The percentage kept as text, back as an exact decimal. */
export function parsePercentText(text: string): ExactPercent {
  const [whole = '0', fraction = ''] = text.split('.')
  return { digits: BigInt(whole + fraction), decimals: fraction.length }
}

/**
 * The tax on `subtotal` cents: subtotal × percent / 100, rounded half up to the cent (a half cent
 * or more rounds up, less rounds down). Integers throughout: no float touches the amount.
 */
export function taxOn(subtotal: bigint, percent: ExactPercent): bigint {
  const divisor = 100n * 10n ** BigInt(percent.decimals)
  return (subtotal * percent.digits * 2n + divisor) / (2n * divisor)
}
