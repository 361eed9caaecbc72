import type { Db } from '../../db/database.js'
import { toInvoice } from './objects.js'
import { type InvoiceRow, InvoicesRepository } from './repository.js'
import type { Invoice } from './schemas.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'

/*
 * What other modules may use of invoices (the only file of this folder they import): the cents
 * and percentages invoices count in, an invoice's lines and tax, and the reads and the payment a
 * hosted checkout page makes of an invoice.
 */

export { exactPercent, formatCents, parsePercentText, percentText, taxOn, UNITS_PER_CENT } from './money.js'
export { type InvoiceRow, linesOf, taxOf } from './repository.js'

/** The invoice a checkout page's address names, unless its application is deleted, or undefined. */
export function findPayableInvoice(db: Db, id: string): Promise<InvoiceRow | undefined> {
  return new InvoicesRepository(db).findPayable(id)
}

/** The application's invoice, or undefined (another application's invoice is undefined). */
export function findInvoice(db: Db, appId: string, id: string): Promise<InvoiceRow | undefined> {
  return new InvoicesRepository(db).find(appId, id)
}

/** The application's invoice, held until the transaction ends so a payment is judged on its status and amount due; undefined when there is none. */
export function lockInvoice(db: Db, appId: string, id: string): Promise<InvoiceRow | undefined> {
  return new InvoicesRepository(db).lock(appId, id)
}

/** Records a payment of the invoice (its amount_paid, in cents, and status) and returns the invoice as the API shows it now. */
export async function recordInvoicePayment(db: Db, appId: string, id: string, amountPaid: bigint, status: 'PAID' | 'PARTIALLYPAID', now: string, publicUrl: string): Promise<Invoice> {
  return toInvoice(await new InvoicesRepository(db).setPaid(appId, id, amountPaid, status, now), publicUrl)
}

/** The console's list: the application's newest invoices in the environment, as the API shows them. */
export async function recentInvoices(db: Db, appId: string, environment: LedgerEnvironment, take: number, publicUrl: string): Promise<Invoice[]> {
  return (await new InvoicesRepository(db).recent(appId, environment, take)).map((row) => toInvoice(row, publicUrl))
}
