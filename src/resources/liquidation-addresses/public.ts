import type { Db } from '../../db/database.js'
import { nowIso } from '../../db/time.js'
import { type LiquidationAddressRow, LiquidationAddressesRepository } from './repository.js'

/*
 * What other modules may use of liquidation addresses (the only file of this folder they
 * import): the currencies and rails an address takes, and one address of a customer (a drain's).
 */

export type { LiquidationAddressRow } from './repository.js'
export { CURRENCIES, DESTINATION_CURRENCIES, PAYMENT_RAILS } from './schemas.js'

/** The application's liquidation address of any of its customers, or undefined: where a deposit seen on chain arrives. */
export function findApplicationLiquidationAddress(db: Db, appId: string, addressId: string): Promise<LiquidationAddressRow | undefined> {
  return db.selectFrom('liquidation_addresses').selectAll().where('app_id', '=', appId).where('id', '=', addressId.toLowerCase()).executeTakeFirst()
}

/** The customer's liquidation address, or undefined (another application's or another customer's address is undefined). */
export function findLiquidationAddress(db: Db, appId: string, customerId: string, addressId: string): Promise<LiquidationAddressRow | undefined> {
  return new LiquidationAddressesRepository(db).find(appId, customerId, addressId)
}

/**
 * Gives the application's address a return address where it has none (an operator refunding held
 * funds, src/resources/drains/): false when it already had one, which is never replaced.
 */
export async function setReturnAddress(db: Db, appId: string, addressId: string, returnAddress: string): Promise<boolean> {
  const result = await db
    .updateTable('liquidation_addresses')
    .set({ return_address: returnAddress, updated_at: nowIso() })
    .where('app_id', '=', appId)
    .where('id', '=', addressId.toLowerCase())
    .where('return_address', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}
