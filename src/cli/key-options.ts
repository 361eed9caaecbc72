import { DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS } from '../apps/key-management.js'
import { UsageError } from './usage-error.js'

export { DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS }

/** --grace: whole seconds from 0 (the old secret stops at once) to MAX_GRACE_SECONDS. */
export function graceSecondsOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_GRACE_SECONDS
  if (!/^\d{1,9}$/.test(text) || Number(text) > MAX_GRACE_SECONDS) {
    throw new UsageError(`--grace must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS} (7 days) (got ${text})`)
  }
  return Number(text)
}

/** An ISO 8601 time with its offset: a date, hours and minutes, optional seconds and milliseconds, Z or ±HH:MM. */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(Z|[+-](\d{2}):(\d{2}))$/

/**
 * `keys expire`'s one choice, as the stored expiry: --at TIME (in the future), --in SECONDS from
 * now (0: now), or --never (null).
 */
export function expiryOf(flags: { at?: string | undefined; in?: string | undefined; never?: boolean | undefined }, nowMs: number): string | null {
  const given = [flags.at !== undefined, flags.in !== undefined, flags.never === true].filter(Boolean).length
  if (given !== 1) throw new UsageError('"keys expire" takes exactly one of --at ISO_8601_TIME, --in SECONDS or --never')
  if (flags.never === true) return null
  if (flags.in !== undefined) {
    if (!/^\d{1,9}$/.test(flags.in)) throw new UsageError(`--in must be a whole number of seconds from 0 to 999999999 (got ${flags.in})`)
    return new Date(nowMs + Number(flags.in) * 1000).toISOString()
  }
  const text = flags.at ?? ''
  const at = parseIsoTime(text)
  if (at === undefined) throw new UsageError(`--at must be an ISO 8601 time with its offset, e.g. 2027-01-31T12:00:00Z (got ${text})`)
  if (at <= nowMs) throw new UsageError(`--at must be in the future (got ${text}); to stop the key now use --in 0 or "keys deactivate"`)
  return new Date(at).toISOString()
}

/** Epoch ms of an ISO_TIME text naming a real moment (no 30 February, no 24:00), else undefined. */
function parseIsoTime(text: string): number | undefined {
  const match = ISO_TIME.exec(text)
  if (match === null) return undefined
  const [year, month, day, hours, minutes, seconds] = match.slice(1, 7).map((part) => Number(part ?? '0')) as [number, number, number, number, number, number]
  const offsetHours = Number(match[8] ?? '0')
  const offsetMinutes = Number(match[9] ?? '0')
  const date = new Date(Date.UTC(year, month - 1, day))
  const realDay = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  if (!realDay || hours > 23 || minutes > 59 || seconds > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined
  const ms = Date.parse(text)
  return Number.isNaN(ms) ? undefined : ms
}
