/*
 * What other modules may use of drains (the only file of this folder they import): the timing of
 * a money step, which transfers share with drains (the same scheduler runs both).
 */

export { type DrainContext, type DrainTimings, RATE_RETRY_MS, stepDelayMs } from './lifecycle.js'
