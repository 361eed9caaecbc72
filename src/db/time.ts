import { randomBytes } from 'node:crypto'

/** ISO 8601 UTC with milliseconds: the format of every stored and returned timestamp. */
export function nowIso(): string {
  return new Date().toISOString()
}

let lastMs = 0
let sequence = 0

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then a 12-bit sequence, then 62 random
 * bits. Ids made by this process are strictly increasing, even within one millisecond, so
 * "newest first" is a total order (created_at ties are broken by id) and index inserts append.
 */
export function newId(): string {
  let ms = Date.now()
  if (ms <= lastMs) {
    ms = lastMs
    sequence++
    if (sequence > 0xfff) {
      // 4096 ids in one millisecond: borrow the next millisecond rather than repeat an order.
      ms = lastMs + 1
      sequence = 0
    }
  } else {
    sequence = randomBytes(2).readUInt16BE() & 0x7ff // random start, headroom to count up
  }
  lastMs = ms
  const bytes = randomBytes(16)
  bytes.writeUIntBE(ms, 0, 6)
  bytes[6] = 0x70 | (sequence >> 8)
  bytes[7] = sequence & 0xff
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f)
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
