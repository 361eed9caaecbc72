// vitest: sqlite project only — the multipart parser, no backend.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { boundaryOf, MultipartError, type MultipartEvent, MultipartParser, type PartHeaders } from '../../../src/http/multipart.js'

interface ParsedPart {
  headers: PartHeaders
  body: Buffer
}

/** Feeds the body in the given chunks and gathers the parts the events describe. */
function parse(boundary: string, chunks: readonly Buffer[]): ParsedPart[] {
  const parser = new MultipartParser(boundary)
  const parts: ParsedPart[] = []
  let current: { headers: PartHeaders; data: Buffer[] } | undefined
  let ended = false
  const handle = (event: MultipartEvent) => {
    switch (event.kind) {
      case 'part':
        expect(current).toBeUndefined()
        current = { headers: event.headers, data: [] }
        return
      case 'data':
        current?.data.push(Buffer.from(event.bytes))
        return
      case 'part-end':
        if (current !== undefined) parts.push({ headers: current.headers, body: Buffer.concat(current.data) })
        current = undefined
        return
      case 'end':
        ended = true
    }
  }
  for (const chunk of chunks) for (const event of parser.push(chunk)) handle(event)
  parser.finish()
  expect(ended).toBe(true)
  return parts
}

/** Splits a buffer at the given cut points (each taken modulo its length). */
function split(body: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (body.length + 1)))].sort((a, b) => a - b)
  const chunks: Buffer[] = []
  let from = 0
  for (const point of points) {
    chunks.push(body.subarray(from, point))
    from = point
  }
  chunks.push(body.subarray(from))
  return chunks
}

function build(boundary: string, parts: ReadonlyArray<{ name: string; filename?: string; body: Buffer }>, preamble = '', epilogue = ''): Buffer {
  const pieces: Buffer[] = [Buffer.from(preamble)]
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}`
    pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n`), part.body, Buffer.from('\r\n'))
  }
  pieces.push(Buffer.from(`--${boundary}--${epilogue}`))
  return Buffer.concat(pieces)
}

describe('MultipartParser', () => {
  it('gives back every part exactly, however the body is cut into chunks (property)', () => {
    const boundary = 'XyZ-boundary'
    // Bodies built from pieces that look like the delimiter's beginnings, so partial matches at
    // chunk edges are exercised, and raw bytes of every value.
    const tricky = fc.constantFrom('\r', '\n', '\r\n', '-', '--', '\r\n--', '\r\n--XyZ', '\r\n--XyZ-bound', '--XyZ-boundary', 'a', '\u00ff')
    const bodyArbitrary = fc.oneof(
      fc.array(tricky, { maxLength: 30 }).map((pieces) => Buffer.from(pieces.join(''), 'latin1')),
      fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
    )
    const partArbitrary = fc.record({
      name: fc.constantFrom('name', 'price', 'images', 'description'),
      filename: fc.option(fc.constantFrom('a.png', 'b c.jpg', ''), { nil: undefined }),
      body: bodyArbitrary,
    })
    fc.assert(
      fc.property(fc.array(partArbitrary, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 20 }), fc.constantFrom('', 'preamble\r\n'), (parts, cuts, preamble) => {
        // A body that holds the delimiter itself would end its part there (as in any multipart body).
        const delimiter = Buffer.from(`\r\n--${boundary}`)
        fc.pre(parts.every((part) => !Buffer.concat([part.body, Buffer.from('\r\n')]).includes(delimiter)))
        const body = build(boundary, parts, preamble, '\r\nepilogue')
        const parsed = parse(boundary, split(body, cuts))
        expect(parsed.map((part) => ({ name: part.headers.name, filename: part.headers.filename, body: part.body }))).toEqual(
          parts.map((part) => ({ name: part.name, filename: part.filename, body: part.body })),
        )
      }),
      { numRuns: 500 },
    )
  })

  it('reads a byte at a time', () => {
    const body = build('b', [{ name: 'images', filename: 'x.png', body: Buffer.from('\r\n--\r\n-b-') }])
    const parts = parse('b', [...body].map((byte) => Buffer.from([byte])))
    expect(parts.map((part) => part.body.toString())).toEqual(['\r\n--\r\n-b-'])
  })

  it('allows white space after a boundary, a part with no body, and the quoted parameters browsers send', () => {
    const body = Buffer.from(
      '--b  \t\r\nContent-Disposition: form-data; name="a\\"b"; filename="c;d.png"\r\ncontent-type: image/png\r\n\r\n\r\n--b\r\nContent-Disposition: FORM-DATA; NAME=plain\r\n\r\nv\r\n--b--',
    )
    expect(parse('b', [body]).map((part) => [part.headers, part.body.toString()])).toEqual([
      [{ name: 'a"b', filename: 'c;d.png', contentType: 'image/png' }, ''],
      [{ name: 'plain', filename: undefined, contentType: undefined }, 'v'],
    ])
  })

  it('refuses what is not multipart: no closing boundary, garbage after a boundary, too much preamble or epilogue', () => {
    const refuse = (body: string, message: string) => expect(() => parse('b', [Buffer.from(body)])).toThrow(new MultipartError(message))
    refuse('--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nv', 'The multipart body ended before its closing boundary')
    refuse('no boundary at all', 'The multipart body ended before its closing boundary')
    refuse('--bX\r\n', 'A multipart boundary must be followed by a line break or "--"')
    refuse(`${'p'.repeat(16 * 1024 + 10)}\r\n--b--`, 'The multipart body has more than 16384 bytes before the first boundary')
    refuse(`--b--${'e'.repeat(16 * 1024 + 1)}`, 'The multipart body has more than 16384 bytes after the closing boundary')
  })
})

describe('boundaryOf', () => {
  it('reads the boundary parameter, quoted or not', () => {
    expect(boundaryOf('multipart/form-data; boundary=abc')).toBe('abc')
    expect(boundaryOf('multipart/form-data; charset=utf-8; boundary="a b:c"')).toBe('a b:c')
    expect(boundaryOf(`multipart/form-data; boundary=${'x'.repeat(70)}`)).toBe('x'.repeat(70))
  })

  it('refuses a missing, empty, over-long or malformed boundary', () => {
    for (const contentType of ['multipart/form-data', 'multipart/form-data; boundary=', `multipart/form-data; boundary=${'x'.repeat(71)}`, 'multipart/form-data; boundary="ends in space "']) {
      expect(() => boundaryOf(contentType), contentType).toThrow(MultipartError)
    }
  })
})
