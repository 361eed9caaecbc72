import { formatAmount } from '../../ledger/amount.js'
import type { TestPaymentRow } from './repository.js'
import type { PaymentCurrency, PaymentResponse, RefundResponse } from './schemas.js'

/**
 * The amount as the JSON number the published client declares. Exact: at most 2 decimals and at
 * most MAX_PAYMENT_UNITS whole units are well within what a double holds digit for digit.
 */
function amountNumber(row: TestPaymentRow): number {
  return Number(formatAmount(BigInt(row.amount), row.currency === 'EUR' ? 'eur' : 'usd'))
}

export function toPayment(row: TestPaymentRow): PaymentResponse {
  return {
    id: row.id,
    amount: amountNumber(row),
    currency: row.currency as PaymentCurrency,
    status: 'succeeded',
    timestamp: row.created_at,
    description: row.description,
    customerId: row.customer_id,
    refunded: row.refund_id !== null,
    refundId: row.refund_id,
    // A test payment is made with a development key only: sandbox money.
    livemode: false,
  }
}

/** The payment's refund; the row must have one. */
export function toRefund(row: TestPaymentRow): RefundResponse {
  return {
    id: row.refund_id ?? '',
    paymentId: row.id,
    amount: amountNumber(row),
    currency: row.currency as PaymentCurrency,
    status: 'succeeded',
    timestamp: row.refunded_at ?? '',
    livemode: false,
  }
}
