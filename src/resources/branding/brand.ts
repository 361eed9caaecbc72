import type { Db } from '../../db/database.js'
import { BrandingRepository, type BrandingRow } from './repository.js'

/** What a payer sees of the merchant: every field has a value, its default when the application set none. */
export interface Brand {
  display_name: string
  /** `#rrggbb` */
  brand_color: string
  /** the colour of text on brand_color: white or near-black, whichever reads (WCAG contrast ≥ 4.5) */
  on_brand_color: string
  support_email: string | null
  /** the logo's path on this server, or null: the page shows the name's initial instead */
  logo_path: string | null
}

/** A deep blue that white text reads on (contrast 8.6): what a page shows until the merchant picks a colour. */
export const DEFAULT_BRAND_COLOR = '#1d4ed8'
export const BRAND_COLOR = /^#[0-9a-fA-F]{6}$/
export const MAX_DISPLAY_NAME = 80
export const LOGO_PATH_PREFIX = '/brand-logos/'

function luminance(color: string): number {
  const channel = (offset: number): number => {
    const value = Number.parseInt(color.slice(offset, offset + 2), 16) / 255
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
}

/** White text unless near-black reads better on the colour. */
export function textColorOn(color: string): string {
  const background = luminance(color)
  const onWhite = 1.05 / (background + 0.05)
  const onDark = (background + 0.05) / (luminance('#111111') + 0.05)
  return onWhite >= onDark ? '#ffffff' : '#111111'
}

export function brandOf(appName: string, row: BrandingRow | undefined): Brand {
  const color = (row?.brand_color ?? DEFAULT_BRAND_COLOR).toLowerCase()
  return {
    display_name: row?.display_name ?? appName,
    brand_color: color,
    on_brand_color: textColorOn(color),
    support_email: row?.support_email ?? null,
    logo_path: row?.logo_image_id === null || row?.logo_image_id === undefined ? null : `${LOGO_PATH_PREFIX}${row.logo_image_id}`,
  }
}

/** The application's brand as its pages show it. */
export async function findBrand(db: Db, appId: string): Promise<Brand> {
  const app = await db.selectFrom('apps').select('name').where('id', '=', appId).executeTakeFirst()
  return brandOf(app?.name ?? 'Merchant', await new BrandingRepository(db).find(appId))
}
