import type { TableDeclaration } from '../../modules/module.js'

export interface TaxesTable {
  id: string
  app_id: string
  name: string
  description: string | null
  percentage: number
  active: number
  /** JSON array of strings */
  app_ids: string
  created_at: string
  updated_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    taxes: TaxesTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const taxesTables: readonly TableDeclaration[] = [{ name: 'taxes', appDeletion: 'removed' }]
