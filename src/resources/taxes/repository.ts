import type { Selectable, Updateable } from 'kysely'
import type { Db } from '../../db/database.js'
import { containsIgnoringCase } from '../../db/like.js'
import type { TaxesTable } from './tables.js'
import { newId, nowIso } from '../../db/time.js'

export type TaxRow = Selectable<TaxesTable>

/** A new tax, as create reads it (the route's validated body is one). */
export interface NewTax {
  name: string
  percentage: number
  description?: string | undefined
  /** true unless false */
  active?: boolean | undefined
  appIds?: readonly string[] | undefined
}

/** The fields an update sets; the ones left undefined stay as they are. */
export interface TaxChanges {
  name?: string | undefined
  percentage?: number | undefined
  description?: string | undefined
  active?: boolean | undefined
  appIds?: readonly string[] | undefined
}

/** What list filters on, and the page it returns. */
export interface TaxFilter {
  /** partial, case-insensitive */
  name?: string | undefined
  active?: boolean | undefined
  skip?: number | undefined
  take?: number | undefined
}

/** Taxes of one application; every query starts from `owned` / `ownedOne`. */
export class TaxesRepository {
  constructor(private readonly db: Db) {}

  private owned(appId: string) {
    return this.db.selectFrom('taxes').selectAll().where('app_id', '=', appId)
  }

  async create(appId: string, input: NewTax): Promise<TaxRow> {
    const now = nowIso()
    const row: TaxRow = {
      id: newId(),
      app_id: appId,
      name: input.name,
      description: input.description ?? null,
      percentage: input.percentage,
      active: input.active === false ? 0 : 1,
      app_ids: JSON.stringify(input.appIds ?? []),
      created_at: now,
      updated_at: now,
    }
    await this.db.insertInto('taxes').values(row).execute()
    return row
  }

  async list(appId: string, query: TaxFilter): Promise<TaxRow[]> {
    let filtered = this.owned(appId)
    if (query.active !== undefined) filtered = filtered.where('active', '=', query.active ? 1 : 0)
    if (query.name !== undefined) {
      const name = query.name
      filtered = filtered.where((eb) => containsIgnoringCase(eb.ref('name'), name))
    }
    return filtered
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(query.take ?? 10)
      .offset(query.skip ?? 0)
      .execute()
  }

  async find(appId: string, id: string): Promise<TaxRow | undefined> {
    return this.owned(appId).where('id', '=', id.toLowerCase()).executeTakeFirst()
  }

  async update(appId: string, id: string, patch: TaxChanges): Promise<TaxRow | undefined> {
    const changes: Updateable<TaxesTable> = {}
    if (patch.name !== undefined) changes.name = patch.name
    if (patch.description !== undefined) changes.description = patch.description
    if (patch.percentage !== undefined) changes.percentage = patch.percentage
    if (patch.active !== undefined) changes.active = patch.active ? 1 : 0
    if (patch.appIds !== undefined) changes.app_ids = JSON.stringify(patch.appIds)
    // An update that names no field changes nothing, not even updated_at.
    if (Object.keys(changes).length === 0) return this.find(appId, id)
    return this.db
      .updateTable('taxes')
      .set({ ...changes, updated_at: nowIso() })
      .where('app_id', '=', appId)
      .where('id', '=', id.toLowerCase())
      .returningAll()
      .executeTakeFirst()
  }

  /** Permanent: the row is removed; returns it as it was. */
  async delete(appId: string, id: string): Promise<TaxRow | undefined> {
    return this.db.deleteFrom('taxes').where('app_id', '=', appId).where('id', '=', id.toLowerCase()).returningAll().executeTakeFirst()
  }
}
