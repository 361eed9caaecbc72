// vitest: sqlite project only — a pure function, no backend.
import { describe, expect, it } from 'vitest'
import { topLevelNumberText } from '../../src/http/json-number.js'

describe('topLevelNumberText: a top-level number as the client wrote it', () => {
  it('gives the literal of the named key, digits a double would lose included', () => {
    expect(topLevelNumberText('{"amount":12345678901234567.5}', 'amount')).toBe('12345678901234567.5')
    expect(topLevelNumberText('{ "currency" : "USD" , "amount" : 1.005 }', 'amount')).toBe('1.005')
    expect(topLevelNumberText('{"amount":1e2}', 'amount')).toBe('1e2')
    expect(topLevelNumberText('{"amount":-3}', 'amount')).toBe('-3')
  })

  it('ignores the key inside nested objects, arrays and strings', () => {
    expect(topLevelNumberText('{"meta":{"amount":1},"amount":2}', 'amount')).toBe('2')
    expect(topLevelNumberText('{"list":[{"amount":1}],"note":"\\"amount\\":5","amount":3}', 'amount')).toBe('3')
    expect(topLevelNumberText('{"meta":{"amount":1}}', 'amount')).toBeUndefined()
  })

  it('is undefined when the value is not a number', () => {
    expect(topLevelNumberText('{"amount":"10.00"}', 'amount')).toBeUndefined()
    expect(topLevelNumberText('{"amount":null}', 'amount')).toBeUndefined()
  })
})
