/**
 * Table types for Kysely. Portable column choices: text ids (UUIDs), ISO 8601 text timestamps,
 * integer 0/1 booleans and JSON kept as text, so the same queries run on SQLite and PostgreSQL.
 */
export interface AppsTable {
  id: string
  name: string
  created_at: string
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
}

export interface WebhooksTable {
  id: string
  app_id: string
  name: string
  url: string
  is_active: number
  encrypted: number
  signing_secret: string
  total_events: number
  successful_deliveries: number
  failed_deliveries: number
  last_delivery: string | null
  created_at: string
  updated_at: string
  /** Set by DELETE; the row stays for audit and is invisible to the API from then on. */
  deleted_at: string | null
}

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

export interface LiquidationAddressesTable {
  id: string
  app_id: string
  customer_id: string
  state: string
  chain: string
  currency: string
  address: string
  /** canonical address (EVM lower-cased): the service-wide uniqueness key with chain */
  address_key: string
  external_account_id: string | null
  prefunded_account_id: string | null
  bridge_wallet_id: string | null
  destination_payment_rail: string
  destination_currency: string
  destination_wire_message: string | null
  destination_sepa_reference: string | null
  destination_ach_reference: string | null
  destination_address: string | null
  destination_blockchain_memo: string | null
  return_address: string | null
  custom_developer_fee_percent: string | null
  created_at: string
  updated_at: string
}

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

export interface Database {
  apps: AppsTable
  api_keys: ApiKeysTable
  webhooks: WebhooksTable
  customers: CustomersTable
  liquidation_addresses: LiquidationAddressesTable
  taxes: TaxesTable
}
