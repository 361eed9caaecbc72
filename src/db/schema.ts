/**
 * Table types for Kysely. Portable column choices: text ids (UUIDs), ISO 8601 text timestamps,
 * integer 0/1 booleans and JSON kept as text, so the same queries run on SQLite and PostgreSQL.
 */
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

export interface WebhooksTable {
  id: string
  app_id: string
  name: string
  url: string
  is_active: number
  encrypted: number
  signing_secret: string
  successful_deliveries: number
  failed_deliveries: number
  last_delivery: string | null
  created_at: string
  updated_at: string
  /** Set by DELETE; the row stays for audit and is invisible to the API from then on. */
  deleted_at: string | null
  /** the secret a rotation replaced: deliveries are signed with it too until `previous_secret_expires_at` */
  previous_signing_secret: string | null
  previous_secret_expires_at: string | null
  /** failed attempts since its last 2xx: from CIRCUIT_THRESHOLD on, its circuit is open (one attempt at a time) */
  consecutive_failures: number
  /** while its circuit is open: no attempt to it starts before this */
  circuit_retry_at: string | null
  /** the event types it receives, a JSON array of strings (each once, at least one); null: every type */
  event_types: string | null
}

/**
 * The events each webhook took (its delivery_stats.total_events is the sum of its rows). A write
 * adds to one of EVENT_COUNT_SLOTS rows per webhook (always slot 0 on SQLite), not to the webhook's
 * own row, so concurrent writes of one application do not take turns on their webhooks' rows.
 */
export interface WebhookEventCountsTable {
  webhook_id: string
  slot: number
  events: number
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

/** One change made through the API, as the envelope sent to webhooks. Kept for audit. */
export interface EventsTable {
  id: string
  app_id: string
  type: string
  /** the JSON envelope {"id","type","created_at","data"}, byte for byte what receivers get */
  payload: string
  created_at: string
  /** 1 while its deliveries are still to be written by a dispatcher (EventsRepository.fanOutPending) */
  fanout_pending: number
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'canceled'

/** One event for one webhook. Kept for audit, also after the webhook is deleted. */
export interface DeliveriesTable {
  id: string
  event_id: string
  webhook_id: string
  app_id: string
  status: DeliveryStatus
  /** attempts made so far */
  attempts: number
  /** pending: when the next attempt is due; while claimed, when the claim lapses */
  next_attempt_at: string
  /** set while a dispatcher holds the delivery; its outcome is written only under the same token */
  claim_token: string | null
  /** 1 when the owner asked for one more attempt (retry route): a failure then ends the delivery */
  resend: number
  created_at: string
  updated_at: string
}

export type AttemptOutcome = 'succeeded' | 'failed' | 'canceled'

export interface DeliveryAttemptsTable {
  id: string
  delivery_id: string
  webhook_id: string
  /** 1 for the first attempt */
  attempt: number
  started_at: string
  duration_ms: number
  outcome: AttemptOutcome
  status_code: number | null
  error: string | null
  /** the receiver's response body, first 20 KB */
  response_body: string | null
}

/**
 * An Idempotency-Key's first request and, once it answered, its response (replayed for 24 hours).
 * One row per (application, environment of the calling key, key).
 */
export interface IdempotencyKeysTable {
  app_id: string
  environment: 'production' | 'development'
  key: string
  /** SHA-256 of method, path and body: the same key with another request is refused */
  fingerprint: string
  /** null while the first request is running */
  status_code: number | null
  content_type: string | null
  body: string | null
  created_at: string
  /** a running request's claim lapses then (its process died), so the key can be used again */
  lease_until: string
  /**
   * Written inside the first request's own transaction (`transact`), so it commits with the
   * change: a claim whose change committed is never run again, even if its response was lost.
   */
  committed_at: string | null
}

/** A ledger account and its four sums kept beside its postings (src/ledger/ledger.ts); amounts are decimal integer text. */
export interface LedgerAccountsTable {
  id: string
  environment: string
  /** '' for the platform's own accounts */
  app_id: string
  kind: string
  currency: string
  reference: string
  may_go_negative: number
  debits_posted: string
  credits_posted: string
  debits_pending: string
  credits_pending: string
  /** credits_posted − debits_posted − debits_pending */
  available: string
  created_at: string
  updated_at: string
}

export interface LedgerEntriesTable {
  id: string
  environment: string
  app_id: string
  status: string
  /** what the entry belongs to: a drain, a transfer, a payment */
  reason_type: string
  reason_id: string
  created_at: string
  updated_at: string
}

export interface LedgerPostingsTable {
  id: string
  entry_id: string
  account_id: string
  direction: string
  amount: string
}

/** An application's wallet on one chain (src/resources/wallets/repository.ts). */
export interface WalletsTable {
  id: string
  environment: string
  app_id: string
  chain: string
  address: string
  created_at: string
  updated_at: string
}

/** An exchange rate an operator loaded (src/ledger/rates.ts); rates are decimal text. */
export interface ExchangeRatesTable {
  id: string
  environment: string
  from_currency: string
  to_currency: string
  midmarket_rate: string
  buy_rate: string
  sell_rate: string
  /** when the rate was true */
  as_of: string
  loaded_at: string
}

/** A deposit to a liquidation address and its forwarding (src/resources/drains/); amounts are integer text of the smallest unit. */
export interface DrainsTable {
  id: string
  environment: string
  app_id: string
  customer_id: string
  liquidation_address_id: string
  state: string
  amount: string
  currency: string
  deposit_tx_hash: string
  from_address: string | null
  source_payment_rail: string
  /** JSON: the destination as the address named it when the deposit arrived */
  destination: string
  developer_fee: string | null
  subtotal_amount: string | null
  exchange_rate: string | null
  converted_amount: string | null
  outgoing_amount: string | null
  destination_tx_hash: string | null
  refund_tx_hash: string | null
  return_reason: string | null
  /** the entry reserving the payout while it is in flight */
  pending_entry_id: string | null
  /** when the scheduler advances it; null once it has ended */
  next_step_at: string | null
  created_at: string
  updated_at: string
}

/**
 * A transfer or a payment intent (src/resources/transfers/): money into one of the application's
 * wallets, out of one, or between two currencies of one. Amounts are integer text of the smallest
 * unit of their currency; source, destination and deposit_instructions are JSON.
 */
export interface TransfersTable {
  id: string
  environment: string
  app_id: string
  /** direct_bank, direct_wallet, external_bank, external_stablecoin, stablecoin_conversion, payment_intent_bank, payment_intent_stablecoin */
  kind: string
  state: string
  /** the application's wallet it moves money into or out of */
  wallet_id: string | null
  /** the currency of amount and developer_fee (the source's) */
  currency: string
  /** null while a flexible amount has not arrived */
  amount: string | null
  developer_fee: string
  destination_currency: string
  source: string
  destination: string
  deposit_instructions: string | null
  customer: string | null
  exchange_rate: string | null
  converted_amount: string | null
  destination_tx_hash: string | null
  refund_tx_hash: string | null
  return_reason: string | null
  /** the entry reserving the movement while it is in flight */
  pending_entry_id: string | null
  /** when the scheduler advances it; null while it waits for funds or once it has ended */
  next_step_at: string | null
  created_at: string
  updated_at: string
}

/** A sandbox card payment and its refund, if it has one (src/resources/test-payments/). */
export interface TestPaymentsTable {
  /** pay_ and 24 hex digits */
  id: string
  app_id: string
  /** integer text of the currency's minor unit (cents) */
  amount: string
  /** USD or EUR */
  currency: string
  description: string
  customer_id: string | null
  /** the sandbox wallet credited (its USDC or EURC account) */
  wallet_id: string
  /** the posted entry that credited it */
  entry_id: string
  /** ref_ and 24 hex digits, once refunded */
  refund_id: string | null
  refund_entry_id: string | null
  refunded_at: string | null
  created_at: string
  updated_at: string
}

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

/** A payment link of an application (src/resources/payment-links/). */
export interface PaymentLinksTable {
  id: string
  app_id: string
  /** sandbox or live: the money its page takes, the environment of the key that created it */
  environment: string
  /** the link's url: lower-case letters, digits and hyphens, unique within the application */
  slug: string
  title: string
  description: string | null
  cover_image: string | null
  /** INVOICE, PRODUCT, COLLECTION or DONATION; never changes */
  link_type: string
  /** usdc or eurc */
  currency: string
  /** integer text of the currency's smallest unit; null when the payer chooses (or the products price it) */
  amount: string | null
  payment_for_id: string | null
  customer_id: string | null
  /** JSON: [{productId, quantity}] */
  products: string
  is_for_all_products: number
  allow_quantity_adjustment: number
  collect_tax: number
  tax_id: string | null
  collect_address: number
  allow_mobile_payment: number
  limit_payments: number
  max_payments: number | null
  payments_count: number
  /** JSON object */
  custom_fields: string | null
  expires_at: string | null
  created_at: string
  updated_at: string
}

/** An invoice of an application (src/resources/invoices/). */
export interface InvoicesTable {
  id: string
  app_id: string
  /** sandbox or live: the money its page takes, the environment of the key that created it */
  environment: string
  customer_id: string
  name: string
  email: string
  /** usdc or eurc */
  currency: string
  /** DRAFT, OPEN, PASTDUE, PAID or PARTIALLYPAID */
  status: string
  /** JSON: the lines in order, each {product_id, name, quantity, unit_price, amount}, amounts integer text of cents */
  lines: string
  /** integer text of cents, as are tax_amount, total and amount_paid */
  subtotal: string
  /** the tax applied, its name and its percentage (exact decimal text) as they were when applied; null without a tax */
  tax_id: string | null
  tax_name: string | null
  tax_percentage: string | null
  tax_amount: string
  total: string
  amount_paid: string
  due_date: string
  send_date: string | null
  delivery: string
  /** JSON array of payment method names */
  payment_methods: string
  payment_link: number
  /** the payment link made for it, once there is one */
  payment_link_id: string | null
  partial_payment: number
  address: string | null
  phone_number: string | null
  logo: string | null
  created_at: string
  updated_at: string
}

/** What a hosted checkout's payment intent pays (src/resources/checkout/). */
export interface CheckoutPaymentsTable {
  /** the payment intent (a row of transfers) */
  transfer_id: string
  app_id: string
  /** sandbox or live, the intent's */
  environment: string
  /** exactly one of invoice_id and payment_link_id is set */
  invoice_id: string | null
  payment_link_id: string | null
  /** usdc or eurc */
  currency: string
  /** integer text of the currency's smallest unit */
  amount: string
  email: string | null
  address: string | null
  /** JSON: the product lines a PRODUCT link's payer bought, [{product_id, name, quantity, unit_price}] */
  items: string | null
  /** awaiting_funds, then paid */
  state: string
  paid_at: string | null
  created_at: string
}

export interface Database {
  apps: AppsTable
  api_keys: ApiKeysTable
  webhooks: WebhooksTable
  webhook_event_counts: WebhookEventCountsTable
  customers: CustomersTable
  liquidation_addresses: LiquidationAddressesTable
  taxes: TaxesTable
  events: EventsTable
  deliveries: DeliveriesTable
  delivery_attempts: DeliveryAttemptsTable
  idempotency_keys: IdempotencyKeysTable
  ledger_accounts: LedgerAccountsTable
  ledger_entries: LedgerEntriesTable
  ledger_postings: LedgerPostingsTable
  wallets: WalletsTable
  exchange_rates: ExchangeRatesTable
  drains: DrainsTable
  transfers: TransfersTable
  products: ProductsTable
  invoices: InvoicesTable
  test_payments: TestPaymentsTable
  payment_links: PaymentLinksTable
  checkout_payments: CheckoutPaymentsTable
}
