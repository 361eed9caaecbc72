import { InvalidRequest } from '../errors.js'

/**
 * An instant of a query as the database stores times (ISO 8601 UTC with milliseconds), or 400: the
 * format (date-time) is checked by the schema, the calendar here (2026-02-30 is no day).
 */
export function instantOf(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const [year, month, day, hour, minute, second] = (value.match(/\d+/g) ?? []).map(Number) as [number, number, number, number, number, number]
  const time = new Date(value).getTime()
  const calendar = new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day && hour <= 23 && minute <= 59 && second <= 59
  if (Number.isNaN(time) || !calendar) throw new InvalidRequest(`${name} is not a valid date and time: ${value}`)
  return new Date(time).toISOString()
}
