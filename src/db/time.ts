import { randomBytes } from 'node:crypto'

/** ISO 8601 UTC with milliseconds: the format of every stored and returned timestamp. */
export function nowIso(): string {
  return new Date().toISOString()
}

let lastMs = 0
let sequence = 0

/**
 * Random bytes drawn 4 KB at a time: a getrandom call per id was 3 % of a write's CPU (bench:api
 * profile of POST liquidation address). Each id takes fresh bytes; none is handed out twice.
 */
const POOL_BYTES = 4096
let pool = Buffer.alloc(0)
let poolAt = POOL_BYTES
function randomFromPool(size: number): Buffer {
  if (poolAt + size > pool.length) {
    pool = randomBytes(POOL_BYTES)
    poolAt = 0
  }
  const bytes = Buffer.from(pool.subarray(poolAt, poolAt + size))
  poolAt += size
  return bytes
}

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
    sequence = randomFromPool(2).readUInt16BE() & 0x7ff // random start, headroom to count up
  }
  lastMs = ms
  const bytes = randomFromPool(16)
  bytes.writeUIntBE(ms, 0, 6)
  bytes[6] = 0x70 | (sequence >> 8)
  bytes[7] = sequence & 0xff
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f)
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
