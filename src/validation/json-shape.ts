/**
 * One pass over a JSON body's text before it is parsed: the duplicate keys JSON.parse would
 * silently collapse (the last one wins), and the limits that keep parsing and validating one body
 * short. JSON.parse builds whatever it is given in one synchronous run, however many keys or
 * levels, and the validator then walks it, holding the event loop all the while: the limits
 * refuse such a body from its text, read only as far as the limit.
 */

/** Most keys one object may hold: far more than any of the API's bodies has fields. */
export const MAX_KEYS_PER_OBJECT = 1_000
/** Most object keys and array items the whole body may hold. */
export const MAX_ENTRIES = 10_000
/** Deepest nesting of objects and arrays: far deeper than any of the API's bodies. */
export const MAX_DEPTH = 32
/** Longest path named in a message, in characters. */
const MAX_PATH_LENGTH = 200

export interface JsonShapeProblem {
  /** limit: refuse before parsing; duplicate: refuse once the text has parsed as JSON */
  kind: 'limit' | 'duplicate'
  message: string
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a
const COMMA = 0x2c
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d

// Per nesting level (1 is the top value), reused by every scan: the scan is synchronous, and
// these hold numbers only, so no body outlives its scan.
const isObject = new Uint8Array(MAX_DEPTH + 1)
/** an object's keys so far; an array's commas so far (the index of its current item) */
const counts = new Uint32Array(MAX_DEPTH + 1)
/** where the object's current key starts and ends in the body (its quotes included), to name it */
const keyStarts = new Uint32Array(MAX_DEPTH + 1)
const keyEnds = new Uint32Array(MAX_DEPTH + 1)

/**
 * The first problem of a JSON body's shape, or undefined; `body` is UTF-8 already checked to be
 * valid. A limit is reported as soon as it is passed (depth, keys in one object, entries in all),
 * with no more of the body read; a duplicate key is the first one found, reported at the end if no
 * limit is passed. A body that is not JSON is left to the parser: the scan stops where it cannot
 * follow the text, and reports only what it saw.
 *
 * It reads bytes, not a string: every character JSON's structure uses is ASCII, which never occurs
 * inside a multi-byte UTF-8 sequence, and indexing bytes stays cheap where string indexing is not
 * (a String subclass anywhere in the process, as ioredis defines, makes charCodeAt several times slower).
 */
export function scanJson(body: Buffer): JsonShapeProblem | undefined {
  const length = body.length
  // The keys seen so far in each open object (made at its first key), as keyIdentity gives them.
  const keySets: Array<Set<string> | undefined> = []
  let duplicate: JsonShapeProblem | undefined
  let depth = 0
  let entries = 0
  let i = 0
  while (i < length) {
    const byte = body[i]
    if (byte === QUOTE) {
      const end = stringEnd(body, i)
      if (end === -1) return duplicate
      let next = end
      while (next < length && isSpace(body[next])) next++
      if (depth === 0 || isObject[depth] === 0 || body[next] !== COLON) {
        i = end
        continue
      }
      // A key of the innermost open object.
      const keys = (counts[depth] ?? 0) + 1
      counts[depth] = keys
      if (keys > MAX_KEYS_PER_OBJECT) {
        const at = path(body, depth - 1)
        return limit(`Request body has more than ${MAX_KEYS_PER_OBJECT} keys in one object${at === '' ? '' : `: ${at}`}`)
      }
      if (++entries > MAX_ENTRIES) return tooManyEntries()
      keyStarts[depth] = i
      keyEnds[depth] = end
      if (duplicate === undefined) {
        const key = keyIdentity(body, i, end)
        if (key === undefined) return undefined
        const seen = keySets[depth]
        if (seen === undefined) keySets[depth] = new Set<string>().add(key)
        else if (!seen.has(key)) seen.add(key)
        else duplicate = { kind: 'duplicate', message: `Request body has a duplicate key: ${path(body, depth)}` }
      }
      i = next + 1
      continue
    }
    if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > MAX_DEPTH) return limit(`Request body is nested more than ${MAX_DEPTH} levels deep`)
      isObject[depth] = byte === OPEN_OBJECT ? 1 : 0
      counts[depth] = 0
      keySets[depth] = undefined
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      if (depth === 0) return duplicate
      // An array's last item has no comma after it.
      if (byte === CLOSE_ARRAY && !emptyArrayEndsAt(body, i) && ++entries > MAX_ENTRIES) return tooManyEntries()
      keySets[depth] = undefined
      depth--
    } else if (byte === COMMA && depth > 0 && isObject[depth] === 0) {
      counts[depth] = (counts[depth] ?? 0) + 1
      if (++entries > MAX_ENTRIES) return tooManyEntries()
    }
    i++
  }
  return duplicate
}

function limit(message: string): JsonShapeProblem {
  return { kind: 'limit', message }
}

function tooManyEntries(): JsonShapeProblem {
  return limit(`Request body has more than ${MAX_ENTRIES} keys and array items`)
}

function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09
}

/** Where the string opening at `start` ends (after its closing quote); -1 if it does not. */
function stringEnd(body: Buffer, start: number): number {
  let from = start + 1
  for (;;) {
    const quote = body.indexOf(QUOTE, from)
    if (quote === -1) return -1
    // The quote is escaped if an odd number of backslashes stand before it.
    let before = quote - 1
    while (before > start && body[before] === BACKSLASH) before--
    if ((quote - 1 - before) % 2 === 0) return quote + 1
    from = quote + 1
  }
}

/** The key (quotes included) as JSON.parse reads it; undefined if it is not a valid JSON string. */
function keyText(body: Buffer, start: number, end: number): string | undefined {
  try {
    const key: unknown = JSON.parse(body.toString('utf8', start, end))
    return typeof key === 'string' ? key : undefined
  } catch {
    return undefined
  }
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * A string equal for two keys exactly when JSON.parse reads them as the same key ("a" and
 * "\u0061" are the same). Most keys have no escape: their bytes, one character per byte (latin1),
 * with no decoding. A key with an escape is decoded and given the same form (its UTF-8 bytes as
 * latin1), except one holding a lone surrogate, which has no UTF-8 form: it is marked with a
 * 0xFF byte, which valid UTF-8 never holds, so it can equal only the same decoded key.
 */
function keyIdentity(body: Buffer, start: number, end: number): string | undefined {
  let escaped = false
  for (let at = start + 1; at < end - 1 && !escaped; at++) escaped = body[at] === BACKSLASH
  if (!escaped) return body.toString('latin1', start + 1, end - 1)
  const key = keyText(body, start, end)
  if (key === undefined) return undefined
  return LONE_SURROGATE.test(key) ? `\u00ff${key}` : Buffer.from(key, 'utf8').toString('latin1')
}

/** Whether the ] at `close` ends an empty array (only white space since its [). */
function emptyArrayEndsAt(body: Buffer, close: number): boolean {
  let before = close - 1
  while (before >= 0 && isSpace(body[before])) before--
  return body[before] === OPEN_ARRAY
}

/** The path to the current key or item at `depth`, as in address.city or items[2].name (cut to MAX_PATH_LENGTH). */
function path(body: Buffer, depth: number): string {
  let at = ''
  for (let level = 1; level <= depth; level++) {
    if (isObject[level] === 0) {
      at += `[${counts[level] ?? 0}]`
      continue
    }
    const key = keyText(body, keyStarts[level] ?? 0, keyEnds[level] ?? 0) ?? ''
    at += at === '' ? key : `.${key}`
    if (at.length > MAX_PATH_LENGTH) break
  }
  if (at.length <= MAX_PATH_LENGTH) return at
  // Never between the halves of a surrogate pair.
  let end = MAX_PATH_LENGTH - 1
  const last = at.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end -= 1
  return `${at.slice(0, end)}…`
}
