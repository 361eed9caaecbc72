import type { Transaction } from '../../events/transact.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { toPaymentLink } from './objects.js'
import { type PaymentLinkFields, PaymentLinksRepository } from './repository.js'
import type { PaymentLink } from './schemas.js'

/*
 * What other modules may use of payment links (the only file of this folder they import): making
 * a link (an invoice's) with its event.
 */

export type { PaymentLinkFields } from './repository.js'

/**
 * Makes the application's link in the transaction with its `payment_link.created` event, and
 * returns it as the API shows it (`publicUrl` makes checkout_url absolute; `now` decides expiry).
 * A slug the application already uses is a ConflictError.
 */
export async function createPaymentLink(tx: Transaction, appId: string, environment: LedgerEnvironment, fields: PaymentLinkFields, publicUrl: string, now: Date = new Date()): Promise<PaymentLink> {
  const created = toPaymentLink(await new PaymentLinksRepository(tx.db).create(appId, environment, fields), publicUrl, now)
  await tx.events.emit(appId, 'payment_link.created', created)
  return created
}
