import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { ErrorObject } from 'ajv'
import { RATE_RETRY_AFTER_SECONDS, RateUnavailable } from '../ledger/rates.js'
import { DomainError } from '../errors.js'
import { isDatabaseClosed, isDatabaseUnavailable, isStorageFault } from '../db/errors.js'
import { answerAndClose, CLIENT_ABORTED } from './client-errors.js'
import { drainBody } from './drain-body.js'
import { Incident } from '../incident.js'
import { requestIdFrom } from './request-id.js'
import { scanJson } from '../validation/json-shape.js'
import { validationMessage } from '../validation/validator.js'
import { ApiError, BODY_CUT_SHORT, errorBody } from './api-error.js'

export const DATABASE_UNAVAILABLE = 'The database is unavailable'
export const STORAGE_UNAVAILABLE = 'The database storage is unavailable'
export const DATABASE_RETRY_AFTER_SECONDS = 1

/** Longest value of a path parameter the router matches (every id in the API is a 36-character UUID). */
export const MAX_PATH_PARAMETER_LENGTH = 100

const BODY_TOO_LARGE = 'Request body is larger than 1 MiB'

/** Node's test for an Expect header it can honour (it answers 100 Continue itself). */
const CONTINUE_EXPECTATION = /(?:^|\W)100-continue(?:$|\W)/i
const UTF8_CHARSETS = new Set(['utf-8', 'utf8'])
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The status of each kind of domain error (src/errors.ts): the one place a domain refusal becomes
 * an HTTP answer. Its body is the contract's, with the error's message.
 */
const DOMAIN_ERROR_STATUS: Readonly<Record<DomainError['kind'], number>> = {
  'invalid-request': 400,
  'not-found': 404,
  conflict: 409,
}

/** The HTTP status a domain error is answered with. */
export function domainErrorStatus(error: DomainError): number {
  return DOMAIN_ERROR_STATUS[error.kind]
}

interface ErrorAnswer {
  statusCode: number
  message: string
}

function isFastifyError(error: unknown): error is FastifyError {
  return error instanceof Error && ('statusCode' in error || 'code' in error || 'validation' in error)
}

/**
 * The one place errors become responses: ApiError as thrown, domain errors (src/errors.ts) by
 * DOMAIN_ERROR_STATUS, validation failures as 400 naming every failed field, Fastify's own client
 * errors in the contract's body (never with Fastify's `code`), and anything else as a 500 that
 * shows no internals and is logged with the request id.
 * The answers given before routing use the same bodies: answerFrameworkError (the router's
 * errors), the onRequest checks below (Host, Expect, closing), CONNECT, and answerClientError
 * (src/http/client-errors.ts) for Node's parser.
 */
export const errorsPlugin = fp(
  async (app: FastifyInstance) => {
    // Replace the default parsers: JSON only (anything else is 415), read as UTF-8 and nothing
    // else, and an empty JSON body is "no body" (generated clients send Content-Type: application/json on DELETE).
    const parseJson = app.getDefaultJsonParser('error', 'error')
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
      // No body: nothing to misread, whatever its headers say.
      if (body.length === 0) {
        done(null, undefined)
        return
      }
      const unreadable = unreadableBody(request.headers)
      if (unreadable !== undefined) {
        done(unreadable, undefined)
        return
      }
      let text: string
      try {
        text = utf8.decode(body)
      } catch {
        done(new ApiError(400, 'Request body is not valid UTF-8'), undefined)
        return
      }
      // A body of only white space is no body.
      if (!/\S/.test(text)) {
        done(null, undefined)
        return
      }
      // Limits first, so an oversized shape is never built; a duplicate key only once the text is
      // known to be JSON, so a malformed body is called that whatever keys it repeats.
      const shape = scanJson(body)
      request.jsonText = text
      if (shape?.kind === 'limit') {
        done(new ApiError(400, shape.message), undefined)
        return
      }
      if (shape === undefined) {
        parseJson(request, text, done)
        return
      }
      parseJson(request, text, (error) => done(error ?? new ApiError(400, shape.message), undefined))
    })

    // Node's own refusals of a missing Host and of an unknown Expect answer with an empty body,
    // and Fastify's 503 while closing has no x-request-id: they are made here instead
    // (requireHostHeader and return503OnClosing are off in app.ts; checkExpectation is routed).
    let closing = false
    const shuttingDown = () => new ApiError(503, 'The server is shutting down', { details: 'Retry the request', headers: { 'Retry-After': '1' } })
    const sendApiError = (reply: FastifyReply, error: ApiError) =>
      reply.code(error.statusCode).headers(error.headers).send(errorBody(error.statusCode, error.message, error.details))
    app.addHook('preClose', async () => {
      closing = true
    })
    app.server.on('checkExpectation', (req, res) => app.routing(req, res))
    // CONNECT (a proxy's method) would otherwise lose its connection without a word.
    app.server.on('connect', (req: IncomingMessage, socket: Duplex) => {
      const requestId = requestIdFrom(req.headers['x-request-id'])
      app.log.info({ reqId: requestId, method: req.method, url: req.url }, 'CONNECT answered with 501')
      answerAndClose(socket, 501, 'CONNECT is not supported', requestId)
    })
    // A callback hook: it runs on every request, and answers almost always with nothing to do.
    app.addHook('onRequest', (request, _reply, done) => {
      if (closing) {
        done(shuttingDown())
        return
      }
      const raw = request.raw
      if (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1 && raw.headers.host === undefined) {
        done(new ApiError(400, 'Host header is required'))
        return
      }
      const expectation = raw.headers.expect
      if (expectation !== undefined && !CONTINUE_EXPECTATION.test(expectation)) {
        done(new ApiError(417, 'Expect supports only 100-continue'))
        return
      }
      done()
    })

    const faults = new FaultLog()
    app.setErrorHandler((error: unknown, request, reply) => {
      if (error instanceof ApiError) return sendApiError(reply, error)
      if (error instanceof DomainError) {
        const status = domainErrorStatus(error)
        return reply.code(status).send(errorBody(status, error.message))
      }
      if (error instanceof RateUnavailable) {
        // No fresh rate until an operator loads one: transient for the caller, never a guess.
        return reply
          .code(503)
          .header('Retry-After', String(RATE_RETRY_AFTER_SECONDS))
          .send(errorBody(503, error.message, 'An operator loads rates with `devplatform rates load` or EXCHANGE_RATES_FILE; retry later'))
      }
      if (isRequestStreamError(error, request)) {
        // The client hung up while its body was arriving (Node's own ECONNRESET "aborted", which
        // is no database's): nobody is left to answer, and nothing of ours failed.
        request.log.debug({ err: error }, CLIENT_ABORTED)
        return reply.code(400).send(errorBody(400, BODY_CUT_SHORT))
      }
      if (isDatabaseUnavailable(error)) {
        // Passing faults (an outage, a restart, a held lock, a full disk) ask the client to retry.
        const storage = isStorageFault(error)
        faults.report(storage ? 'storage' : 'database', error, request.log)
        return reply
          .code(503)
          .header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS))
          .send(errorBody(503, storage ? STORAGE_UNAVAILABLE : DATABASE_UNAVAILABLE, 'Retry the request shortly'))
      }
      if (isFastifyError(error) && error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        // The client is most likely still writing the body: answered once it has finished
        // (within drainBody's bounds), so the close that follows cannot reset the answer away.
        return drainBody(request.raw).then((outcome) => {
          if (outcome === 'cut') request.log.info('a body over the limit was still arriving at the drain bound: connection closed after the 413')
          return reply.code(413).send(errorBody(413, BODY_TOO_LARGE))
        })
      }
      if (isFastifyError(error)) {
        if (error.validation !== undefined) {
          const message = validationMessage(error.validation as unknown as ErrorObject[])
          return reply.code(400).send(errorBody(400, message))
        }
        const answer = fastifyErrorAnswer(error)
        if (answer !== undefined) return reply.code(answer.statusCode).send(errorBody(answer.statusCode, answer.message))
      }
      if (closing && request.raw.socket.destroyed && isDatabaseClosed(error)) {
        // Its client hung up, so the server's close did not wait for it, and the database closed
        // under it: a failure with nobody to answer, and nothing for the operator to mend.
        request.log.info({ err: error }, 'request abandoned by its client failed during shutdown')
        return sendApiError(reply, shuttingDown())
      }
      request.log.error({ err: error }, 'unhandled error')
      return reply.code(500).send(errorBody(500, 'Internal server error'))
    })

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0] ?? request.url
      return reply.code(404).send(errorBody(404, `Cannot ${request.method} ${path}`))
    })
  },
  { name: 'errors' },
)

/**
 * The error is the request's own body stream's (the client hung up mid-body, or the body broke
 * off): Fastify's body reader hands it on as it is, and its code (ECONNRESET) is no database's.
 */
function isRequestStreamError(error: unknown, request: FastifyRequest): boolean {
  return error instanceof Error && request.raw.errored === error
}

/** Passing database faults, logged once per incident (src/incident.ts) for each kind rather than once per request. */
class FaultLog {
  private readonly incidents = { database: new Incident(), storage: new Incident() }

  report(kind: 'database' | 'storage', error: unknown, log: FastifyBaseLogger): void {
    const report = this.incidents[kind].failed()
    if (report === undefined) return
    log.error({ err: error, unlogged: report.unlogged }, kind === 'storage' ? 'database storage unavailable' : 'database unavailable')
  }
}

/**
 * Fastify's frameworkErrors option: the router's errors (a path that is not valid
 * percent-encoding, a path parameter over MAX_PATH_PARAMETER_LENGTH), answered before any hook
 * runs, so the x-request-id header is set here.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id)
  const answer = fastifyErrorAnswer(error)
  if (answer === undefined) {
    request.log.error({ err: error }, 'unhandled error')
    void reply.code(500).send(errorBody(500, 'Internal server error'))
    return
  }
  void reply.code(answer.statusCode).send(errorBody(answer.statusCode, answer.message))
}

/** A Fastify error the client caused, as the contract's status and message; undefined for a fault of ours. */
function fastifyErrorAnswer(error: FastifyError): ErrorAnswer | undefined {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return { statusCode: 400, message: 'Path is not valid percent-encoding' }
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { statusCode: 414, message: `A path parameter is longer than ${MAX_PATH_PARAMETER_LENGTH} characters` }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { statusCode: 415, message: 'Unsupported Media Type: send application/json' }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { statusCode: 413, message: BODY_TOO_LARGE }
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { statusCode: 400, message: 'Request body size did not match Content-Length' }
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      // JSON syntax errors and prototype-poisoning attempts from the JSON parser.
      return { statusCode: 400, message: 'Request body is not valid JSON' }
  }
  const status = error.statusCode ?? 500
  return status >= 400 && status < 500 ? { statusCode: status, message: error.message } : undefined
}

/**
 * Why a JSON body cannot be read as sent: a content coding the server does not decode, or a
 * charset other than UTF-8. Parsing it as plain UTF-8 would store something the client did not send.
 */
function unreadableBody(headers: IncomingHttpHeaders): ApiError | undefined {
  const codings = (headers['content-encoding'] ?? '').split(',').map((coding) => coding.trim().toLowerCase())
  if (codings.some((coding) => coding !== '' && coding !== 'identity')) {
    return new ApiError(415, 'Unsupported Content-Encoding: send the body unencoded (no Content-Encoding, or identity)', {
      headers: { 'Accept-Encoding': 'identity' },
    })
  }
  if (charsetsOf(headers['content-type'] ?? '').some((charset) => !UTF8_CHARSETS.has(charset))) {
    return new ApiError(415, 'Unsupported charset: send application/json in UTF-8 (charset=utf-8, or no charset)')
  }
  return undefined
}

/** The charset parameters of a Content-Type, lower case, unquoted (RFC 9110 §8.3.1: a token or a quoted string). */
function charsetsOf(contentType: string): string[] {
  const charsets: string[] = []
  for (const parameter of contentType.split(';').slice(1)) {
    const separator = parameter.indexOf('=')
    if (separator === -1 || parameter.slice(0, separator).trim().toLowerCase() !== 'charset') continue
    charsets.push(
      parameter
        .slice(separator + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase(),
    )
  }
  return charsets
}
