import type { ExpressionBuilder } from 'kysely'
import type { Db } from '../db/database.js'
import type { Database } from '../db/schema.js'
import { isoOf, nowIso } from '../db/time.js'
import type { Environment } from '../keys/credentials.js'

/** What the first request with a key answered: replayed byte for byte. */
export interface StoredResponse {
  statusCode: number
  contentType: string | null
  body: string
}

/**
 * A running request's hold on its key. `createdAt` tells this claim apart from a later one on the
 * same key (after a release, an expiry or a lapsed lease): every write the holder makes is guarded
 * by it, so a holder whose claim was taken over changes nothing.
 */
export interface Claim {
  appId: string
  environment: Environment
  key: string
  createdAt: string
}

export type ClaimResult =
  | { outcome: 'claimed'; claim: Claim }
  /** the key's first request answered: replay this */
  | { outcome: 'completed'; response: StoredResponse }
  /** the key was used with another request */
  | { outcome: 'mismatch' }
  /** the key's first request is still running (or the key is contended right now) */
  | { outcome: 'running' }
  /** the key's first request made its change but its process died before storing the answer */
  | { outcome: 'lost' }

export interface ClaimRequest {
  appId: string
  /** the calling key's environment: a development and a production key never share a key's row */
  environment: Environment
  key: string
  /** SHA-256 of the request: the same key with another request is a mismatch */
  fingerprint: string
  /** how long a claim holds the key unless renewed */
  leaseMs: number
  /** how long a key is remembered; older rows count as absent */
  retentionMs: number
}

// A claim decides in a few statements; each lost race means another request just changed the row,
// and the next read sees it. Three rounds settle every case but a storm of releases, answered 409.
const CLAIM_ROUNDS = 3
const PURGE_BATCH = 500

/** The row of this claim while it is still running: every write its holder makes is guarded by it. */
function heldBy(claim: Claim) {
  return (eb: ExpressionBuilder<Database, 'idempotency_keys'>) =>
    eb.and([
      eb('app_id', '=', claim.appId),
      eb('environment', '=', claim.environment),
      eb('key', '=', claim.key),
      eb('created_at', '=', claim.createdAt),
      eb('status_code', 'is', null),
    ])
}

/**
 * Idempotency keys, per application and environment. Each statement runs on its own (a single-statement
 * transaction): a claim is one INSERT that either wins or meets the primary key, so it never holds
 * a lock while the request runs.
 */
export class IdempotencyKeysRepository {
  constructor(private readonly db: Db) {}

  private row({ appId, environment, key }: Pick<ClaimRequest, 'appId' | 'environment' | 'key'>) {
    return this.db.selectFrom('idempotency_keys').where('app_id', '=', appId).where('environment', '=', environment).where('key', '=', key)
  }

  /**
   * Claims the key for a request, or says what the key holds. A row older than the retention, or
   * a running claim whose lease lapsed (its process died), counts as absent and is taken over.
   */
  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const { appId, environment, key, fingerprint } = request
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      const now = Date.now()
      const fresh = {
        fingerprint,
        status_code: null,
        content_type: null,
        body: null,
        created_at: isoOf(now),
        lease_until: isoOf(now + request.leaseMs),
        committed_at: null,
      }
      const inserted = await this.db
        .insertInto('idempotency_keys')
        .values({ app_id: appId, environment, key, ...fresh })
        .onConflict((conflict) => conflict.columns(['app_id', 'environment', 'key']).doNothing())
        .executeTakeFirst()
      if (inserted.numInsertedOrUpdatedRows !== undefined && inserted.numInsertedOrUpdatedRows > 0n) {
        return { outcome: 'claimed', claim: { appId, environment, key, createdAt: fresh.created_at } }
      }
      const existing = await this.row(request).selectAll().executeTakeFirst()
      if (existing === undefined) continue // released between the two statements: insert again
      const expiredBefore = isoOf(now - request.retentionMs)
      const lapsed = existing.status_code === null && existing.lease_until < fresh.created_at
      if (existing.created_at >= expiredBefore && !(lapsed && existing.committed_at === null)) {
        if (existing.fingerprint !== fingerprint) return { outcome: 'mismatch' }
        // A lapsed claim whose change committed is never run again: running it twice is what the key prevents.
        if (existing.status_code === null) return { outcome: lapsed ? 'lost' : 'running' }
        return { outcome: 'completed', response: { statusCode: existing.status_code, contentType: existing.content_type, body: existing.body ?? '' } }
      }
      // Take it over only if it is still expired or lapsed: a concurrent takeover, renewal or
      // completion makes this match nothing, and the next round reads what it wrote.
      const takenOver = await this.db
        .updateTable('idempotency_keys')
        .set(fresh)
        .where('app_id', '=', appId)
        .where('environment', '=', environment)
        .where('key', '=', key)
        .where((eb) =>
          eb.or([
            eb('created_at', '<', expiredBefore),
            eb.and([eb('status_code', 'is', null), eb('committed_at', 'is', null), eb('lease_until', '<', fresh.created_at)]),
          ]),
        )
        .executeTakeFirst()
      if (takenOver.numUpdatedRows > 0n) return { outcome: 'claimed', claim: { appId, environment, key, createdAt: fresh.created_at } }
    }
    return { outcome: 'running' }
  }

  /** The claim's row, only while it is this claim's and still running. */
  private whileHeld(claim: Claim) {
    return this.db.updateTable('idempotency_keys').where(heldBy(claim))
  }

  /** Extends a running claim's lease; false if the claim is no longer this one. */
  async renew(claim: Claim, leaseMs: number): Promise<boolean> {
    const result = await this.whileHeld(claim)
      .set({ lease_until: isoOf(Date.now() + leaseMs) })
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /** Stores the claim's response; false if the claim was taken over meanwhile (nothing stored). */
  async complete(claim: Claim, response: StoredResponse): Promise<boolean> {
    const result = await this.whileHeld(claim)
      .set({ status_code: response.statusCode, content_type: response.contentType, body: response.body })
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /**
   * Records, in the transaction `tx` that carries the claim's change, that the change was made: if
   * the answer is then lost (the process dies first), the key is not run again.
   */
  async markCommitted(tx: Db, claim: Claim): Promise<void> {
    await tx
      .updateTable('idempotency_keys')
      .set({ committed_at: nowIso() })
      .where(heldBy(claim))
      .execute()
  }

  /**
   * Gives the key back (the request failed with a 5xx): the next request with it runs. Not once
   * its change committed: that claim stays, and lapses into "lost" rather than running twice.
   */
  async release(claim: Claim): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where(heldBy(claim)).where('committed_at', 'is', null).execute()
  }

  /**
   * Deletes the rows created before `expiredBefore`, in small batches so no statement holds
   * SQLite's write lock for long. Returns how many it deleted.
   */
  async purgeExpired(expiredBefore: string): Promise<number> {
    let purged = 0
    for (;;) {
      const result = await this.db
        .deleteFrom('idempotency_keys')
        .where((eb) =>
          eb(
            eb.refTuple('app_id', 'environment', 'key'),
            'in',
            eb
              .selectFrom('idempotency_keys')
              .select(['app_id', 'environment', 'key'])
              .where('created_at', '<', expiredBefore)
              .limit(PURGE_BATCH)
              .$asTuple('app_id', 'environment', 'key'),
          ),
        )
        .executeTakeFirst()
      const deleted = Number(result.numDeletedRows)
      purged += deleted
      if (deleted < PURGE_BATCH) return purged
    }
  }
}
