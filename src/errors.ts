import { STATUS_CODES } from 'node:http'

/**
 * The one error type routes and hooks throw. The error handler turns it into the contract's
 * body: {statusCode, error, message, details?}.
 */
/** What a request whose body stopped arriving (the client hung up) is told, wherever it was being read. */
export const BODY_CUT_SHORT = 'The request body did not arrive whole'

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

  static badRequest(message: string): ApiError {
    return new ApiError(400, message)
  }

  static notFound(message: string): ApiError {
    return new ApiError(404, message)
  }

  static conflict(message: string): ApiError {
    return new ApiError(409, message)
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
