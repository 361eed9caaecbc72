// vitest: sqlite project only — pure functions, no backend.
import { describe, expect, it } from 'vitest'
import { exactPercent, formatCents, parsePercentText, percentText, taxOn } from '../../../src/resources/invoices/money.js'

/** The invoice's arithmetic alone: the HTTP tests (invoices.test.ts) show it through the API. */
describe('invoice money', () => {
  it('a percentage is the decimal its shortest text names, exponent included', () => {
    expect(exactPercent(7.25)).toEqual({ digits: 725n, decimals: 2 })
    expect(exactPercent(100)).toEqual({ digits: 100n, decimals: 0 })
    expect(exactPercent(0)).toEqual({ digits: 0n, decimals: 0 })
    expect(exactPercent(1e-7)).toEqual({ digits: 1n, decimals: 7 })
    expect(exactPercent(1.5e-7)).toEqual({ digits: 15n, decimals: 8 })
    expect(exactPercent(0.1 + 0.2)).toEqual({ digits: 30000000000000004n, decimals: 17 })
  })

  it('kept as plain text and read back the same', () => {
    for (const value of [7.25, 100, 0, 1e-7, 12.5, 0.0001, 99.999999]) {
      const text = percentText(exactPercent(value))
      expect(text).not.toMatch(/e|\.$|\.\d*0$/)
      expect(Number(text)).toBe(value)
      expect(taxOn(1_000_000n, parsePercentText(text))).toBe(taxOn(1_000_000n, exactPercent(value)))
    }
  })

  it('the tax rounds half up to the cent', () => {
    expect(taxOn(10n, { digits: 5n, decimals: 0 })).toBe(1n) // 0.005
    expect(taxOn(9n, { digits: 5n, decimals: 0 })).toBe(0n) // 0.0045
    expect(taxOn(100n, { digits: 4999n, decimals: 4 })).toBe(0n) // 0.004999
    expect(taxOn(100n, { digits: 5n, decimals: 1 })).toBe(1n) // 0.005
    expect(taxOn(0n, { digits: 20n, decimals: 0 })).toBe(0n)
    expect(taxOn(100_000_000_000n, { digits: 100n, decimals: 0 })).toBe(100_000_000_000n)
    expect(taxOn(1n, { digits: 1n, decimals: 7 })).toBe(0n)
  })

  it('cents as two-decimal text', () => {
    expect([0n, 5n, 50n, 100n, 123456n, -5n].map(formatCents)).toEqual(['0.00', '0.05', '0.50', '1.00', '1234.56', '-0.05'])
  })
})
