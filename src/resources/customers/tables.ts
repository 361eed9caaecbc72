import type { TableDeclaration } from '../../modules/module.js'

export interface CustomersTable {
  id: string
  app_id: string
  first_name: string
  last_name: string
  phone_number: string
  email: string | null
  /** lower-cased email: the per-application uniqueness key */
  email_key: string | null
  customer_type: string | null
  status: string
  created_at: string
  updated_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    customers: CustomersTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const customersTables: readonly TableDeclaration[] = [{ name: 'customers', appDeletion: 'removed' }]
