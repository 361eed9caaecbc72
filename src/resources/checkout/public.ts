import type { Db } from '../../db/database.js'
import { type CheckoutPaymentRow, CheckoutRepository } from './repository.js'

/*
 * What other modules may use of checkout (the only file of this folder they import): the pages'
 * HTML template, which escapes every interpolated value; the console's read of
 * which payment intents the hosted pages started.
 */
export { escapeHtml, Html, html } from './html.js'
export type { CheckoutPaymentRow } from './repository.js'

/** The checkout payments among the application's payment intents `transferIds`. */
export function checkoutPaymentsAmong(db: Db, appId: string, transferIds: readonly string[]): Promise<CheckoutPaymentRow[]> {
  return new CheckoutRepository(db).among(appId, transferIds)
}
