import type { Selectable } from 'kysely'
import { addressKey, type Chain } from '../../validation/chain-address.js'
import type { Db } from '../../db/database.js'
import { Conflict } from '../../errors.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { LiquidationAddressesTable } from './tables.js'
import { newId, nowIso } from '../../db/time.js'
import { type BoundQuery, type Outcome, pipelinedOutcomes, PreparedInsert } from '../../db/prepared.js'

export type LiquidationAddressRow = Selectable<LiquidationAddressesTable>

/** A new liquidation address, as create reads it (the route's validated body is one). */
export interface NewLiquidationAddress {
  chain: Chain
  currency: string
  address: string
  external_account_id?: string | undefined
  prefunded_account_id?: string | undefined
  bridge_wallet_id?: string | undefined
  /** 'ach' when undefined */
  destination_payment_rail?: string | undefined
  /** 'usd' when undefined */
  destination_currency?: string | undefined
  destination_wire_message?: string | undefined
  destination_sepa_reference?: string | undefined
  destination_ach_reference?: string | undefined
  destination_address?: string | undefined
  destination_blockchain_memo?: string | undefined
  return_address?: string | undefined
  custom_developer_fee_percent?: string | undefined
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

  /**
   * A new liquidation address of a customer, and its insert, to send with the customer's lookup
   * (`pipelined`): the caller answers 404 when the lookup found no customer of the application,
   * whatever the insert did, and hands the insert's outcome to `inserted`.
   */
  creation(appId: string, customerId: string, input: NewLiquidationAddress): { row: LiquidationAddressRow; insert: BoundQuery<never> } {
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
    return { row, insert: INSERT_ADDRESS.bind(this.db, row) }
  }

  /** Creates it for a customer the caller has already checked; 409 when (chain, address) is taken anywhere. */
  async create(appId: string, customerId: string, input: NewLiquidationAddress): Promise<LiquidationAddressRow> {
    const { row, insert } = this.creation(appId, customerId, input)
    const [outcome] = await pipelinedOutcomes(this.db, insert)
    LiquidationAddressesRepository.inserted(outcome)
    return row
  }

  /** The insert's outcome: 409 when (chain, address) is taken anywhere; any other failure as it is. */
  static inserted(outcome: Outcome<never>): void {
    if (outcome.ok) return
    if (isUniqueViolation(outcome.error)) throw new Conflict('Liquidation address already exists')
    throw outcome.error
  }

  async list(appId: string, customerId: string): Promise<LiquidationAddressRow[]> {
    return this.owned(appId, customerId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
  }

  async find(appId: string, customerId: string, id: string): Promise<LiquidationAddressRow | undefined> {
    return this.owned(appId, customerId).where('id', '=', id.toLowerCase()).executeTakeFirst()
  }
}
