import { randomBytes } from 'node:crypto'
import type { Db } from '../../db/database.js'
import { isoOf, newId } from '../../db/time.js'
import { InvalidRequest } from '../../errors.js'
import { digestSecret, secretMatches } from '../../keys/credentials.js'
import { ConsoleRepository } from './repository.js'

/**
 * Console links and sessions (docs/console.md#signing-in): a link is a single-use token, kept only
 * as its digest, that opens one session; a session is a cookie, kept only as its digest, with a
 * synchronizer token its forms carry, for SESSION_SECONDS at most.
 */

export const CONSOLE_ROLES = ['viewer', 'admin'] as const
export type ConsoleRole = (typeof CONSOLE_ROLES)[number]
export const DEFAULT_ROLE: ConsoleRole = 'viewer'

export const DEFAULT_LINK_TTL_SECONDS = 15 * 60
export const MIN_LINK_TTL_SECONDS = 60
export const MAX_LINK_TTL_SECONDS = 24 * 60 * 60
/** A session ends this long after its link was opened, whatever is done in it. */
export const SESSION_SECONDS = 8 * 60 * 60
/** Where the console is served: its pages, its cookie's path. */
export const CONSOLE_PREFIX = '/console'

export function isRole(value: string): value is ConsoleRole {
  return (CONSOLE_ROLES as readonly string[]).includes(value)
}

const TTL = /^(\d{1,6})([smh]?)$/
const UNIT_SECONDS: Readonly<Record<string, number>> = { '': 1, s: 1, m: 60, h: 3600 }

/** A link's lifetime from `90s`, `15m`, `1h` or plain seconds; InvalidRequest outside 1 minute to 24 hours. */
export function ttlSecondsOf(text: string): number {
  const match = TTL.exec(text.trim())
  const seconds = match === null ? Number.NaN : Number(match[1]) * (UNIT_SECONDS[match[2] ?? ''] ?? Number.NaN)
  if (!(seconds >= MIN_LINK_TTL_SECONDS && seconds <= MAX_LINK_TTL_SECONDS)) {
    throw new InvalidRequest(`ttl must be from 1 minute to 24 hours, as seconds or with a unit (90s, 15m, 1h) (got ${text})`)
  }
  return seconds
}

function token(): string {
  return randomBytes(32).toString('base64url')
}

export interface CreatedLink {
  url: string
  role: ConsoleRole
  expires_at: string
}

/** A new link to the application's console; its token is in the url only, stored as its digest. */
export async function createConsoleLink(db: Db, input: { appId: string; role: ConsoleRole; ttlSeconds: number; publicUrl: string }): Promise<CreatedLink> {
  const secret = token()
  const now = Date.now()
  const expiresAt = isoOf(now + input.ttlSeconds * 1000)
  await new ConsoleRepository(db).insertLink({ id: newId(), app_id: input.appId, token_digest: digestSecret(secret), role: input.role, created_at: isoOf(now), expires_at: expiresAt, used_at: null })
  return { url: `${input.publicUrl}${CONSOLE_PREFIX}/open/${secret}`, role: input.role, expires_at: expiresAt }
}

export interface Session {
  id: string
  appId: string
  role: ConsoleRole
  csrfToken: string
  expiresAt: string
}

export type Opened = { outcome: 'opened'; session: Session; cookie: string } | { outcome: 'used' | 'expired' | 'unknown' }

const TOKEN = /^[A-Za-z0-9_-]{43}$/

/**
 * Opens a link: once, before it expires, while its application can still sign in. Two opens at
 * once: one session (the link is taken by one UPDATE).
 */
export async function openConsoleLink(db: Db, presented: string): Promise<Opened> {
  const repository = new ConsoleRepository(db)
  const link = TOKEN.test(presented) ? await repository.findLink(digestSecret(presented)) : undefined
  // Found by its digest; compared again in constant time, as a key's secret is.
  if (link === undefined || !secretMatches(presented, link.token_digest) || !isRole(link.role)) return { outcome: 'unknown' }
  const now = Date.now()
  const nowText = isoOf(now)
  if (link.used_at !== null) return { outcome: 'used' }
  if (link.expires_at <= nowText || !(await repository.appStillOpen(link.app_id, nowText))) return { outcome: 'expired' }
  if (!(await repository.takeLink(link.id, nowText))) return (await repository.findLink(link.token_digest))?.used_at === null ? { outcome: 'expired' } : { outcome: 'used' }
  const cookie = token()
  const session: Session = { id: newId(), appId: link.app_id, role: link.role, csrfToken: token(), expiresAt: isoOf(now + SESSION_SECONDS * 1000) }
  await repository.insertSession({ id: session.id, app_id: session.appId, session_digest: digestSecret(cookie), csrf_token: session.csrfToken, role: session.role, created_at: nowText, expires_at: session.expiresAt, ended_at: null })
  return { outcome: 'opened', session, cookie }
}

/**
 * The session of a cookie's value: not signed out, not past its end, and its application not
 * deleted and with a key that works (deactivating every key ends its sessions).
 */
export async function sessionOf(db: Db, cookie: string | undefined): Promise<Session | undefined> {
  if (cookie === undefined || !TOKEN.test(cookie)) return undefined
  const repository = new ConsoleRepository(db)
  const row = await repository.findSession(digestSecret(cookie))
  const now = isoOf(Date.now())
  if (row === undefined || !secretMatches(cookie, row.session_digest) || row.ended_at !== null || row.expires_at <= now || !isRole(row.role)) return undefined
  if (!(await repository.appStillOpen(row.app_id, now))) return undefined
  return { id: row.id, appId: row.app_id, role: row.role, csrfToken: row.csrf_token, expiresAt: row.expires_at }
}

/** Whether a form's token is its session's, compared in constant time. */
export function csrfMatches(session: Session, presented: string | undefined): boolean {
  return presented !== undefined && secretMatches(presented, digestSecret(session.csrfToken))
}

export async function endSession(db: Db, session: Session): Promise<void> {
  await new ConsoleRepository(db).endSession(session.id, isoOf(Date.now()))
}
