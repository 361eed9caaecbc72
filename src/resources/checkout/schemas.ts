import { Type, type Static } from 'typebox'
import { Timestamp } from '../../schemas/common.js'
import { InvoiceSchema } from '../invoices/schemas.js'
import { PaymentLinkSchema } from '../payment-links/schemas.js'

/** One payment made through a hosted checkout page: what `invoice.paid` and `payment_link.paid` carry beside the object paid. */
export const CheckoutPaymentSchema = Type.Object({
  payment_intent_id: Type.String({ format: 'uuid', description: 'the stablecoin payment intent the payer paid (GET /payment-intents/{id})' }),
  amount: Type.String({ description: "what arrived, with all of the currency's 6 decimals", examples: ['21.770000'] }),
  currency: Type.Enum(['usdc', 'eurc']),
  email: Type.Union([Type.String(), Type.Null()], { description: "the payer's email, as given on the page" }),
  address: Type.Union([Type.String(), Type.Null()], { description: 'the address the payer gave, when the link collects one' }),
  items: Type.Array(
    Type.Object({
      product_id: Type.String({ format: 'uuid' }),
      name: Type.String(),
      quantity: Type.Integer(),
      unit_price: Type.String({ description: "the product's fiat price when the payer paid" }),
    }),
    { description: "a PRODUCT link's products as the payer bought them; empty otherwise" },
  ),
  paid_at: Timestamp,
})
export type CheckoutPayment = Static<typeof CheckoutPaymentSchema>

/** `invoice.paid`'s data: the invoice, now PAID, and the payment that paid it. */
export const InvoicePaidSchema = Type.Object({ ...InvoiceSchema.properties, payment: CheckoutPaymentSchema }, { $id: 'InvoicePaid' })
/** `payment_link.paid`'s data: the link, payments_count counted, and the payment. */
export const PaymentLinkPaidSchema = Type.Object({ ...PaymentLinkSchema.properties, payment: CheckoutPaymentSchema }, { $id: 'PaymentLinkPaid' })
