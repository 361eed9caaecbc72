import type { Selectable } from 'kysely'
import type { Db } from '../../db/database.js'
import { nowIso } from '../../db/time.js'
import type { AppBrandingTable } from './tables.js'

export type BrandingRow = Selectable<AppBrandingTable>

/** The fields a change sets: null clears one (back to its default), undefined leaves it. */
export interface BrandingChanges {
  display_name?: string | null | undefined
  brand_color?: string | null | undefined
  support_email?: string | null | undefined
  logo_image_id?: string | null | undefined
  logo_type?: string | null | undefined
}

export class BrandingRepository {
  constructor(private readonly db: Db) {}

  async find(appId: string): Promise<BrandingRow | undefined> {
    return this.db.selectFrom('app_branding').selectAll().where('app_id', '=', appId).executeTakeFirst()
  }

  async findByLogo(imageId: string): Promise<BrandingRow | undefined> {
    return this.db.selectFrom('app_branding').selectAll().where('logo_image_id', '=', imageId).executeTakeFirst()
  }

  /** Sets the fields `changes` names, making the row when the application has none yet; the row as it is now. */
  async change(appId: string, changes: BrandingChanges): Promise<BrandingRow> {
    const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<BrandingRow>
    const updated_at = nowIso()
    const current = await this.find(appId)
    if (current === undefined) {
      const row: BrandingRow = { app_id: appId, display_name: null, brand_color: null, support_email: null, logo_image_id: null, logo_type: null, ...defined, updated_at }
      await this.db.insertInto('app_branding').values(row).execute()
      return row
    }
    await this.db.updateTable('app_branding').set({ ...defined, updated_at }).where('app_id', '=', appId).execute()
    return { ...current, ...defined, updated_at }
  }
}
