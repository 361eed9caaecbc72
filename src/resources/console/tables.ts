import type { TableDeclaration } from '../../modules/module.js'

/** A single-use link that opens a console session; its token is kept only as a digest. */
export interface ConsoleLinksTable {
  id: string
  app_id: string
  /** sha256 of the link's token, hex */
  token_digest: string
  /** viewer | admin */
  role: string
  created_at: string
  expires_at: string
  /** when it was opened; null: not yet */
  used_at: string | null
}

/** A signed-in console session; its cookie's value is kept only as a digest. */
export interface ConsoleSessionsTable {
  id: string
  app_id: string
  /** sha256 of the cookie's value, hex */
  session_digest: string
  /** the synchronizer token every form of the session carries */
  csrf_token: string
  role: string
  created_at: string
  expires_at: string
  /** signed out; null: not */
  ended_at: string | null
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    console_links: ConsoleLinksTable
    console_sessions: ConsoleSessionsTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each: a deleted application's sessions end with their rows. */
export const consoleTables: readonly TableDeclaration[] = [
  { name: 'console_links', appDeletion: 'removed' },
  { name: 'console_sessions', appDeletion: 'removed' },
]
