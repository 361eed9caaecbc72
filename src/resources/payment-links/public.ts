import type { Db } from '../../db/database.js'
import type { Transaction } from '../../events/transact.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { toPaymentLink } from './objects.js'
import { type PaymentLinkFields, type PaymentLinkRow, PaymentLinksRepository } from './repository.js'
import type { PaymentLink } from './schemas.js'

/*
 * What other modules may use of payment links (the only file of this folder they import): making
 * a link (an invoice's) with its event; a link's currencies, products and quantities; the reads
 * and the payment count a hosted checkout page makes of a link, and the link as the API shows it.
 */

export { type PaymentLinkFields, type PaymentLinkRow, productLinesOf } from './repository.js'
export { FIAT_OF } from './rules.js'
export { type LinkCurrency, MAX_QUANTITY } from './schemas.js'
export { toPaymentLink } from './objects.js'

/**
 * Makes the application's link in the transaction with its `payment_link.created` event, and
 * returns it as the API shows it (`publicUrl` makes checkout_url absolute; `now` decides expiry).
 * A slug the application already uses is a Conflict.
 */
export async function createPaymentLink(tx: Transaction, appId: string, environment: LedgerEnvironment, fields: PaymentLinkFields, publicUrl: string, now: Date = new Date()): Promise<PaymentLink> {
  const created = toPaymentLink(await new PaymentLinksRepository(tx.db).create(appId, environment, fields), publicUrl, now)
  await tx.events.emit(appId, 'payment_link.created', created)
  return created
}

/** The application's link, or undefined (another application's link is undefined). */
export function findPaymentLink(db: Db, appId: string, id: string): Promise<PaymentLinkRow | undefined> {
  return new PaymentLinksRepository(db).find(appId, id)
}

/** The link a checkout page's address names (a slug is unique within its application), or undefined. */
export function findPaymentLinkBySlug(db: Db, appId: string, slug: string): Promise<PaymentLinkRow | undefined> {
  return new PaymentLinksRepository(db).findBySlug(appId, slug)
}

/**
 * Counts one payment of the link and returns it as it now is; undefined, counting nothing, when
 * the link is limited and has had all its payments (or is not the application's).
 */
export function countPaymentLinkPayment(db: Db, appId: string, id: string, now: string): Promise<PaymentLinkRow | undefined> {
  return new PaymentLinksRepository(db).countPayment(appId, id, now)
}

/** The console's list: the application's newest links in the environment, as the API shows them. */
export async function recentPaymentLinks(db: Db, appId: string, environment: LedgerEnvironment, take: number, publicUrl: string): Promise<PaymentLink[]> {
  const now = new Date()
  return (await new PaymentLinksRepository(db).recent(appId, environment, take)).map((row) => toPaymentLink(row, publicUrl, now))
}
