import { randomUUID } from 'node:crypto'
import type { Db } from '../../db/database.js'
import { InvalidRequest } from '../../errors.js'
import { detectImageType, type ImageStore, MAX_IMAGE_BYTES } from '../products/public.js'
import { BRAND_COLOR, MAX_DISPLAY_NAME } from './brand.js'
import { type BrandingChanges, BrandingRepository, type BrandingRow } from './repository.js'

/** A change as the API's body or the CLI's flags give it: null (or an empty string) clears a field. */
export interface BrandingInput {
  display_name?: string | null | undefined
  brand_color?: string | null | undefined
  support_email?: string | null | undefined
  /** a logo stored by storeLogo, or null to remove the logo */
  logo?: { key: string; type: string } | null | undefined
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

function cleared(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value
  const trimmed = value.trim()
  return trimmed === '' ? null : trimmed
}

/** The change to make, or an InvalidRequest naming the field that is wrong. */
export function checkedBrandingChanges(input: BrandingInput): BrandingChanges {
  const display_name = cleared(input.display_name)
  if (typeof display_name === 'string' && display_name.length > MAX_DISPLAY_NAME) throw new InvalidRequest(`display_name must be at most ${MAX_DISPLAY_NAME} characters`)
  const brand_color = cleared(input.brand_color)
  if (typeof brand_color === 'string' && !BRAND_COLOR.test(brand_color)) throw new InvalidRequest('brand_color must be a colour as #rrggbb, like #1d4ed8')
  const support_email = cleared(input.support_email)
  if (typeof support_email === 'string' && (support_email.length > 254 || !EMAIL.test(support_email))) throw new InvalidRequest('support_email must be an email address, like support@example.com')
  return { display_name, brand_color: brand_color?.toLowerCase() ?? brand_color, support_email }
}

/** Makes the change; the row as it is now, and the key of the logo it replaced (whose file the caller removes), or null. */
export async function changeBranding(db: Db, appId: string, input: BrandingInput): Promise<{ row: BrandingRow; replacedLogo: string | null }> {
  const changes = checkedBrandingChanges(input)
  const repository = new BrandingRepository(db)
  const before = (await repository.find(appId))?.logo_image_id ?? null
  const logo = input.logo === undefined ? {} : { logo_image_id: input.logo?.key ?? null, logo_type: input.logo?.type ?? null }
  const row = await repository.change(appId, { ...changes, ...logo })
  return { row, replacedLogo: before !== null && before !== row.logo_image_id ? before : null }
}

/**
 * Stores `bytes` as the application's logo, checked as a product's image is (JPEG, PNG or WebP by
 * its first bytes, whatever it is called or declared as; at most 5 MB): its key in the store and its type.
 */
export async function storeLogo(store: ImageStore, bytes: Buffer): Promise<{ key: string; type: string }> {
  if (bytes.length === 0) throw new InvalidRequest('No logo was sent: send the image file (JPEG, PNG or WebP) as the body')
  if (bytes.length > MAX_IMAGE_BYTES) throw new InvalidRequest(`The logo is larger than 5 MB (${MAX_IMAGE_BYTES} bytes), the most an image may be`)
  const type = detectImageType(bytes.subarray(0, 12))
  if (type === undefined) throw new InvalidRequest('The logo is not a JPEG, PNG or WebP image (its first bytes say so, whatever its name or Content-Type)')
  const key = randomUUID()
  const writer = await store.create(key)
  try {
    await writer.write(bytes)
    await writer.finish()
  } catch (error) {
    await writer.abort()
    throw error
  }
  return { key, type }
}
