import type { Db } from '../../db/database.js'
import type { Recent } from '../../db/newest-first-page.js'
import { type TestPaymentRow, TestPaymentsRepository } from './repository.js'

/*
 * What other modules may use of test payments (the only file of this folder they import): the
 * console's reads of an application's test payments (sandbox money only).
 */

export type { TestPaymentRow } from './repository.js'

/** The application's newest test payments; `state` is `succeeded` or `refunded`. */
export function recentTestPayments(db: Db, appId: string, recent: Recent): Promise<TestPaymentRow[]> {
  return new TestPaymentsRepository(db).recent(appId, recent)
}

/** One of the application's test payments, or undefined. */
export function findTestPayment(db: Db, appId: string, id: string): Promise<TestPaymentRow | undefined> {
  return new TestPaymentsRepository(db).find(appId, id)
}
