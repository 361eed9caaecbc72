import type { TableDeclaration } from '../../modules/module.js'

/** A product of an application (src/resources/products/). */
export interface ProductsTable {
  id: string
  app_id: string
  name: string
  description: string | null
  /** decimal text of an integer of the currency's minor unit */
  price: string
  currency: string
  type: string | null
  product_type: string | null
  weight: number | null
  unit: string | null
  quantity: number | null
  stock_count: number | null
  status: string
  /** JSON: the images in order, each an uploaded image ({id, type, size}: its bytes in the ImageStore) or a URL ({url}) */
  images: string
  created_at: string
  updated_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    products: ProductsTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const productsTables: readonly TableDeclaration[] = [{ name: 'products', appDeletion: 'removed' }]
