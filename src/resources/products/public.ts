import type { Db } from '../../db/database.js'
import type { ProductCurrency } from './price.js'
import { type ProductRow, ProductsRepository } from './repository.js'

/*
 * What other modules may use of products (the only file of this folder they import): the
 * currencies and prices of products, and the products an invoice or a payment link sells.
 */

export { formatPrice, PRODUCT_CURRENCY_DECIMALS, type ProductCurrency } from './price.js'
export type { ProductRow } from './repository.js'

/** The application's product, whatever its status, or undefined (another application's product is undefined). */
export function findProduct(db: Db, appId: string, productId: string): Promise<ProductRow | undefined> {
  return new ProductsRepository(db).find(appId, productId)
}

/** The application's ACTIVE products priced in `currency`, newest first, at most `take` of them. */
export async function activeProducts(db: Db, appId: string, currency: ProductCurrency, take: number): Promise<ProductRow[]> {
  return (await new ProductsRepository(db).list(appId, { status: 'ACTIVE', currency, take })).rows
}

/** Where uploaded images are kept and how an upload's type is decided: the application's logo (branding) is stored and checked as a product's image is. */
export { DirectoryImageStore, type ImageStore } from './image-store.js'
export { detectImageType, IMAGE_TYPES, type ImageType } from './image-type.js'
export { MAX_IMAGE_BYTES } from './form-upload.js'
