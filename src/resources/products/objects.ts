import { formatPrice, type ProductCurrency } from './price.js'
import { imagesOf, isUploaded, type ProductRow } from './repository.js'
import type { Product } from './schemas.js'

/** The path an uploaded image is served at (the public image route). */
export function imagePath(productId: string, imageId: string): string {
  return `/api/v0/products/${productId}/images/${imageId}`
}

/**
 * The API's product object from its row: kept out of the repository, which knows no API schema.
 * `publicUrl` (Platform.publicUrl) makes uploaded images' URLs absolute.
 */
export function toProduct(row: ProductRow, publicUrl: string): Product {
  const currency = row.currency as ProductCurrency
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    price: formatPrice(BigInt(row.price), currency),
    currency,
    type: row.type,
    productType: row.product_type,
    weight: row.weight,
    unit: row.unit,
    quantity: row.quantity,
    stockCount: row.stock_count,
    status: row.status as Product['status'],
    images: imagesOf(row).map((image) => (isUploaded(image) ? `${publicUrl}${imagePath(row.id, image.id)}` : image.url)),
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}
