import { Type, type Static } from 'typebox'
import { Livemode, Timestamp } from '../../schemas/common.js'
import { CUSTOMER_EXAMPLE } from '../customers/public.js'

/** The currencies a test payment is made in; each credits the stablecoin of the same money (USD → USDC, EUR → EURC). */
export const PAYMENT_CURRENCIES = ['USD', 'EUR'] as const
export type PaymentCurrency = (typeof PAYMENT_CURRENCIES)[number]

/** The largest test payment, in whole units of its currency. */
export const MAX_PAYMENT_UNITS = 1_000_000n

/** The payment the docs page shows: what the body example makes (no customer), before its refund (REFUND_EXAMPLE). */
const PAYMENT_EXAMPLE = {
  id: 'pay_3f9c2a7d81e04b6c9a5d2e10',
  amount: 100.5,
  currency: 'USD',
  status: 'succeeded',
  timestamp: '2026-11-21T19:05:13.000Z',
  description: 'Order #1042',
  customerId: null,
  refunded: false,
  refundId: null,
  livemode: false,
}

const REFUND_EXAMPLE = {
  id: 'ref_8b1e6c0f3a2d4e5f6a7b8c9d',
  paymentId: PAYMENT_EXAMPLE.id,
  amount: 100.5,
  currency: 'USD',
  status: 'succeeded',
  timestamp: '2026-11-21T19:07:42.000Z',
  livemode: false,
}

const currency = Type.Enum([...PAYMENT_CURRENCIES], { description: 'upper case, as the payment was made in' })

/** The published client's PaymentResponseDto (id, amount, currency, status, timestamp) and what else a payment is. */
export const PaymentResponseSchema = Type.Object(
  {
    id: Type.String({ pattern: '^pay_[0-9a-f]{24}$', examples: [PAYMENT_EXAMPLE.id] }),
    amount: Type.Number({ description: 'in the currency, with at most its 2 decimals (a JSON number, as the published client declares it)', examples: [PAYMENT_EXAMPLE.amount] }),
    currency,
    status: Type.Enum(['succeeded'], { description: 'a test payment succeeds at once; a refund does not change it (see refunded)' }),
    timestamp: { ...Timestamp, description: 'when the payment was made' },
    description: Type.String({ examples: [PAYMENT_EXAMPLE.description] }),
    customerId: Type.Union([Type.String(), Type.Null()], { description: "the application's customer the payment is from, or null", examples: [CUSTOMER_EXAMPLE.id] }),
    refunded: Type.Boolean({ examples: [PAYMENT_EXAMPLE.refunded] }),
    refundId: Type.Union([Type.String(), Type.Null()], { description: "the refund's id once refunded, else null", examples: [REFUND_EXAMPLE.id] }),
    livemode: { ...Livemode, description: 'always false: a test payment is sandbox money' },
  },
  { $id: 'PaymentResponse', examples: [PAYMENT_EXAMPLE] },
)
export type PaymentResponse = Static<typeof PaymentResponseSchema>

/** The published client's RefundResponseDto, and the currency. */
export const RefundResponseSchema = Type.Object(
  {
    id: Type.String({ pattern: '^ref_[0-9a-f]{24}$', examples: [REFUND_EXAMPLE.id] }),
    paymentId: Type.String({ examples: [REFUND_EXAMPLE.paymentId] }),
    amount: Type.Number({ description: "the payment's whole amount: a refund is always full", examples: [REFUND_EXAMPLE.amount] }),
    currency,
    status: Type.Enum(['succeeded']),
    timestamp: { ...Timestamp, description: 'when the payment was refunded' },
    livemode: { ...Livemode, description: 'always false: a test payment is sandbox money' },
  },
  { $id: 'RefundResponse', examples: [REFUND_EXAMPLE] },
)
export type RefundResponse = Static<typeof RefundResponseSchema>

const AMOUNT_MESSAGE = 'amount must be a decimal number such as 100.50'

/** The published client's PaymentRequestDto. */
export const PaymentRequestBody = Type.Object(
  {
    // A JSON number is read as the decimal it was written as; text keeps every digit.
    amount: Type.Union([Type.Number({ 'x-message': AMOUNT_MESSAGE }), Type.String({ maxLength: 40, 'x-message': AMOUNT_MESSAGE })], {
      'x-message': AMOUNT_MESSAGE,
      description: `greater than 0, at most ${MAX_PAYMENT_UNITS}.00, with at most 2 decimals; a JSON number or a decimal string`,
      examples: [100.5],
    }),
    currency: Type.String({ maxLength: 16, description: 'USD or EUR, in any case', examples: ['USD'] }),
    description: Type.String({ minLength: 1, maxLength: 500, 'x-free-text': true, examples: ['Order #1042'] }),
    customerId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: "one of the application's customers; null or absent for none", examples: [CUSTOMER_EXAMPLE.id] })),
  },
  // Without a customer, so the body is accepted as it is (a customer id names one of the caller's customers).
  { additionalProperties: false, examples: [{ amount: PAYMENT_EXAMPLE.amount, currency: PAYMENT_EXAMPLE.currency, description: PAYMENT_EXAMPLE.description }] },
)
export type PaymentRequestBody = Static<typeof PaymentRequestBody>

export const TestPaymentParams = Type.Object({ id: Type.String({ minLength: 1, description: 'the payment id (pay_…); the platform answers 414 for a path parameter over 100 characters' }) })
