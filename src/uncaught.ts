import type { Logger } from 'pino'
import { isBackendConnectionFault } from './db/errors.js'

/** What a log line says of an error: enough to find its cause, nothing a secret could hide in. */
export interface LoggedError {
  type: string
  message: string
  stack?: string
  code?: string
  syscall?: string
  cause?: LoggedError
}

/**
 * The fields of `error` worth logging, and only those: pino's error serializer (for `err`) would
 * copy every property, and a pg error handed on by its pool carries the client with its
 * connection parameters (the password among them). Logged as `error`, outside that serializer.
 */
export function loggedError(error: unknown, depth = 0): LoggedError {
  if (!(error instanceof Error)) return { type: typeof error, message: String(error) }
  const fields = error as Error & { code?: unknown; syscall?: unknown }
  return {
    type: error.name,
    message: error.message,
    ...(error.stack === undefined ? {} : { stack: error.stack }),
    ...(typeof fields.code === 'string' ? { code: fields.code } : {}),
    ...(typeof fields.syscall === 'string' ? { syscall: fields.syscall } : {}),
    ...(error.cause === undefined || depth >= 2 ? {} : { cause: loggedError(error.cause, depth + 1) }),
  }
}

/**
 * The last resort for an error nothing else handled: an 'error' event without a listener, a
 * rejection nobody awaited. A backend connection fault (isBackendConnectionFault: PostgreSQL or
 * Redis going away, which every connection's owner already survives) leaves the process sound, so
 * it is logged at error and the process goes on serving. Anything else is a defect whose reach is
 * unknown: it is logged at fatal with its stack and the process exits 1, for its supervisor to
 * start a fresh one. Installed first thing by the server and the CLI (the worker included).
 */
export function handleUncaughtErrors(log: Logger): void {
  const handle = (error: unknown, origin: 'uncaughtException' | 'unhandledRejection') => {
    if (isBackendConnectionFault(error)) {
      log.error({ error: loggedError(error), origin }, 'backend connection fault outside any request: going on')
      return
    }
    // pino writes what is buffered synchronously as the process exits.
    log.fatal({ error: loggedError(error), origin }, 'uncaught error: exiting')
    process.exit(1)
  }
  process.on('uncaughtException', (error) => handle(error, 'uncaughtException'))
  process.on('unhandledRejection', (reason) => handle(reason, 'unhandledRejection'))
}
