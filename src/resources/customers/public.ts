import type { Db } from '../../db/database.js'
import { type CustomerRow, CustomersRepository } from './repository.js'

/*
 * What other modules may use of customers (the only file of this folder they import): the
 * example customer of the document, and whether a customer is the application's.
 */

export type { CustomerRow } from './repository.js'
export { CUSTOMER_EXAMPLE } from './schemas.js'

/** The application's customer, or undefined (another application's customer is undefined). */
export function findCustomer(db: Db, appId: string, customerId: string): Promise<CustomerRow | undefined> {
  return new CustomersRepository(db).find(appId, customerId)
}
