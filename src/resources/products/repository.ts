import type { Selectable, Updateable } from 'kysely'
import { backendOf, type Db } from '../../db/database.js'
import { newestFirstPage } from '../../db/newest-first-page.js'
import { containsIgnoringCase } from '../../db/like.js'
import type { ProductsTable } from './tables.js'
import { newId, nowIso } from '../../db/time.js'

export type ProductRow = Selectable<ProductsTable>

/** An image whose bytes the ImageStore holds under its id. */
export interface UploadedImage {
  id: string
  type: string
  size: number
}

/** An image the caller named by its URL: stored as given, never fetched. */
export interface LinkedImage {
  url: string
}

export type ProductImage = UploadedImage | LinkedImage

export function isUploaded(image: ProductImage): image is UploadedImage {
  return 'id' in image
}

/** A product's images, from its row. */
export function imagesOf(row: Pick<ProductRow, 'images'>): ProductImage[] {
  const images: unknown = JSON.parse(row.images)
  return images as ProductImage[]
}

/** A new product, its price already in minor units. */
export interface NewProduct {
  name: string
  description: string | null
  /** integer of the currency's minor unit */
  price: bigint
  currency: string
  type: string | null
  productType: string | null
  weight: number | null
  unit: string | null
  quantity: number | null
  stockCount: number | null
  status: string
  images: readonly ProductImage[]
}

/** The fields an update sets; the ones left undefined stay as they are. */
export type ProductChanges = Partial<NewProduct>

/** What list filters on, and the page it returns. */
export interface ProductFilter {
  /** partial, case-insensitive */
  name?: string | undefined
  status?: string | undefined
  currency?: string | undefined
  skip?: number | undefined
  take?: number | undefined
}

function ownedProducts(db: Db, appId: string) {
  return db.selectFrom('products').where('app_id', '=', appId)
}

/** Products of one application; every query but the public image read starts from `owned`. */
export class ProductsRepository {
  constructor(private readonly db: Db) {}

  private owned(appId: string, db: Db = this.db) {
    return ownedProducts(db, appId)
  }

  async create(appId: string, input: NewProduct): Promise<ProductRow> {
    const now = nowIso()
    const row: ProductRow = {
      id: newId(),
      app_id: appId,
      name: input.name,
      description: input.description,
      price: input.price.toString(),
      currency: input.currency,
      type: input.type,
      product_type: input.productType,
      weight: input.weight,
      unit: input.unit,
      quantity: input.quantity,
      stock_count: input.stockCount,
      status: input.status,
      images: JSON.stringify(input.images),
      created_at: now,
      updated_at: now,
    }
    await this.db.insertInto('products').values(row).execute()
    return row
  }

  /** A page and the total, read on one snapshot so they agree even while others write. */
  async list(appId: string, query: ProductFilter): Promise<{ rows: ProductRow[]; total: number }> {
    return newestFirstPage(this.db, (tx) => {
      let filtered = this.owned(appId, tx)
      if (query.status !== undefined) filtered = filtered.where('status', '=', query.status)
      if (query.currency !== undefined) filtered = filtered.where('currency', '=', query.currency)
      if (query.name !== undefined) {
        const name = query.name
        filtered = filtered.where((eb) => containsIgnoringCase(eb.ref('name'), name))
      }
      return filtered
    }, { skip: query.skip ?? 0, take: query.take ?? 10 })
  }

  async find(appId: string, id: string): Promise<ProductRow | undefined> {
    return this.owned(appId).selectAll().where('id', '=', id.toLowerCase()).executeTakeFirst()
  }

  /**
   * The product, held until the transaction ends (PostgreSQL: FOR UPDATE; SQLite's write
   * transactions run one at a time), so a change read from it (the images it keeps, the count
   * an upload appends to) is not lost to another change of the same product meanwhile.
   */
  async lock(appId: string, id: string): Promise<ProductRow | undefined> {
    let query = this.owned(appId).selectAll().where('id', '=', id.toLowerCase())
    if (backendOf(this.db) === 'postgres') query = query.forUpdate()
    return query.executeTakeFirst()
  }

  async update(appId: string, id: string, patch: ProductChanges): Promise<ProductRow | undefined> {
    const changes: Updateable<ProductsTable> = {}
    if (patch.name !== undefined) changes.name = patch.name
    if (patch.description !== undefined) changes.description = patch.description
    if (patch.price !== undefined) changes.price = patch.price.toString()
    if (patch.currency !== undefined) changes.currency = patch.currency
    if (patch.type !== undefined) changes.type = patch.type
    if (patch.productType !== undefined) changes.product_type = patch.productType
    if (patch.weight !== undefined) changes.weight = patch.weight
    if (patch.unit !== undefined) changes.unit = patch.unit
    if (patch.quantity !== undefined) changes.quantity = patch.quantity
    if (patch.stockCount !== undefined) changes.stock_count = patch.stockCount
    if (patch.status !== undefined) changes.status = patch.status
    if (patch.images !== undefined) changes.images = JSON.stringify(patch.images)
    // An update that names no field changes nothing, not even updated_at.
    if (Object.keys(changes).length === 0) return this.find(appId, id)
    return this.db
      .updateTable('products')
      .set({ ...changes, updated_at: nowIso() })
      .where('app_id', '=', appId)
      .where('id', '=', id.toLowerCase())
      .returningAll()
      .executeTakeFirst()
  }

  /** Permanent: the row is removed; returns it as it was (its images are the caller's to remove). */
  async delete(appId: string, id: string): Promise<ProductRow | undefined> {
    return this.db.deleteFrom('products').where('app_id', '=', appId).where('id', '=', id.toLowerCase()).returningAll().executeTakeFirst()
  }

  /** A product's images by its id alone, for the public image route (an image id is unguessable). */
  async imagesOfProduct(id: string): Promise<ProductImage[] | undefined> {
    const row = await this.db.selectFrom('products').select('images').where('id', '=', id.toLowerCase()).executeTakeFirst()
    return row === undefined ? undefined : imagesOf(row)
  }
}
