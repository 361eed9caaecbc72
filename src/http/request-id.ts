import { randomUUID } from 'node:crypto'

/** What a caller's x-request-id must look like to be kept: a short token, safe in logs and headers. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * The id of a request: the caller's x-request-id when it is a sane token (so traces can be
 * joined up), else a new UUID. One rule for routed requests and for the early errors answered
 * before routing.
 */
export function requestIdFrom(given: unknown): string {
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID()
}
