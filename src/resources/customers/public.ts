import type { Db } from '../../db/database.js'
import type { BoundQuery } from '../../db/prepared.js'
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

/** `findCustomer` as a statement, to send with others (`pipelined`): one row when the customer is the application's. */
export function customerLookup(db: Db, appId: string, customerId: string): BoundQuery<CustomerRow> {
  return new CustomersRepository(db).lookup(appId, customerId)
}

/** The console's list: the application's newest customers (a customer belongs to both environments) and how many there are. */
export function recentCustomers(db: Db, appId: string, take: number): Promise<{ rows: CustomerRow[]; total: number }> {
  return new CustomersRepository(db).list(appId, { take })
}
