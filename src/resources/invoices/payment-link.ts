import type { LedgerEnvironment } from '../../ledger/ledger.js'
import type { Transaction } from '../../events/transact.js'
import { createPaymentLink, type PaymentLinkFields } from '../payment-links/public.js'
import { UNITS_PER_CENT } from './money.js'
import { type InvoiceRow, InvoicesRepository } from './repository.js'

/** The slug of an invoice's payment link: one per invoice, never another link's (slugs are the application's). */
export function invoiceLinkSlug(invoiceId: string): string {
  return `invoice-${invoiceId}`
}

/**
 * Gives an invoice sent with `payment_link: true` its payment link, once: an INVOICE link for
 * its total whose page pays the invoice (src/resources/checkout/), made in the invoice's
 * transaction with its `payment_link.created` event. Returns the invoice as it now is.
 */
export async function attachPaymentLink(tx: Transaction, invoice: InvoiceRow, publicUrl: string): Promise<InvoiceRow> {
  if (invoice.payment_link === 0 || invoice.payment_link_id !== null) return invoice
  // The invoice's money, whichever key turned the link on: the link pays the invoice.
  const fields: PaymentLinkFields = {
    slug: invoiceLinkSlug(invoice.id),
    title: invoice.name,
    description: null,
    coverImage: null,
    linkType: 'INVOICE',
    currency: invoice.currency,
    amount: BigInt(invoice.total) * UNITS_PER_CENT,
    paymentForId: invoice.id,
    customerId: invoice.customer_id,
    products: [],
    isForAllProducts: false,
    allowQuantityAdjustment: false,
    collectTax: false,
    taxId: null,
    collectAddress: false,
    allowMobilePayment: false,
    limitPayments: false,
    maxPayments: null,
    customFields: null,
    expiresAt: null,
  }
  const link = await createPaymentLink(tx, invoice.app_id, invoice.environment as LedgerEnvironment, fields, publicUrl)
  return new InvoicesRepository(tx.db).setPaymentLink(invoice, link.id)
}
