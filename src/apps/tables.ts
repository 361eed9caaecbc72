import type { TableDeclaration } from '../modules/module.js'

export interface AppsTable {
  id: string
  name: string
  created_at: string
  /** set by `devplatform apps delete`: its data is gone, its money and audit records stay */
  deleted_at: string | null
}

export interface ApiKeysTable {
  id: string
  app_id: string
  client_key: string
  /** SHA-256 of the client secret, hex. The secret itself is never stored. */
  secret_digest: string
  environment: 'production' | 'development'
  /** JSON array of scope names */
  scopes: string
  rate_limit_per_hour: number | null
  active: number
  created_at: string
  deactivated_at: string | null
  /** SHA-256 of the secret a rotation replaced, accepted until `previous_secret_expires_at` */
  previous_secret_digest: string | null
  previous_secret_expires_at: string | null
  /** the key is refused from then on; null: never */
  expires_at: string | null
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../db/schema.js' {
  interface Database {
    apps: AppsTable
    api_keys: ApiKeysTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const appsTables: readonly TableDeclaration[] = [
  { name: 'apps', appDeletion: 'kept', reason: 'marked deleted, so what is kept still names its owner' },
  { name: 'api_keys', appDeletion: 'removed' },
]
