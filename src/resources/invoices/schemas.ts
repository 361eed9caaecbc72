import { Type, type Static } from 'typebox'
import { CheckoutPaymentSchema } from '../../schemas/checkout-payment.js'
import { Livemode, Pagination, Timestamp, UuidParam } from '../../schemas/common.js'
import { INVOICE_CURRENCIES } from './money.js'

export const INVOICE_STATUSES = ['DRAFT', 'OPEN', 'PASTDUE', 'PAID', 'PARTIALLYPAID'] as const
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number]
export const DELIVERY_METHODS = ['EMAIL', 'MANUALLY'] as const
export const PAYMENT_METHODS = ['ACH', 'BANK_TRANSFER', 'CREDIT_CARD', 'CASH', 'MOBILE_MONEY', 'CRYPTO'] as const

/** Most lines one invoice holds. */
export const MAX_LINES = 100
/** Largest quantity of one line. */
export const MAX_QUANTITY = 1_000_000

const money = (description: string) => Type.String({ description: `${description}: a decimal string with two decimals`, examples: ['107.25'] })
const status = Type.Enum([...INVOICE_STATUSES])
const currency = Type.Enum([...INVOICE_CURRENCIES])

export const InvoiceLineSchema = Type.Object({
  product_id: Type.String({ format: 'uuid' }),
  name: Type.String({ description: "the product's name when the line was set" }),
  quantity: Type.Integer(),
  unit_price: money("the product's price when the line was set"),
  amount: money('unit_price × quantity'),
})

export const InvoiceSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    customer_id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    email: Type.String(),
    currency,
    status,
    lines: Type.Array(InvoiceLineSchema),
    items: Type.Array(
      Type.Object({ product_id: Type.String({ format: 'uuid' }), quantity: Type.Integer() }),
      { description: "the lines as CreateInvoiceDto's items: resent in a PUT, they keep the lines and their prices" },
    ),
    subtotal: money('the sum of the lines'),
    tax: Type.Union(
      [
        Type.Object({
          id: Type.String({ format: 'uuid' }),
          name: Type.String(),
          percentage: Type.Number({ description: 'as it was when the tax was applied' }),
        }),
        Type.Null(),
      ],
      { description: 'the tax applied (taxId), null without one' },
    ),
    taxId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: "the applied tax's id as CreateInvoiceDto's taxId: resent in a PUT, it keeps the tax" }),
    tax_amount: money('the tax on the subtotal, rounded half up to the cent'),
    total: money('subtotal + tax_amount'),
    amount_paid: money('paid so far'),
    amount_due: money('total - amount_paid'),
    due_date: Timestamp,
    send_date: Type.Union([Timestamp, Type.Null()]),
    delivery: Type.Enum([...DELIVERY_METHODS]),
    payment_methods: Type.Array(Type.Enum([...PAYMENT_METHODS])),
    payment_link: Type.Boolean(),
    payment_link_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'the payment link made for it, once there is one' }),
    hosted_invoice_url: Type.Union([Type.String({ format: 'uri' }), Type.Null()], { description: "the invoice's page a payer opens and pays it on, PUBLIC_URL/invoices/{id}/pay; null while it is a DRAFT (its page is 404)" }),
    partial_payment: Type.Boolean(),
    livemode: Livemode,
    address: Type.Union([Type.String(), Type.Null()]),
    phone_number: Type.Union([Type.String(), Type.Null()]),
    logo: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Invoice' },
)
export type Invoice = Static<typeof InvoiceSchema>

/** `invoice.paid`'s data: the invoice, now PAID, and the payment that paid it. */
export const InvoicePaidSchema = Type.Object({ ...InvoiceSchema.properties, payment: CheckoutPaymentSchema }, { $id: 'InvoicePaid' })

const ITEM_MESSAGE = `quantity must be an integer from 1 to ${MAX_QUANTITY}`

/** A line as the caller names it: InvoiceProductDto's product_id, or productId as the payment-link variant spells it. */
const InvoiceItem = Type.Object(
  {
    product_id: Type.Optional(Type.String({ format: 'uuid' })),
    productId: Type.Optional(Type.String({ format: 'uuid' })),
    quantity: Type.Integer({ minimum: 1, maximum: MAX_QUANTITY, description: ITEM_MESSAGE }),
  },
  { additionalProperties: false },
)

/** CreateInvoiceDto: the body of create, and of PUT (which resends all of it). */
export const InvoiceBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    email: Type.String({ format: 'email', maxLength: 254 }),
    customer_id: Type.String({ format: 'uuid' }),
    currency,
    items: Type.Array(InvoiceItem, { minItems: 1, maxItems: MAX_LINES, description: `1 to ${MAX_LINES} lines, each {product_id, quantity}` }),
    due_date: Type.String({ format: 'date-time' }),
    delivery: Type.Enum([...DELIVERY_METHODS]),
    payment_link: Type.Boolean(),
    payment_methods: Type.Array(Type.Enum([...PAYMENT_METHODS]), { minItems: 1, maxItems: PAYMENT_METHODS.length, uniqueItems: true }),
    status: Type.Enum([...INVOICE_STATUSES], { description: 'DRAFT or OPEN on create; see docs/invoices.md for what a PUT may set' }),
    partial_payment: Type.Boolean(),
    // Free text: an address spans lines.
    address: Type.Optional(Type.String({ maxLength: 1000, 'x-free-text': true })),
    phone_number: Type.Optional(Type.String({ maxLength: 50 })),
    send_date: Type.Optional(Type.String({ format: 'date-time' })),
    logo: Type.Optional(Type.String({ maxLength: 2048, description: 'an http or https URL' })),
    taxId: Type.Optional(Type.String({ format: 'uuid' })),
  },
  {
    additionalProperties: false,
    // The customer and product examples' ids: the docs' examples run with the reader's own.
    examples: [
      {
        name: 'Invoice 1042',
        email: 'ada.lovelace@example.com',
        customer_id: 'ecc58e04-2544-46c2-85ff-05567e53cf9d',
        currency: 'usdc',
        items: [{ product_id: '01a2128f-61dc-7488-a402-8a1d7b0bbaad', quantity: 2 }],
        due_date: '2027-12-31T00:00:00.000Z',
        delivery: 'EMAIL',
        payment_link: true,
        payment_methods: ['ACH', 'CRYPTO'],
        status: 'DRAFT',
        partial_payment: false,
      },
    ],
  },
)
export type InvoiceBody = Static<typeof InvoiceBody>

export const InvoiceParams = Type.Object({ id: UuidParam('invoice') })

export const ListInvoicesQuery = Type.Object({
  ...Pagination,
  status: Type.Optional(status),
  customer_id: Type.Optional(Type.String({ format: 'uuid' })),
})
export type ListInvoicesQuery = Static<typeof ListInvoicesQuery>

export const InvoiceListSchema = Type.Object(
  {
    data: Type.Array(InvoiceSchema),
    total: Type.Integer(),
    skip: Type.Integer(),
    take: Type.Integer(),
  },
  { $id: 'InvoiceList' },
)
