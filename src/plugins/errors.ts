import type { FastifyError, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { ErrorObject } from 'ajv'
import { isDatabaseUnavailable } from '../db/errors.js'
import { ApiError, ConflictError, errorBody } from '../errors.js'
import { validationMessage } from '../validation/validator.js'

export const DATABASE_UNAVAILABLE = 'The database is unavailable'
const DATABASE_RETRY_AFTER_SECONDS = 1

function isFastifyError(error: unknown): error is FastifyError {
  return error instanceof Error && ('statusCode' in error || 'code' in error || 'validation' in error)
}

/**
 * The one place errors become responses: ApiError as thrown, validation failures as 400 naming
 * every failed field, Fastify's own client errors in the contract's body, and anything else
 * as a 500 that shows no internals and is logged with the request id.
 */
export const errorsPlugin = fp(
  async (app: FastifyInstance) => {
    // Replace the default parsers: JSON only (anything else is 415), and an empty JSON body is
    // "no body" (generated clients send Content-Type: application/json on DELETE).
    const parseJson = app.getDefaultJsonParser('error', 'error')
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = body.toString()
      // A body of only white space is no body.
      if (!/\S/.test(text)) {
        done(null, undefined)
        return
      }
      parseJson(request, text, done)
    })

    app.setErrorHandler((error: unknown, request, reply) => {
      if (error instanceof ApiError) {
        return reply.code(error.statusCode).headers(error.headers).send(errorBody(error.statusCode, error.message, error.details))
      }
      if (error instanceof ConflictError) {
        return reply.code(409).send(errorBody(409, error.message))
      }
      if (isDatabaseUnavailable(error)) {
        // Passing faults (an outage, a restart, a held lock, a full disk) ask the client to retry.
        request.log.warn({ err: error }, 'database unavailable')
        return reply
          .code(503)
          .header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS))
          .send(errorBody(503, DATABASE_UNAVAILABLE, 'Retry the request shortly'))
      }
      if (isFastifyError(error)) {
        if (error.validation !== undefined) {
          const message = validationMessage(error.validation as unknown as ErrorObject[])
          return reply.code(400).send(errorBody(400, message))
        }
        const status = error.statusCode ?? 500
        if (status >= 400 && status < 500) {
          return reply.code(status).send(errorBody(status, clientErrorMessage(error, status)))
        }
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

function clientErrorMessage(error: FastifyError, status: number): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported Media Type: send application/json'
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'Request body is larger than 1 MiB'
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'Request body size did not match Content-Length'
    default:
      // JSON syntax errors and prototype-poisoning attempts from the JSON parser.
      if (status === 400 && (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY')) {
        return 'Request body is not valid JSON'
      }
      return error.message
  }
}
