import { STATUS_CODES } from 'node:http'

/** What a request whose body stopped arriving (the client hung up) is told, wherever it was being read. */
export const BODY_CUT_SHORT = 'The request body did not arrive whole'

/**
 * An answer decided by HTTP itself (authentication, content type and coding, body parsing,
 * idempotency keys, shutting down), thrown by routes and hooks. The error handler sends it as
 * it is, in the contract's body: {statusCode, error, message, details?}. Domain refusals are
 * src/errors.ts's instead.
 */
export class ApiError extends Error {
  readonly statusCode: number
  readonly details: string | undefined
  readonly headers: Readonly<Record<string, string>>

  constructor(statusCode: number, message: string, options: { details?: string; headers?: Record<string, string> } = {}) {
    super(message)
    this.name = 'ApiError'
    this.statusCode = statusCode
    this.details = options.details
    this.headers = options.headers ?? {}
  }
}

export interface ErrorBody {
  statusCode: number
  error: string
  message: string
  details?: string
}

export function errorBody(statusCode: number, message: string, details?: string): ErrorBody {
  const body: ErrorBody = { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message }
  if (details !== undefined) body.details = details
  return body
}
