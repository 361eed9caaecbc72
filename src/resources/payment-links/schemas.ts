import { Type, type Static, type TSchema } from 'typebox'
import { CheckoutPaymentSchema } from '../../schemas/checkout-payment.js'
import { Livemode, Pagination, Timestamp, UuidParam } from '../../schemas/common.js'

export const LINK_TYPES = ['INVOICE', 'PRODUCT', 'COLLECTION', 'DONATION'] as const
export type LinkType = (typeof LINK_TYPES)[number]
export const LINK_CURRENCIES = ['usdc', 'eurc'] as const
export type LinkCurrency = (typeof LINK_CURRENCIES)[number]

/** Most product lines one link may have. */
export const MAX_LINK_PRODUCTS = 100
/** Largest quantity of one product line, and largest maxPayments (a 32-bit integer column on PostgreSQL). */
export const MAX_QUANTITY = 10_000
export const MAX_PAYMENTS = 2_147_483_647
/** customFields: at most this many keys, and this many bytes as JSON. */
export const MAX_CUSTOM_FIELDS = 50
export const MAX_CUSTOM_FIELDS_BYTES = 8192
/** Longest url (slug or full URL) and cover image URL accepted. */
export const MAX_URL_LENGTH = 2048

const linkType = Type.Enum([...LINK_TYPES])
const currency = Type.Enum([...LINK_CURRENCIES])

const ProductLineSchema = Type.Object({ productId: Type.String({ format: 'uuid' }), quantity: Type.Integer() })

export const PaymentLinkSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    title: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    url: Type.String({ description: "the link's slug: unique within the application", examples: ['summer-sale'] }),
    checkout_url: Type.String({ description: 'where a payer opens the link: the hosted checkout page, PUBLIC_URL/pay/{application id}/{slug}' }),
    coverImage: Type.Union([Type.String(), Type.Null()]),
    linkType,
    currency,
    amount: Type.Union([Type.String({ description: 'decimal with all of the currency’s 6 decimals', examples: ['25.000000'] }), Type.Null()], {
      description: 'null when the payer chooses the amount (COLLECTION, DONATION) or the products price it (PRODUCT)',
    }),
    paymentForId: Type.Union([Type.String(), Type.Null()]),
    customerId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    paymentLinkProducts: Type.Array(ProductLineSchema),
    isForAllProduct: Type.Boolean(),
    allowQuantityAdjustment: Type.Boolean(),
    collectTax: Type.Boolean(),
    taxId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    collectAddress: Type.Boolean(),
    allowMobilePayment: Type.Boolean(),
    limitPayments: Type.Boolean(),
    maxPayments: Type.Union([Type.Integer(), Type.Null()]),
    payments_count: Type.Integer({ description: 'completed payments through the link' }),
    livemode: Livemode,
    customFields: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    status: Type.Enum(['active', 'expired'], { description: 'expired once expiration_date has passed' }),
    expiration_date: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'PaymentLink' },
)
export type PaymentLink = Static<typeof PaymentLinkSchema>

/** `payment_link.paid`'s data: the link, payments_count counted, and the payment. */
export const PaymentLinkPaidSchema = Type.Object({ ...PaymentLinkSchema.properties, payment: CheckoutPaymentSchema }, { $id: 'PaymentLinkPaid' })

const AMOUNT_MESSAGE = 'amount must be a decimal amount such as 25.50'

const fields = {
  title: Type.String({ minLength: 1, maxLength: 255 }),
  url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'a slug (3-64 lower-case letters, digits and hyphens) or an http(s) URL whose last path segment is one', examples: ['summer-sale'] }),
  // Markdown: tab and line breaks allowed.
  description: Type.String({ maxLength: 5000, 'x-free-text': true }),
  coverImage: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'an http or https URL' }),
  linkType,
  // A JSON number is read as the decimal it was written as; text keeps every digit.
  amount: Type.Union([Type.Number({ 'x-message': AMOUNT_MESSAGE }), Type.String({ maxLength: 40, 'x-message': AMOUNT_MESSAGE })], {
    'x-message': AMOUNT_MESSAGE,
    description: 'greater than 0, at most 6 decimals',
    examples: ['25.50'],
  }),
  paymentForId: Type.String({ minLength: 1, maxLength: 255, examples: ['sub_123456789'] }),
  customerId: Type.String({ format: 'uuid', 'x-message': 'customerId must be a customer id (UUID)' }),
  paymentLinkProducts: Type.Array(
    Type.Object(
      {
        productId: Type.String({ format: 'uuid', 'x-message': 'paymentLinkProducts[].productId must be a product id (UUID)' }),
        quantity: Type.Integer({ minimum: 1, maximum: MAX_QUANTITY }),
      },
      { additionalProperties: false },
    ),
    { maxItems: MAX_LINK_PRODUCTS },
  ),
  isForAllProduct: Type.Boolean(),
  allowQuantityAdjustment: Type.Boolean(),
  collectTax: Type.Boolean(),
  taxId: Type.String({ format: 'uuid', 'x-message': 'taxId must be a tax id (UUID)' }),
  collectAddress: Type.Boolean(),
  limitPayments: Type.Boolean(),
  maxPayments: Type.Integer({ minimum: 1, maximum: MAX_PAYMENTS }),
  customFields: Type.Record(Type.String(), Type.Unknown(), { maxProperties: MAX_CUSTOM_FIELDS, description: `a JSON object, at most ${MAX_CUSTOM_FIELDS} keys and ${MAX_CUSTOM_FIELDS_BYTES} bytes` }),
  allowMobilePayment: Type.Boolean(),
  currency,
  expiration_date: Type.String({ format: 'date-time', description: 'ISO 8601, in the future' }),
}

export const CreatePaymentLinkBody = Type.Object(
  {
    title: fields.title,
    url: fields.url,
    description: Type.Optional(fields.description),
    coverImage: Type.Optional(fields.coverImage),
    linkType: fields.linkType,
    amount: Type.Optional(fields.amount),
    paymentForId: Type.Optional(fields.paymentForId),
    customerId: Type.Optional(fields.customerId),
    paymentLinkProducts: Type.Optional(fields.paymentLinkProducts),
    isForAllProduct: Type.Optional(fields.isForAllProduct),
    allowQuantityAdjustment: fields.allowQuantityAdjustment,
    collectTax: fields.collectTax,
    taxId: Type.Optional(fields.taxId),
    collectAddress: fields.collectAddress,
    limitPayments: Type.Optional(fields.limitPayments),
    maxPayments: Type.Optional(fields.maxPayments),
    customFields: Type.Optional(fields.customFields),
    allowMobilePayment: fields.allowMobilePayment,
    currency: fields.currency,
    expiration_date: Type.Optional(fields.expiration_date),
  },
  {
    additionalProperties: false,
    examples: [
      {
        title: 'Summer sale',
        url: 'summer-sale',
        description: 'Two **widgets** for the price of one',
        linkType: 'DONATION',
        amount: '25.50',
        allowQuantityAdjustment: false,
        collectTax: false,
        collectAddress: false,
        allowMobilePayment: true,
        currency: 'usdc',
        expiration_date: '2027-09-30T00:00:00.000Z',
      },
    ],
  },
)
export type CreatePaymentLinkBody = Static<typeof CreatePaymentLinkBody>

/**
 * An optional field an update may clear with null: the field's own schema with null added to its
 * type, and one message saying all it accepts (whichever rule a value breaks).
 */
function clearable<T extends TSchema>(schema: T, accepts: string) {
  const { type, ...rest } = schema as unknown as Record<string, unknown>
  if (typeof type !== 'string') throw new Error('clearable: the schema must have one type')
  return Type.Optional(Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'], 'x-message': `${accepts}, or null to clear it` }))
}

/** amount, or null to clear it: one message whichever way it fails. */
const clearableAmount = Type.Optional(
  Type.Union([Type.Number({ 'x-message': AMOUNT_MESSAGE }), Type.String({ maxLength: 40, 'x-message': AMOUNT_MESSAGE }), Type.Null({ 'x-message': AMOUNT_MESSAGE })], {
    'x-message': AMOUNT_MESSAGE,
    description: 'greater than 0, at most 6 decimals; null clears it',
  }),
)

/** The create body with every field optional; null clears an optional field. */
export const UpdatePaymentLinkBody = Type.Object(
  {
    title: Type.Optional(fields.title),
    url: Type.Optional(fields.url),
    description: clearable(fields.description, 'description must be text of at most 5000 characters'),
    coverImage: clearable(fields.coverImage, `coverImage must be an http or https URL of at most ${MAX_URL_LENGTH} characters`),
    linkType: Type.Optional(fields.linkType),
    amount: clearableAmount,
    paymentForId: clearable(fields.paymentForId, 'paymentForId must be text of 1 to 255 characters'),
    customerId: clearable(fields.customerId, 'customerId must be a customer id (UUID)'),
    paymentLinkProducts: Type.Optional(fields.paymentLinkProducts),
    isForAllProduct: Type.Optional(fields.isForAllProduct),
    allowQuantityAdjustment: Type.Optional(fields.allowQuantityAdjustment),
    collectTax: Type.Optional(fields.collectTax),
    taxId: clearable(fields.taxId, 'taxId must be a tax id (UUID)'),
    collectAddress: Type.Optional(fields.collectAddress),
    limitPayments: Type.Optional(fields.limitPayments),
    maxPayments: clearable(fields.maxPayments, `maxPayments must be an integer from 1 to ${MAX_PAYMENTS}`),
    customFields: clearable(fields.customFields, `customFields must be an object of at most ${MAX_CUSTOM_FIELDS} keys`),
    allowMobilePayment: Type.Optional(fields.allowMobilePayment),
    currency: Type.Optional(fields.currency),
    expiration_date: clearable(fields.expiration_date, 'expiration_date must be an ISO 8601 date-time'),
  },
  { additionalProperties: false, examples: [{ title: 'Summer sale, extended', expiration_date: '2027-10-31T00:00:00.000Z', maxPayments: null }] },
)
export type UpdatePaymentLinkBody = Static<typeof UpdatePaymentLinkBody>

export const PaymentLinkParams = Type.Object({ id: UuidParam('payment link') })

export const ListPaymentLinksQuery = Type.Object({
  ...Pagination,
  linkType: Type.Optional(linkType),
  currency: Type.Optional(currency),
})
export type ListPaymentLinksQuery = Static<typeof ListPaymentLinksQuery>

export const PaymentLinkListSchema = Type.Object(
  {
    data: Type.Array(PaymentLinkSchema),
    total: Type.Integer(),
    skip: Type.Integer(),
    take: Type.Integer(),
  },
  { $id: 'PaymentLinkList' },
)
export type PaymentLinkList = Static<typeof PaymentLinkListSchema>
