import { randomBytes } from 'node:crypto'
import type { Selectable } from 'kysely'
import type { Db } from '../../db/database.js'
import { newestFirstPage, type Page } from '../../db/newest-first-page.js'
import { type BoundQuery, PreparedQuery } from '../../db/prepared.js'
import { newId } from '../../db/time.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import type { ReceivingAddressesTable } from './tables.js'

export type ReceivingAddressRow = Selectable<ReceivingAddressesTable>

/** A sandbox receiving address: made up, as the sandbox's wallets' are. */
export function madeUpEvmAddress(): string {
  return `0x${randomBytes(20).toString('hex')}`
}

/** A liquidation address taking a receiving address (`take`). */
export interface ReceivingAddressClaim {
  environment: LedgerEnvironment
  appId: string
  chain: string
  currency: string
  address: string
  liquidationAddressId: string
}

/** `take`'s update, built once (PreparedQuery): every POST liquidation address runs it. */
const TAKE = new PreparedQuery<{ id: string }>(6, (db, liquidationAddressId, appId, environment, chain, currency, address) =>
  db
    .updateTable('receiving_addresses')
    .set({ liquidation_address_id: liquidationAddressId })
    .where('app_id', '=', appId)
    .where('environment', '=', environment)
    .where('chain', '=', chain)
    .where('currency', '=', currency)
    .where('address', '=', address)
    .where('liquidation_address_id', 'is', null)
    .returning('id'),
)

/** Receiving addresses of one application in one environment; every read starts from `owned`. */
export class ReceivingAddressesRepository {
  constructor(private readonly db: Db) {}

  private owned(db: Db, environment: LedgerEnvironment, appId: string) {
    return db.selectFrom('receiving_addresses').where('app_id', '=', appId).where('environment', '=', environment)
  }

  async create(input: { environment: LedgerEnvironment; appId: string; chain: string; currency: string; address: string; createdAt: string }): Promise<ReceivingAddressRow> {
    const row: ReceivingAddressRow = {
      id: newId(),
      app_id: input.appId,
      environment: input.environment,
      chain: input.chain,
      currency: input.currency,
      address: input.address.toLowerCase(),
      liquidation_address_id: null,
      created_at: input.createdAt,
    }
    await this.db.insertInto('receiving_addresses').values(row).execute()
    return row
  }

  find(environment: LedgerEnvironment, appId: string, id: string): Promise<ReceivingAddressRow | undefined> {
    return this.owned(this.db, environment, appId).selectAll().where('id', '=', id.toLowerCase()).executeTakeFirst()
  }

  list(environment: LedgerEnvironment, appId: string, page: Page): Promise<{ rows: ReceivingAddressRow[]; total: number }> {
    return newestFirstPage(this.db, (tx) => this.owned(tx, environment, appId), page)
  }

  /**
   * Gives the application's free receiving address to a liquidation address, as a statement to
   * send with others (`pipelined`): one row when it was one, none otherwise.
   */
  take(claim: ReceivingAddressClaim): BoundQuery<{ id: string }> {
    return TAKE.bind(this.db, claim.liquidationAddressId, claim.appId, claim.environment, claim.chain, claim.currency, claim.address.toLowerCase())
  }
}
