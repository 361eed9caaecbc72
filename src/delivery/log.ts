import type { FastifyBaseLogger } from 'fastify'

/** Where the delivery engine's parts log: the server's logger, or the worker's. */
export type DispatcherLog = Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>
