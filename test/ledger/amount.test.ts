// vitest: sqlite project only — pure functions, no backend.
import { describe, expect, it } from 'vitest'
import { AmountError, CURRENCY_DECIMALS, type Currency, feeOf, formatAmount, parseAmount } from '../../src/ledger/amount.js'

describe('amounts: decimal strings on the wire, integers of the smallest unit inside', () => {
  it('parses each currency to its smallest unit, exactly', () => {
    expect(parseAmount('12.5', 'usd')).toBe(1250n)
    expect(parseAmount('12.50', 'usd')).toBe(1250n)
    expect(parseAmount('0.000001', 'usdc')).toBe(1n)
    expect(parseAmount('1', 'dai')).toBe(1_000_000_000_000_000_000n)
    // Past 2^53 and past 2^63: still exact.
    expect(parseAmount('123456789012.123456789012345678', 'dai')).toBe(123456789012123456789012345678n)
  })

  it('refuses one decimal more than the currency has, and takes exactly as many', () => {
    for (const [currency, decimals] of Object.entries(CURRENCY_DECIMALS) as [Currency, number][]) {
      expect(parseAmount(`1.${'1'.repeat(decimals)}`, currency)).toBe(BigInt(`1${'1'.repeat(decimals)}`))
      expect(() => parseAmount(`1.${'1'.repeat(decimals + 1)}`, currency)).toThrow(AmountError)
    }
    expect(() => parseAmount('0.001', 'usd')).toThrow('"0.001" has more than 2 decimals, the most USD has')
  })

  it('refuses what is not a plain non-negative decimal', () => {
    for (const text of ['', '-1', '+1', '1e3', '1.', '.5', '01', '1,5', ' 1', '0x10', 'NaN', 'Infinity', '1.2.3']) {
      expect(() => parseAmount(text, 'usdc'), text).toThrow(AmountError)
    }
    expect(parseAmount('0', 'usdc')).toBe(0n)
  })

  it('formats with all the currency\'s decimals, and round-trips', () => {
    expect(formatAmount(1250n, 'usd')).toBe('12.50')
    expect(formatAmount(1n, 'usdc')).toBe('0.000001')
    expect(formatAmount(0n, 'eur')).toBe('0.00')
    expect(formatAmount(-5n, 'usd')).toBe('-0.05')
    for (const text of ['0.000000', '1.000001', '999999999999.999999']) expect(formatAmount(parseAmount(text, 'usdc'), 'usdc')).toBe(text)
  })

  it('a fee rounds down to the smallest unit and the rest takes the remainder: nothing created or lost', () => {
    expect(feeOf(1_000_000n, '1')).toEqual({ fee: 10_000n, rest: 990_000n })
    expect(feeOf(999n, '1')).toEqual({ fee: 9n, rest: 990n })
    expect(feeOf(1n, '99.999999')).toEqual({ fee: 0n, rest: 1n })
    expect(feeOf(100n, '100')).toEqual({ fee: 100n, rest: 0n })
    expect(feeOf(100n, '0')).toEqual({ fee: 0n, rest: 100n })
    // A seeded sweep: fee + rest is always the amount, and the fee never exceeds the exact share.
    let seed = 42
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
    for (let i = 0; i < 2000; i++) {
      const units = BigInt(next()) * BigInt(next())
      const percent = `${next() % 100}.${String(next() % 1_000_000).padStart(6, '0')}`
      const { fee, rest } = feeOf(units, percent)
      expect(fee + rest).toBe(units)
      expect(fee >= 0n && fee * 100_000_000n <= units * BigInt(percent.replace('.', ''))).toBe(true)
    }
  })

  it('refuses a percentage outside 0 to 100 or with more than 6 decimals', () => {
    for (const percent of ['-1', '100.000001', '101', '1.1234567', 'abc', '']) expect(() => feeOf(100n, percent), percent).toThrow(AmountError)
  })
})
