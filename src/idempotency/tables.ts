import type { TableDeclaration } from '../modules/module.js'

/**
 * An Idempotency-Key's first request and, once it answered, its response (replayed for 24 hours).
 * One row per (application, environment of the calling key, key).
 */
export interface IdempotencyKeysTable {
  app_id: string
  environment: 'production' | 'development'
  key: string
  /** SHA-256 of method, path and body: the same key with another request is refused */
  fingerprint: string
  /** null while the first request is running */
  status_code: number | null
  content_type: string | null
  body: string | null
  created_at: string
  /** a running request's claim lapses then (its process died), so the key can be used again */
  lease_until: string
  /**
   * Written inside the first request's own transaction (`transact`), so it commits with the
   * change: a claim whose change committed is never run again, even if its response was lost.
   */
  committed_at: string | null
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../db/schema.js' {
  interface Database {
    idempotency_keys: IdempotencyKeysTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const idempotencyTables: readonly TableDeclaration[] = [{ name: 'idempotency_keys', appDeletion: 'removed' }]
