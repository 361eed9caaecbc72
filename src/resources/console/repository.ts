import type { Db } from '../../db/database.js'
import type { ConsoleLinksTable, ConsoleSessionsTable } from './tables.js'

/** The console's links and sessions: database only. */
export class ConsoleRepository {
  constructor(private readonly db: Db) {}

  async insertLink(row: ConsoleLinksTable): Promise<void> {
    await this.db.insertInto('console_links').values(row).execute()
  }

  async findLink(tokenDigest: string): Promise<ConsoleLinksTable | undefined> {
    return this.db.selectFrom('console_links').selectAll().where('token_digest', '=', tokenDigest).executeTakeFirst()
  }

  /** Marks the link used if it still is unused and unexpired: true for the one caller that did. */
  async takeLink(id: string, now: string): Promise<boolean> {
    const taken = await this.db.updateTable('console_links').set({ used_at: now }).where('id', '=', id).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst()
    return Number(taken.numUpdatedRows) === 1
  }

  async insertSession(row: ConsoleSessionsTable): Promise<void> {
    await this.db.insertInto('console_sessions').values(row).execute()
  }

  async findSession(sessionDigest: string): Promise<ConsoleSessionsTable | undefined> {
    return this.db.selectFrom('console_sessions').selectAll().where('session_digest', '=', sessionDigest).executeTakeFirst()
  }

  async endSession(id: string, now: string): Promise<void> {
    await this.db.updateTable('console_sessions').set({ ended_at: now }).where('id', '=', id).where('ended_at', 'is', null).execute()
  }

  /** Whether the application exists, is not deleted and has a key that works now: what keeps its sessions open. */
  async appStillOpen(appId: string, now: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('apps', 'apps.id', 'api_keys.app_id')
      .select('api_keys.id')
      .where('api_keys.app_id', '=', appId)
      .where('apps.deleted_at', 'is', null)
      .where('api_keys.active', '=', 1)
      .where((eb) => eb.or([eb('api_keys.expires_at', 'is', null), eb('api_keys.expires_at', '>', now)]))
      .limit(1)
      .executeTakeFirst()
    return row !== undefined
  }
}
