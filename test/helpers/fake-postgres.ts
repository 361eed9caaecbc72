import { createServer, type Server, type Socket } from 'node:net'

/**
 * What a connection of the fake does once the client's startup message arrives: `answer` completes
 * the handshake and answers every simple query with one row (`show transaction_read_only` with "off",
 * as a primary does); `terminate-when-ready` sends the end
 * of the handshake (ReadyForQuery) and a FATAL ErrorResponse 57P01 (an administrator terminated the
 * backend) in one TCP write and closes, so the client reads both in one chunk; `read-only` answers
 * like a standby, every query with one text row "on" (as `show transaction_read_only` does there).
 */
export type FakeConnectionBehaviour = 'answer' | 'terminate-when-ready' | 'read-only'

/** A query whose text contains this is answered after `slowAnswerMs`, holding its connection meanwhile. */
export const SLOW_QUERY_MARK = 'pg_sleep'

/**
 * A PostgreSQL server on 127.0.0.1 speaking just enough of the protocol (version 3, trust
 * authentication, simple queries) to give a test exact control over what one socket read holds.
 */
export class FakePostgres {
  /** how each connection behaved, in the order they arrived */
  readonly connections: FakeConnectionBehaviour[] = []
  private readonly sockets = new Set<Socket>()

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** `behaviour(n)` chooses what the n-th connection (from 0) does. */
  static async start(behaviour: (index: number) => FakeConnectionBehaviour, slowAnswerMs = 300): Promise<FakePostgres> {
    let fake: FakePostgres | undefined
    const server = createServer((socket) => fake?.accept(socket, behaviour, slowAnswerMs))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    if (address === null || typeof address === 'string') throw new Error('fake PostgreSQL has no port')
    fake = new FakePostgres(server, address.port)
    return fake
  }

  get url(): string {
    return `postgres://fake@127.0.0.1:${this.port}/fake`
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private accept(socket: Socket, behaviour: (index: number) => FakeConnectionBehaviour, slowAnswerMs: number): void {
    const chosen = behaviour(this.connections.length)
    this.connections.push(chosen)
    this.sockets.add(socket)
    socket.on('close', () => this.sockets.delete(socket))
    socket.on('error', () => undefined)
    let buffered = Buffer.alloc(0)
    let started = false
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      for (;;) {
        // The startup message has no type byte; every later message has one before its length.
        const header = started ? 5 : 4
        if (buffered.length < header) return
        const length = buffered.readInt32BE(started ? 1 : 0)
        const total = started ? length + 1 : length
        if (buffered.length < total) return
        const message = buffered.subarray(0, total)
        buffered = buffered.subarray(total)
        if (!started) {
          started = true
          if (chosen === 'terminate-when-ready') {
            socket.end(Buffer.concat([handshake(), readyForQuery(), administratorShutdown()]))
            return
          }
          socket.write(Buffer.concat([handshake(), readyForQuery()]))
          continue
        }
        const type = String.fromCharCode(message[0] ?? 0)
        if (type === 'X') {
          socket.end()
          return
        }
        if (type === 'Q') {
          const text = message.subarray(5, message.length - 1).toString('utf8')
          const asksReadOnly = chosen === 'read-only' || text.includes('transaction_read_only')
          const answer = Buffer.concat([asksReadOnly ? readOnlyRow(chosen === 'read-only' ? 'on' : 'off') : oneRow(), readyForQuery()])
          if (text.includes(SLOW_QUERY_MARK)) setTimeout(() => socket.write(answer), slowAnswerMs)
          else socket.write(answer)
        }
      }
    })
  }
}

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5)
  head.write(type, 0, 'latin1')
  head.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([head, body])
}

function int32(value: number): Buffer {
  const buffer = Buffer.alloc(4)
  buffer.writeInt32BE(value)
  return buffer
}

function int16(value: number): Buffer {
  const buffer = Buffer.alloc(2)
  buffer.writeInt16BE(value)
  return buffer
}

function cstring(text: string): Buffer {
  return Buffer.from(`${text}\0`, 'utf8')
}

/** AuthenticationOk, the parameters a real server reports, BackendKeyData. */
function handshake(): Buffer {
  const parameters = { server_version: '16.0', server_encoding: 'UTF8', client_encoding: 'UTF8', integer_datetimes: 'on', standard_conforming_strings: 'on' }
  return Buffer.concat([
    message('R', int32(0)),
    ...Object.entries(parameters).map(([name, value]) => message('S', Buffer.concat([cstring(name), cstring(value)]))),
    message('K', Buffer.concat([int32(4242), int32(7)])),
  ])
}

function readyForQuery(): Buffer {
  return message('Z', Buffer.from('I', 'latin1'))
}

/** What PostgreSQL sends a backend that pg_terminate_backend or a fast shutdown ends. */
function administratorShutdown(): Buffer {
  const fields = [['S', 'FATAL'], ['V', 'FATAL'], ['C', '57P01'], ['M', 'terminating connection due to administrator command']]
  return message('E', Buffer.concat([...fields.map(([code, value]) => cstring(`${code}${value}`)), Buffer.from([0])]))
}

/** One int4 column "one" with the value 1, and its command tag. */
function oneRow(): Buffer {
  const INT4_OID = 23
  const column = Buffer.concat([cstring('one'), int32(0), int16(0), int32(INT4_OID), int16(4), int32(-1), int16(0)])
  return Buffer.concat([message('T', Buffer.concat([int16(1), column])), message('D', Buffer.concat([int16(1), int32(1), Buffer.from('1')])), message('C', cstring('SELECT 1'))])
}

/** One text column "transaction_read_only" with the value, and its command tag. */
function readOnlyRow(value: 'on' | 'off'): Buffer {
  const TEXT_OID = 25
  const column = Buffer.concat([cstring('transaction_read_only'), int32(0), int16(0), int32(TEXT_OID), int16(-1), int32(-1), int16(0)])
  return Buffer.concat([message('T', Buffer.concat([int16(1), column])), message('D', Buffer.concat([int16(1), int32(Buffer.byteLength(value)), Buffer.from(value)])), message('C', cstring('SHOW'))])
}
