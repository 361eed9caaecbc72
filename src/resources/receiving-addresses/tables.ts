import type { TableDeclaration } from '../../modules/module.js'

/**
 * An address the platform receives on, allocated for a liquidation address the application has
 * not created yet (docs/chains.md): live, a derived address of the chains module; sandbox, a made-up one.
 */
export interface ReceivingAddressesTable {
  id: string
  app_id: string
  environment: string
  chain: string
  currency: string
  /** lower-case 0x hex */
  address: string
  /** the liquidation address that took it; null until one does */
  liquidation_address_id: string | null
  created_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    receiving_addresses: ReceivingAddressesTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const receivingAddressesTables: readonly TableDeclaration[] = [{ name: 'receiving_addresses', appDeletion: 'removed' }]
