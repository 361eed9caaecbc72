import { randomUUID } from 'node:crypto'

/** ISO 8601 UTC with milliseconds: the format of every stored and returned timestamp. */
export function nowIso(): string {
  return new Date().toISOString()
}

export function newId(): string {
  return randomUUID()
}
