/**
 * The rule about a webhook's stored circuit (webhooks.consecutive_failures): the queries that skip
 * or hold back an open circuit's deliveries read it, as does the delivery engine, so it lives
 * beside the tables rather than in the engine.
 */

/** Consecutive failed attempts after which a webhook's circuit opens: one attempt at a time, spaced out. */
export const CIRCUIT_THRESHOLD = 5

export function isCircuitOpen(consecutiveFailures: number): boolean {
  return consecutiveFailures >= CIRCUIT_THRESHOLD
}
