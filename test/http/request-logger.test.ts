// vitest: sqlite project only — the request logger, no backend.
import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { requestLogger } from '../../src/http/request-logger.js'

/** A pino logger at `level` writing its lines into the returned array, and how many children it made. */
function capture(level: string) {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>)
      done()
    },
  })
  const parent = pino({ level }, stream)
  const counted = { children: 0 }
  // Children inherit `child` from the parent: only the parent's own calls are counted.
  const child = parent.child
  parent.child = function (this: typeof parent, ...args: Parameters<typeof child>) {
    if (this === parent) counted.children++
    return Reflect.apply(child, this, args) as ReturnType<typeof child>
  } as typeof parent.child
  return { parent, lines, counted }
}

describe("a request's logger", () => {
  it('writes nothing and makes no child below its level; a line at its level carries the request id', () => {
    const { parent, lines, counted } = capture('warn')
    const log = requestLogger(parent, { reqId: 'r-1' }, {})
    log.info({ req: { url: '/x' } }, 'incoming request')
    log.debug('detail')
    expect(lines).toEqual([])
    expect(counted.children).toBe(0)
    expect(log.level).toBe('warn')
    log.warn({ event: 'e' }, 'something')
    log.error('failed %s', 'here')
    expect(counted.children).toBe(1)
    expect(lines).toMatchObject([
      { level: 40, reqId: 'r-1', event: 'e', msg: 'something' },
      { level: 50, reqId: 'r-1', msg: 'failed here' },
    ])
  })

  it('at info, every request line is written with its request id', () => {
    const { parent, lines } = capture('info')
    const log = requestLogger(parent, { reqId: 'r-2' }, {})
    log.info({ res: { statusCode: 200 } }, 'request completed')
    expect(lines).toMatchObject([{ level: 30, reqId: 'r-2', res: { statusCode: 200 }, msg: 'request completed' }])
  })

  it("its children carry the request id and their own bindings; a level set on it is the child's", () => {
    const { parent, lines } = capture('warn')
    const log = requestLogger(parent, { reqId: 'r-3' }, {})
    log.child({ part: 'p' }).warn('from the child')
    log.level = 'info'
    log.info('now written')
    expect(parent.level).toBe('warn')
    expect(lines).toMatchObject([
      { reqId: 'r-3', part: 'p', msg: 'from the child' },
      { reqId: 'r-3', msg: 'now written' },
    ])
  })

  it("a route's own level makes pino's child at once", () => {
    const { parent, counted } = capture('warn')
    requestLogger(parent, { reqId: 'r-4' }, { level: 'debug' })
    expect(counted.children).toBe(1)
  })
})
