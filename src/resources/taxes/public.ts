import type { Db } from '../../db/database.js'
import { type TaxRow, TaxesRepository } from './repository.js'

/** What other modules may use of taxes (the only file of this folder they import): the tax an invoice or a payment link applies. */

export type { TaxRow } from './repository.js'

/** The application's tax, active or not, or undefined (another application's tax is undefined). */
export function findTax(db: Db, appId: string, taxId: string): Promise<TaxRow | undefined> {
  return new TaxesRepository(db).find(appId, taxId)
}
