import type { TableDeclaration } from '../../modules/module.js'

/** An application's wallet on one chain (src/resources/wallets/repository.ts). */
export interface WalletsTable {
  id: string
  environment: string
  app_id: string
  chain: string
  /** null: a live wallet whose chain is off (no receiving address given yet) */
  address: string | null
  created_at: string
  updated_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    wallets: WalletsTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const walletsTables: readonly TableDeclaration[] = [{ name: 'wallets', appDeletion: 'kept', reason: 'money records: the owners of wallet accounts' }]
