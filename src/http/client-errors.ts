import { maxHeaderSize, ServerResponse, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { ConnectionError, FastifyBaseLogger } from 'fastify'
import { requestIdFrom } from './request-id.js'
import { errorBody } from './api-error.js'

/** Node's limit on a request's line and headers together (16 KiB unless --max-http-header-size says otherwise). */
const HEAD_LIMIT = maxHeaderSize % 1024 === 0 ? `${maxHeaderSize / 1024} KiB` : `${maxHeaderSize} bytes`

/** The debug line of a client that hung up mid-request: its own doing, nothing for an operator. */
export const CLIENT_ABORTED = 'client closed the connection before its request arrived whole'

/** Node's parser error for a connection that ended (the client hung up) in the middle of a request. */
const ENDED_MID_REQUEST = 'HPE_INVALID_EOF_STATE'

/** How long an answered connection waits for the client to read the answer and hang up. */
const LINGER_MS = 2_000

interface ClientErrorAnswer {
  statusCode: number
  message: string
}

/** Node's parser errors as the contract's status and message (the same statuses Node itself answers). */
function answerFor(code: string): ClientErrorAnswer {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      // Node counts the request line with the headers: a very long URL lands here too.
      return { statusCode: 431, message: `Request line and headers are larger than ${HEAD_LIMIT}` }
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { statusCode: 413, message: 'Chunk extensions are too large' }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { statusCode: 408, message: 'The request was not received in time' }
    default:
      return { statusCode: 400, message: 'Malformed HTTP request' }
  }
}

/** The response being written on this socket, if a request on it got that far. */
function inFlightResponse(socket: Socket): ServerResponse | undefined {
  const response: unknown = Reflect.get(socket, '_httpMessage')
  return response instanceof ServerResponse ? response : undefined
}

/** The caller's x-request-id in the request head the parser failed in, if its line was read whole. */
function requestIdInFailedHead(error: ConnectionError): string | undefined {
  // Typed as JSON by Fastify; a Buffer of the chunk being parsed at run time.
  const packet: unknown = error.rawPacket
  if (!Buffer.isBuffer(packet)) return undefined
  const read = packet.subarray(0, error.bytesParsed).toString('latin1')
  // A request pipelined before this one in the same chunk ends at its blank line.
  const blankLine = read.lastIndexOf('\r\n\r\n')
  const head = blankLine === -1 ? read : read.slice(blankLine + 4)
  // Only a whole line counts: the parser may have failed in the middle of this one.
  return /\r\nx-request-id:[ \t]*([^\r\n]*?)[ \t]*\r\n/i.exec(head)?.[1]
}

/**
 * Fastify's clientErrorHandler: errors of Node's HTTP parser (a malformed request line or header,
 * headers over the limit, a timeout), which never reach routing. Answers a complete HTTP/1.1
 * response with the contract's body and an x-request-id (the caller's where it can be read),
 * then closes the connection, as the parser cannot go on after an error.
 */
export function answerClientError(error: ConnectionError, socket: Socket, log: FastifyBaseLogger): void {
  // A reset connection has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const inFlight = inFlightResponse(socket)
  if (inFlight !== undefined && !inFlight.req.complete) {
    // The error is in the body of the request being answered, whose headers were read.
    if (inFlight.headersSent) {
      // Its answer has begun: another one after it would corrupt the stream.
      socket.destroy()
      return
    }
    answer(error, socket, requestIdFrom(inFlight.req.headers['x-request-id']), log)
    return
  }
  const requestId = requestIdFrom(requestIdInFailedHead(error))
  // A request pipelined before the malformed one is answered first.
  if (inFlight === undefined) answer(error, socket, requestId, log)
  else inFlight.once('finish', () => answer(error, socket, requestId, log))
}

function answer(error: ConnectionError, socket: Socket, requestId: string, log: FastifyBaseLogger): void {
  // Answered already (the parser may report the same error again) or closed meanwhile.
  if (!socket.writable) return
  const { statusCode, message } = answerFor(error.code)
  // Answered all the same: a client that only half-closed its side can still read it.
  if (error.code === ENDED_MID_REQUEST) log.debug({ reqId: requestId, code: error.code }, CLIENT_ABORTED)
  else log.info({ reqId: requestId, code: error.code, reason: error.message }, `malformed request answered with ${statusCode}`)
  answerAndClose(socket, statusCode, message, requestId)
}

/**
 * Writes a complete HTTP/1.1 response in the contract's body straight to the connection, then
 * closes it: for requests no ServerResponse exists for.
 */
export function answerAndClose(socket: Duplex, statusCode: number, message: string, requestId: string): void {
  const body = JSON.stringify(errorBody(statusCode, message))
  socket.end(
    [
      `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? 'Error'}`,
      `Date: ${new Date().toUTCString()}`,
      'Connection: close',
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `x-request-id: ${requestId}`,
      '',
      body,
    ].join('\r\n'),
  )
  // end() lets the client read the answer before the connection goes (destroying at once could
  // reset it while unread input is pending); a client that never hangs up is cut off.
  setTimeout(() => socket.destroy(), LINGER_MS).unref()
}

/**
 * For shutdown, when Node no longer checks request time limits (server.close() stops its check):
 * answers 408 and closes the connection if a request is still arriving on it (its head or its
 * body). A connection whose request arrived whole is left alone, so a response being prepared or
 * written is not cut. Returns whether it cut the connection.
 */
export function cutArrivingRequest(socket: Socket, log: FastifyBaseLogger): boolean {
  if (socket.destroyed || !socket.writable) return false
  const inFlight = inFlightResponse(socket)
  if (inFlight?.req.complete === true) return false
  if (inFlight?.headersSent === true) {
    // Answered early (before its body arrived): another answer after it would corrupt the stream.
    socket.destroy()
    return true
  }
  const requestId = requestIdFrom(inFlight?.req.headers['x-request-id'])
  const { statusCode, message } = answerFor('ERR_HTTP_REQUEST_TIMEOUT')
  log.info({ reqId: requestId }, `request still arriving at shutdown answered with ${statusCode}`)
  answerAndClose(socket, statusCode, message, requestId)
  return true
}
