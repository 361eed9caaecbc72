import type { Db } from '../db/database.js'
import { Conflict, InvalidRequest, NotFound } from '../errors.js'
import { type ApiKey, AppsRepository, type CreatedApiKey } from './repository.js'

/**
 * An application's keys as its owner manages them (the console's API-keys page), with the rules
 * `devplatform keys …` applies: rotate with a grace, expire, re-scope; only an active key of the
 * owner's application changes. Another application's key is NotFound, as if it were not there.
 */

export type { ApiKey, CreatedApiKey }

/** A rotation keeps the old secret working this long unless told otherwise (as a webhook's signing secret). */
export const DEFAULT_GRACE_SECONDS = 86_400
/** At most 7 days, as Stripe's longest expiry of a rolled key: an old secret is not a second key. */
export const MAX_GRACE_SECONDS = 604_800

const KEY_NOT_FOUND = 'Key not found'

/** Every key of the application, deactivated ones included, oldest first; never a secret. */
export async function keysOfApp(db: Db, appId: string): Promise<ApiKey[]> {
  return new AppsRepository(db).listKeys(appId)
}

async function ownedActiveKey(apps: AppsRepository, appId: string, keyId: string): Promise<ApiKey> {
  const key = await apps.findKey(keyId)
  if (key === undefined || key.app_id !== appId) throw new NotFound(KEY_NOT_FOUND)
  if (!key.active) throw new Conflict('The key is deactivated: a deactivated key cannot be changed')
  return key
}

const changedMeanwhile = () => new Conflict('The key was deactivated meanwhile; nothing was changed')

/** A new secret for the application's active key; the old one keeps working for `graceSeconds` (0: stops at once). */
export async function rotateKey(db: Db, appId: string, keyId: string, graceSeconds: number): Promise<CreatedApiKey> {
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_GRACE_SECONDS) {
    throw new InvalidRequest(`The grace must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS} (7 days)`)
  }
  const apps = new AppsRepository(db)
  const key = await ownedActiveKey(apps, appId, keyId)
  const changed = await apps.rotateSecret(key.id, graceSeconds * 1000)
  if (changed === undefined) throw changedMeanwhile()
  return changed
}

/** When the application's active key stops working (null: never). */
export async function expireKey(db: Db, appId: string, keyId: string, expiresAt: string | null): Promise<ApiKey> {
  const apps = new AppsRepository(db)
  const key = await ownedActiveKey(apps, appId, keyId)
  const changed = await apps.setExpiry(key.id, expiresAt)
  if (changed === undefined) throw changedMeanwhile()
  return changed
}

/** Replaces the application's active key's scopes with `scopes`, each one of `known`, at least one. */
export async function rescopeKey(db: Db, appId: string, keyId: string, scopes: readonly string[], known: readonly string[]): Promise<ApiKey> {
  const unknown = scopes.filter((scope) => !known.includes(scope))
  if (scopes.length === 0) throw new InvalidRequest('A key needs at least one scope')
  if (unknown.length > 0) throw new InvalidRequest(`Unknown scope ${unknown.join(', ')}`)
  const apps = new AppsRepository(db)
  const key = await ownedActiveKey(apps, appId, keyId)
  const changed = await apps.setScopes(key.id, [...new Set(scopes)])
  if (changed === undefined) throw changedMeanwhile()
  return changed
}
