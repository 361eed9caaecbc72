import type { FastifyRequest } from 'fastify'
import { InvalidRequest } from '../errors.js'
import { AmountError, type Currency, MAX_AMOUNT_UNITS, parseAmount } from '../ledger/amount.js'
import { topLevelNumberText } from './json-number.js'

/**
 * The top-level amount `field` of the request's body in `currency`'s smallest unit, sent as a
 * decimal string or a JSON number (read from the request's own text). More decimals than the
 * currency has, an exponent, a sign, zero, or more than MAX_AMOUNT_UNITS is a 400 naming the field.
 */
export function amountField(request: FastifyRequest, field: string, value: string | number, currency: Currency): bigint {
  const text = typeof value === 'string' ? value : topLevelNumberText(request.jsonText, field)
  if (text === undefined) throw new InvalidRequest(`${field} must be a decimal amount`)
  let units: bigint
  try {
    units = parseAmount(text, currency)
  } catch (error) {
    if (error instanceof AmountError) throw new InvalidRequest(`${field}: ${error.message}`)
    throw error
  }
  if (units <= 0n) throw new InvalidRequest(`${field} must be greater than 0`)
  if (units > parseAmount(MAX_AMOUNT_UNITS.toString(), currency)) throw new InvalidRequest(`${field} must be at most ${MAX_AMOUNT_UNITS}`)
  return units
}
