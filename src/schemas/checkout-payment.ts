import { Type, type Static } from 'typebox'
import { Timestamp } from './common.js'

/**
 * One payment made through a hosted checkout page: what `invoice.paid` and `payment_link.paid`
 * carry beside the object paid. Here, not in checkout/, because the invoices' and the payment
 * links' event schemas include it and checkout builds on them, never they on checkout.
 */
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
