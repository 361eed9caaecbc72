import { Conflict, InvalidRequest } from '../../errors.js'
import { type Currency, formatAmount } from '../../ledger/amount.js'
import type { FundsArrived } from '../../events/domain-events.js'
import type { HookSettings } from '../../events/hooks.js'
import type { Transaction } from '../../events/transact.js'
import type { CheckoutPayment } from '../../schemas/checkout-payment.js'
import { formatCents, lockInvoice, recordInvoicePayment, UNITS_PER_CENT } from '../invoices/public.js'
import { countPaymentLinkPayment, findPaymentLink, toPaymentLink } from '../payment-links/public.js'
import { type CheckoutPaymentRow, CheckoutRepository, itemsOf } from './repository.js'

/** Why an invoice in this status takes no payment, or undefined when it takes one. */
export function invoiceClosedMessage(status: string): string | undefined {
  if (status === 'PAID') return 'This invoice is already paid'
  if (status === 'DRAFT') return 'This invoice is a draft: it can be paid once it is sent'
  return undefined
}

export function checkoutPaymentOf(row: CheckoutPaymentRow, paidAt: string): CheckoutPayment {
  return {
    payment_intent_id: row.transfer_id,
    amount: formatAmount(BigInt(row.amount), row.currency as Currency),
    currency: row.currency as CheckoutPayment['currency'],
    email: row.email,
    address: row.address,
    items: itemsOf(row),
    paid_at: paidAt,
  }
}

/** Why money of `paying` can't pay an object of `owed`'s environment, or undefined when they are the same money. */
export function mixedMoneyMessage(paying: string, owed: string, what: 'invoice' | 'payment link'): string | undefined {
  if (paying === owed) return undefined
  return `This payment is ${paying} money and the ${what} is ${owed}: sandbox money never pays live, nor live sandbox`
}

export const APPLICATION_DELETED = "This payment's application was deleted: what it pays is kept for audit and takes no payment"

/**
 * Settles what a checkout's payment intent pays, in the transaction its funds arrive in (checkout
 * subscribes to `transfer.funds_arrived`): the invoice's amount_paid and status, or the link's
 * payments_count, and their event. A transfer, or an intent no checkout made, is left alone. What
 * can no longer be paid (an invoice PAID since, a link that has had all its payments, an object of
 * the other environment, a deleted application's) is a 409 that rolls the arrival back: in the
 * sandbox the funds simply do not arrive. The link's checkout_url in its event starts with the
 * settings' publicUrl.
 */
export async function settleCheckoutPayment(tx: Transaction, arrived: FundsArrived, settings: HookSettings): Promise<void> {
  if (arrived.family !== 'payment_intent') return
  const received = arrived.amount
  const now = arrived.at
  const repository = new CheckoutRepository(tx.db)
  const payment = await repository.find(arrived.transferId)
  if (payment === undefined || payment.state !== 'awaiting_funds') return
  if ((await repository.findPayable(arrived.transferId)) === undefined) throw new Conflict(APPLICATION_DELETED)
  const paid = checkoutPaymentOf({ ...payment, amount: received.toString() }, now)
  if (payment.invoice_id !== null) {
    const invoice = await lockInvoice(tx.db, payment.app_id, payment.invoice_id)
    if (invoice === undefined) throw new Conflict('The invoice this payment is for no longer exists')
    const mixed = mixedMoneyMessage(payment.environment, invoice.environment, 'invoice')
    if (mixed !== undefined) throw new Conflict(mixed)
    const closed = invoiceClosedMessage(invoice.status)
    if (closed !== undefined) throw new Conflict(closed)
    if (received % UNITS_PER_CENT !== 0n) throw new InvalidRequest('An invoice is paid in whole cents')
    const cents = received / UNITS_PER_CENT
    const total = BigInt(invoice.total)
    const due = total - BigInt(invoice.amount_paid)
    if (cents > due) throw new Conflict(`This payment of ${formatCents(cents)} is more than the ${formatCents(due)} due on the invoice`)
    const amountPaid = BigInt(invoice.amount_paid) + cents
    const status = amountPaid === total ? 'PAID' : 'PARTIALLYPAID'
    const paidInvoice = await recordInvoicePayment(tx.db, payment.app_id, invoice.id, amountPaid, status, now, settings.publicUrl())
    await repository.markPaid(payment.transfer_id, now)
    if (status === 'PAID') await tx.events.emit(payment.app_id, 'invoice.paid', { ...paidInvoice, payment: paid })
    else await tx.events.emit(payment.app_id, 'invoice.updated', paidInvoice)
    return
  }
  const linkId = payment.payment_link_id
  if (linkId === null) return
  const link = await countPaymentLinkPayment(tx.db, payment.app_id, linkId, now)
  if (link === undefined) {
    const current = await findPaymentLink(tx.db, payment.app_id, linkId)
    if (current === undefined) throw new Conflict('The payment link this payment is for no longer exists')
    throw new Conflict(limitReached(current.max_payments ?? 0))
  }
  // Checked after the count, which the refusal rolls back: one statement less on every payment.
  const mixed = mixedMoneyMessage(payment.environment, link.environment, 'payment link')
  if (mixed !== undefined) throw new Conflict(mixed)
  await repository.markPaid(payment.transfer_id, now)
  await tx.events.emit(payment.app_id, 'payment_link.paid', { ...toPaymentLink(link, settings.publicUrl(), new Date(now)), payment: paid })
}

export function limitReached(maxPayments: number): string {
  return `This payment link has had its ${maxPayments === 1 ? 'one payment' : `${maxPayments} payments`}: it takes no more`
}
