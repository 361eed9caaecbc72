/**
 * A streaming multipart/form-data parser (RFC 7578 over RFC 2046): it is fed the body a chunk at a
 * time and hands back what each chunk completes, a part's headers and then its bytes as they
 * arrive, so a file part can go to storage without the body ever being held whole. Only the tail
 * that could be the start of a boundary (its length, at most 75 bytes) is kept between chunks.
 */

/** Why a body is not the multipart/form-data it claims to be; the message is for the caller. */
export class MultipartError extends Error {}

export interface PartHeaders {
  /** the form field's name (Content-Disposition's `name`) */
  name: string
  /** the file name when the part is a file (Content-Disposition's `filename` or `filename*`) */
  filename: string | undefined
  /** the part's declared Content-Type, if any (never trusted for what a file is) */
  contentType: string | undefined
}

export type MultipartEvent =
  | { kind: 'part'; headers: PartHeaders }
  | { kind: 'data'; bytes: Buffer }
  | { kind: 'part-end' }
  /** the closing boundary: anything after it is the epilogue, which is ignored */
  | { kind: 'end' }

export interface MultipartLimits {
  /** most bytes of one part's header block */
  maxHeaderBytes: number
  /** most bytes before the first boundary */
  maxPreambleBytes: number
  /** most bytes after the closing boundary */
  maxEpilogueBytes: number
}

export const DEFAULT_MULTIPART_LIMITS: MultipartLimits = { maxHeaderBytes: 8 * 1024, maxPreambleBytes: 16 * 1024, maxEpilogueBytes: 16 * 1024 }

// RFC 2046 §5.1.1: 1 to 70 characters of this set, not ending in a space.
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/

/** The boundary of a multipart Content-Type, or a MultipartError saying what is wrong with it. */
export function boundaryOf(contentType: string): string {
  const semicolon = contentType.indexOf(';')
  const parameters = parametersOf(semicolon === -1 ? '' : contentType.slice(semicolon + 1))
  const boundary = parameters.get('boundary')
  if (boundary === undefined) throw new MultipartError('multipart/form-data needs a boundary parameter in its Content-Type')
  if (!BOUNDARY.test(boundary)) throw new MultipartError('The multipart boundary must be 1 to 70 characters (RFC 2046)')
  return boundary
}

type State = 'preamble' | 'after-boundary' | 'headers' | 'body' | 'epilogue'

const CRLF = Buffer.from('\r\n')
const HEADERS_END = Buffer.from('\r\n\r\n')
const DASH = 0x2d
const SPACE = 0x20
const TAB = 0x09
/** transport padding allowed between a boundary and its line break (RFC 2046: linear white space) */
const MAX_PADDING = 256

export class MultipartParser {
  /** CRLF "--" boundary: what ends every part's bytes (the first boundary is read as if a CRLF came before it) */
  private readonly delimiter: Buffer
  private readonly limits: MultipartLimits
  private state: State = 'preamble'
  /** bytes received but not yet decided on */
  private pending: Buffer
  private skipped = 0

  constructor(boundary: string, limits: MultipartLimits = DEFAULT_MULTIPART_LIMITS) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1')
    this.limits = limits
    // So a body that opens with its boundary (no preamble) matches the delimiter at once.
    this.pending = Buffer.from(CRLF)
  }

  /** Feeds the next chunk of the body; returns the events it completes, in order. */
  push(chunk: Buffer): MultipartEvent[] {
    const events: MultipartEvent[] = []
    if (this.state === 'epilogue') {
      this.skip(chunk.length, this.limits.maxEpilogueBytes, 'after the closing boundary')
      return events
    }
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    while (this.step(events));
    return events
  }

  /** The body has ended: it must have closed with the closing boundary. */
  finish(): void {
    if (this.state !== 'epilogue') throw new MultipartError('The multipart body ended before its closing boundary')
  }

  /** Takes one step on the pending bytes; false when it needs more of them. */
  private step(events: MultipartEvent[]): boolean {
    switch (this.state) {
      case 'preamble':
        return this.readPreamble()
      case 'after-boundary':
        return this.readAfterBoundary(events)
      case 'headers':
        return this.readHeaders(events)
      case 'body':
        return this.readBody(events)
      case 'epilogue':
        this.skip(this.pending.length, this.limits.maxEpilogueBytes, 'after the closing boundary')
        this.pending = Buffer.alloc(0)
        return false
    }
  }

  private readPreamble(): boolean {
    const at = this.pending.indexOf(this.delimiter)
    if (at === -1) {
      // Keep what could be the start of the boundary; the rest is preamble.
      const keep = Math.min(this.pending.length, this.delimiter.length - 1)
      this.skip(this.pending.length - keep, this.limits.maxPreambleBytes, 'before the first boundary')
      this.pending = this.pending.subarray(this.pending.length - keep)
      return false
    }
    this.skip(at, this.limits.maxPreambleBytes, 'before the first boundary')
    this.pending = this.pending.subarray(at + this.delimiter.length)
    this.state = 'after-boundary'
    this.skipped = 0
    return true
  }

  private readAfterBoundary(events: MultipartEvent[]): boolean {
    const bytes = this.pending
    if (bytes.length < 2) return false
    if (bytes[0] === DASH && bytes[1] === DASH) {
      events.push({ kind: 'end' })
      this.state = 'epilogue'
      this.skipped = 0
      this.skip(bytes.length - 2, this.limits.maxEpilogueBytes, 'after the closing boundary')
      this.pending = Buffer.alloc(0)
      return false
    }
    let at = 0
    while (at < bytes.length && (bytes[at] === SPACE || bytes[at] === TAB)) at++
    if (at > MAX_PADDING) throw new MultipartError('A multipart boundary is followed by more than 256 spaces')
    if (bytes.length < at + 2) return false
    if (bytes[at] !== 0x0d || bytes[at + 1] !== 0x0a) throw new MultipartError('A multipart boundary must be followed by a line break or "--"')
    this.pending = bytes.subarray(at + 2)
    this.state = 'headers'
    return true
  }

  private readHeaders(events: MultipartEvent[]): boolean {
    const bytes = this.pending
    // A part without headers: its header block is the empty line alone.
    const end = bytes.subarray(0, 2).equals(CRLF) ? 0 : bytes.indexOf(HEADERS_END)
    if (end === -1) {
      if (bytes.length > this.limits.maxHeaderBytes) throw new MultipartError(`A multipart part's headers are longer than ${this.limits.maxHeaderBytes} bytes`)
      return false
    }
    if (end > this.limits.maxHeaderBytes) throw new MultipartError(`A multipart part's headers are longer than ${this.limits.maxHeaderBytes} bytes`)
    events.push({ kind: 'part', headers: partHeaders(bytes.toString('utf8', 0, end)) })
    this.pending = bytes.subarray(end === 0 ? 2 : end + HEADERS_END.length)
    this.state = 'body'
    return true
  }

  private readBody(events: MultipartEvent[]): boolean {
    const bytes = this.pending
    const at = bytes.indexOf(this.delimiter)
    if (at === -1) {
      // Everything but what could be the start of the delimiter is the part's.
      const safe = bytes.length - (this.delimiter.length - 1)
      if (safe > 0) {
        events.push({ kind: 'data', bytes: bytes.subarray(0, safe) })
        this.pending = bytes.subarray(safe)
      }
      return false
    }
    if (at > 0) events.push({ kind: 'data', bytes: bytes.subarray(0, at) })
    events.push({ kind: 'part-end' })
    this.pending = bytes.subarray(at + this.delimiter.length)
    this.state = 'after-boundary'
    return true
  }

  private skip(count: number, limit: number, where: string): void {
    this.skipped += count
    if (this.skipped > limit) throw new MultipartError(`The multipart body has more than ${limit} bytes ${where}`)
  }
}

/** A part's header block as the fields a form part has; a part must name its field. */
function partHeaders(block: string): PartHeaders {
  let disposition: string | undefined
  let contentType: string | undefined
  for (const line of block.split('\r\n')) {
    if (line === '') continue
    const colon = line.indexOf(':')
    if (colon <= 0) throw new MultipartError('A multipart part has a malformed header line')
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    if (name === 'content-disposition') disposition = value
    else if (name === 'content-type') contentType = value
  }
  if (disposition === undefined) throw new MultipartError('Every multipart part needs a Content-Disposition: form-data header')
  const semicolon = disposition.indexOf(';')
  const type = (semicolon === -1 ? disposition : disposition.slice(0, semicolon)).trim().toLowerCase()
  if (type !== 'form-data') throw new MultipartError('Every multipart part needs a Content-Disposition: form-data header')
  const parameters = parametersOf(semicolon === -1 ? '' : disposition.slice(semicolon + 1))
  const name = parameters.get('name')
  if (name === undefined || name === '') throw new MultipartError('Every multipart part needs a name (Content-Disposition: form-data; name="...")')
  const filename = parameters.get('filename*') ?? parameters.get('filename')
  return { name, filename, contentType }
}

/**
 * A header's parameters (`; key=value` or `; key="quoted \" value"`), keys in lower case. The
 * first of a repeated key is kept.
 */
function parametersOf(text: string): Map<string, string> {
  const parameters = new Map<string, string>()
  let at = 0
  while (at < text.length) {
    while (at < text.length && (text[at] === ';' || text[at] === ' ' || text[at] === '\t')) at++
    const equals = text.indexOf('=', at)
    if (equals === -1) break
    const key = text.slice(at, equals).trim().toLowerCase()
    at = equals + 1
    let value = ''
    if (text[at] === '"') {
      at++
      while (at < text.length && text[at] !== '"') {
        if (text[at] === '\\' && at + 1 < text.length) at++
        value += text[at]
        at++
      }
      at++
    } else {
      const end = text.indexOf(';', at)
      value = text.slice(at, end === -1 ? text.length : end).trim()
      at = end === -1 ? text.length : end
    }
    if (!parameters.has(key)) parameters.set(key, value)
  }
  return parameters
}
