import type { Selectable } from 'kysely'
import type { CreateLiquidationAddressBody, LiquidationAddress } from './schemas.js'
import { addressKey } from '../../validation/chain-address.js'
import type { Db } from '../../db/database.js'
import { ConflictError, isUniqueViolation } from '../../db/errors.js'
import type { LiquidationAddressesTable } from '../../db/schema.js'
import { newId, nowIso } from '../../db/time.js'
import { PreparedInsert } from '../../db/prepared.js'

export type LiquidationAddressRow = Selectable<LiquidationAddressesTable>

/** The contract's response object: request-only fields are stored but never returned. */
export function toLiquidationAddress(row: LiquidationAddressRow): LiquidationAddress {
  const out: LiquidationAddress = {
    id: row.id,
    state: row.state as LiquidationAddress['state'],
    customer_id: row.customer_id,
    chain: row.chain as LiquidationAddress['chain'],
    currency: row.currency as LiquidationAddress['currency'],
    address: row.address,
    created_at: row.created_at,
    updated_at: row.updated_at,
    destination_payment_rail: row.destination_payment_rail as LiquidationAddress['destination_payment_rail'],
    destination_currency: row.destination_currency as LiquidationAddress['destination_currency'],
  }
  if (row.external_account_id !== null) out.external_account_id = row.external_account_id
  if (row.prefunded_account_id !== null) out.prefunded_account_id = row.prefunded_account_id
  if (row.bridge_wallet_id !== null) out.bridge_wallet_id = row.bridge_wallet_id
  if (row.custom_developer_fee_percent !== null) out.custom_developer_fee_percent = row.custom_developer_fee_percent
  return out
}

const INSERT_ADDRESS = new PreparedInsert('liquidation_addresses')

/** Liquidation addresses of one application's customers; every query starts from `owned`. */
export class LiquidationAddressesRepository {
  constructor(private readonly db: Db) {}

  private owned(appId: string, customerId: string) {
    return this.db
      .selectFrom('liquidation_addresses')
      .selectAll()
      .where('app_id', '=', appId)
      .where('customer_id', '=', customerId.toLowerCase())
  }

  /** Creates it for a customer the caller has already checked; 409 when (chain, address) is taken anywhere. */
  async create(appId: string, customerId: string, input: CreateLiquidationAddressBody): Promise<LiquidationAddressRow> {
    const now = nowIso()
    const row: LiquidationAddressRow = {
      id: newId(),
      app_id: appId,
      customer_id: customerId.toLowerCase(),
      state: 'active',
      chain: input.chain,
      currency: input.currency,
      address: input.address,
      address_key: addressKey(input.chain, input.address),
      external_account_id: input.external_account_id ?? null,
      prefunded_account_id: input.prefunded_account_id ?? null,
      bridge_wallet_id: input.bridge_wallet_id ?? null,
      destination_payment_rail: input.destination_payment_rail ?? 'ach',
      destination_currency: input.destination_currency ?? 'usd',
      destination_wire_message: input.destination_wire_message ?? null,
      destination_sepa_reference: input.destination_sepa_reference ?? null,
      destination_ach_reference: input.destination_ach_reference ?? null,
      destination_address: input.destination_address ?? null,
      destination_blockchain_memo: input.destination_blockchain_memo ?? null,
      return_address: input.return_address ?? null,
      custom_developer_fee_percent: input.custom_developer_fee_percent ?? null,
      created_at: now,
      updated_at: now,
    }
    try {
      await INSERT_ADDRESS.execute(this.db, row)
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError('Liquidation address already exists')
      throw error
    }
    return row
  }

  async list(appId: string, customerId: string): Promise<LiquidationAddressRow[]> {
    return this.owned(appId, customerId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
  }

  async find(appId: string, customerId: string, id: string): Promise<LiquidationAddressRow | undefined> {
    return this.owned(appId, customerId).where('id', '=', id.toLowerCase()).executeTakeFirst()
  }
}
