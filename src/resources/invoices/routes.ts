import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { callerOf } from '../../auth/authenticate.js'
import type { Db } from '../../db/database.js'
import { Conflict, InvalidRequest, NotFound } from '../../errors.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import { findProduct, formatPrice, type ProductCurrency } from '../products/public.js'
import { errorResponses } from '../../schemas/common.js'
import { findCustomer } from '../customers/public.js'
import { findTax } from '../taxes/public.js'
import { exactPercent, formatCents, type InvoiceCurrency, MAX_INVOICE_TOTAL, parsePercentText, percentText, PRICED_IN, taxOn } from './money.js'
import { toInvoice } from './objects.js'
import { attachPaymentLink } from './payment-link.js'
import { type AppliedTax, type InvoiceFields, type InvoiceLine, type InvoiceRow, InvoicesRepository, linesOf, taxOf } from './repository.js'
import { InvoiceBody, InvoiceListSchema, InvoiceParams, InvoiceSchema, type InvoiceStatus, ListInvoicesQuery } from './schemas.js'
import { createRefusal, transitionRefusal } from './transitions.js'
import { operation } from '../manifest.js'
import { invoicesManifest } from './manifest.js'

const NOT_FOUND = 'Invoice not found'
const CUSTOMER_NOT_FOUND = 'Customer not found'
const TAX_NOT_FOUND = 'Tax not found'

/** A line as the body names it. */
interface Item {
  productId: string
  quantity: number
}

/** The body's items, each naming its product once, as product_id or productId. */
function itemsOf(body: InvoiceBody): Item[] {
  return body.items.map((item, index) => {
    if (item.product_id !== undefined && item.productId !== undefined) throw new InvalidRequest(`items[${index}] names its product twice: give product_id or productId, not both`)
    const productId = item.product_id ?? item.productId
    if (productId === undefined) throw new InvalidRequest(`items[${index}].product_id is required`)
    return { productId: productId.toLowerCase(), quantity: item.quantity }
  })
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/

/** The instant a date-time field names, as the API writes timestamps; a day that does not exist (30 February, 24:00) is refused. */
function instantOf(field: string, text: string): string {
  const match = TIMESTAMP.exec(text)
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] = (match?.slice(1) ?? []).map((part) => Number(part ?? '0'))
  const instant = Date.parse(text)
  const real =
    match !== null &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= new Date(Date.UTC(year, month, 0)).getUTCDate() &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 23 &&
    offsetMinutes <= 59 &&
    !Number.isNaN(instant)
  if (!real) throw new InvalidRequest(`${field} must be a valid date-time`)
  return new Date(instant).toISOString()
}

/** The fields of the body that need no database: checked before anything is read or written. */
function checkedBody(body: InvoiceBody) {
  const items = itemsOf(body)
  const dueDate = instantOf('due_date', body.due_date)
  const sendDate = body.send_date === undefined ? null : instantOf('send_date', body.send_date)
  if (sendDate !== null && sendDate > dueDate) throw new InvalidRequest('send_date must not be after due_date')
  if (body.logo !== undefined && body.logo !== '' && !isWebUrl(body.logo)) throw new InvalidRequest('logo must be an http or https URL')
  return { items, dueDate, sendDate }
}

function isWebUrl(text: string): boolean {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && !/\s/.test(text)
  } catch {
    return false
  }
}

/** "" clears an optional text field. */
function textOrNull(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value
}

/**
 * Each item as a line priced now: the application's product, active, priced in the invoice
 * currency's fiat (USD for usdc, EUR for eurc, at 1:1). The first item that is not is a 400 naming it.
 */
async function priceLines(db: Db, appId: string, currency: InvoiceCurrency, items: readonly Item[]): Promise<InvoiceLine[]> {
  const wanted = PRICED_IN[currency]
  const lines: InvoiceLine[] = []
  for (const [index, item] of items.entries()) {
    const product = await findProduct(db, appId, item.productId)
    if (product === undefined) throw new InvalidRequest(`items[${index}]: product ${item.productId} not found`)
    if (product.status !== 'ACTIVE') throw new InvalidRequest(`items[${index}]: product ${product.id} is ${product.status}, and only an ACTIVE product can be invoiced`)
    if (product.currency !== wanted) {
      const price = `${formatPrice(BigInt(product.price), product.currency as ProductCurrency)} ${product.currency}`
      throw new InvalidRequest(`items[${index}]: product ${product.id} is priced in ${product.currency} (${price}); a ${currency} invoice takes products priced in ${wanted}`)
    }
    const unitPrice = BigInt(product.price)
    lines.push({ product_id: product.id, name: product.name, quantity: item.quantity, unit_price: unitPrice, amount: unitPrice * BigInt(item.quantity) })
  }
  return lines
}

/** The application's tax named by taxId, as the invoice keeps it. */
async function appliedTax(db: Db, appId: string, taxId: string): Promise<AppliedTax> {
  const tax = await findTax(db, appId, taxId)
  if (tax === undefined) throw new NotFound(TAX_NOT_FOUND)
  if (tax.active !== 1) throw new InvalidRequest(`taxId: tax ${tax.id} is not active`)
  return { id: tax.id, name: tax.name, percentage: percentText(exactPercent(tax.percentage)) }
}

/** Subtotal, tax and total of the lines; a total past the most one invoice may be is a 400. */
function amountsOf(lines: readonly InvoiceLine[], tax: AppliedTax | null) {
  const subtotal = lines.reduce((sum, line) => sum + line.amount, 0n)
  const taxAmount = tax === null ? 0n : taxOn(subtotal, parsePercentText(tax.percentage))
  const total = subtotal + taxAmount
  if (total > MAX_INVOICE_TOTAL) throw new InvalidRequest(`The invoice's total would be ${formatCents(total)}, more than ${formatCents(MAX_INVOICE_TOTAL)}, the most one invoice may be`)
  return { subtotal, taxAmount, total }
}

/** Whether the body's items are the invoice's lines, product for product and quantity for quantity. */
function sameItems(items: readonly Item[], row: InvoiceRow): boolean {
  const lines = linesOf(row)
  return items.length === lines.length && items.every((item, index) => item.productId === lines[index]?.product_id && item.quantity === lines[index]?.quantity)
}

export interface InvoiceRoutesOptions {
  /**
   * The origin every URL put into an answer, an event or a page starts with (PUBLIC_URL, or this
   * machine on the port it listens on), never the request's Host: a caller can't choose it.
   */
  publicUrl: () => string
}

export const invoiceRoutes: FastifyPluginAsyncTypebox<InvoiceRoutesOptions> = async (app, options) => {
  const invoices = new InvoicesRepository(app.db)

  app.route({
    ...operation(invoicesManifest, 'invoiceControllerCreate'),
    schema: {
      tags: ['invoices'],
      summary: 'Create an invoice',
      description: 'The lines are priced from the products now, and keep those prices; status DRAFT or OPEN.',
      body: InvoiceBody,
      response: { 201: InvoiceSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request, reply) => {
      const { appId, environment } = callerOf(request)
      const body = request.body
      const refusal = createRefusal(body.status)
      if (refusal !== undefined) throw refusal
      const { items, dueDate, sendDate } = checkedBody(body)
      const invoice = await app.transact(async (tx) => {
        const customer = await findCustomer(tx.db, appId, body.customer_id)
        if (customer === undefined) throw new NotFound(CUSTOMER_NOT_FOUND)
        const tax = body.taxId === undefined ? null : await appliedTax(tx.db, appId, body.taxId)
        const lines = await priceLines(tx.db, appId, body.currency, items)
        const fields: InvoiceFields = { ...bodyFields(body, dueDate, sendDate), customerId: customer.id, lines, tax, ...amountsOf(lines, tax) }
        const created = toInvoice(await attachPaymentLink(tx, await new InvoicesRepository(tx.db).create(appId, ledgerEnvironmentOf(environment), fields), options.publicUrl()), options.publicUrl())
        await tx.events.emit(appId, 'invoice.created', created)
        return created
      })
      return reply.code(201).send(invoice)
    },
  })

  app.route({
    ...operation(invoicesManifest, 'invoiceControllerFindAll'),
    schema: {
      tags: ['invoices'],
      summary: "List the application's invoices, newest first",
      querystring: ListInvoicesQuery,
      response: { 200: InvoiceListSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request) => {
      const skip = request.query.skip ?? 0
      const take = request.query.take ?? 10
      const { rows, total } = await invoices.list(callerOf(request).appId, { status: request.query.status, customerId: request.query.customer_id, skip, take })
      return { data: rows.map((row) => toInvoice(row, options.publicUrl())), total, skip, take }
    },
  })

  app.route({
    ...operation(invoicesManifest, 'invoiceControllerFindOne'),
    schema: {
      tags: ['invoices'],
      summary: 'Get an invoice',
      params: InvoiceParams,
      response: { 200: InvoiceSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const row = await invoices.find(callerOf(request).appId, request.params.id)
      if (row === undefined) throw new NotFound(NOT_FOUND)
      return toInvoice(row, options.publicUrl())
    },
  })

  app.route({
    ...operation(invoicesManifest, 'invoiceControllerUpdate'),
    schema: {
      tags: ['invoices'],
      summary: 'Update an invoice (the whole body, as on create)',
      description:
        'Resending the same items, currency and tax keeps the lines at the prices they were set with. Only a DRAFT invoice may change its customer, currency, items or tax (re-priced from the products then). See docs/invoices.md for the statuses a PUT may set.',
      params: InvoiceParams,
      body: InvoiceBody,
      response: { 200: InvoiceSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      const body = request.body
      const { items, dueDate, sendDate } = checkedBody(body)
      return app.transact(async (tx) => {
        const repository = new InvoicesRepository(tx.db)
        const current = await repository.lock(appId, request.params.id)
        if (current === undefined) throw new NotFound(NOT_FOUND)
        const refusal = transitionRefusal(current.status as InvoiceStatus, body.status, BigInt(current.amount_paid))
        if (refusal !== undefined) throw refusal

        const keepsLines = body.currency === current.currency && sameItems(items, current)
        const taxId = body.taxId?.toLowerCase() ?? null
        const keepsTax = taxId === current.tax_id
        const keepsCustomer = body.customer_id.toLowerCase() === current.customer_id
        if (current.status !== 'DRAFT' && !(keepsLines && keepsTax && keepsCustomer)) {
          throw new Conflict(`The customer, currency, items and tax of an invoice that is ${current.status} cannot change: only a DRAFT invoice's can`)
        }
        if (!keepsCustomer && (await findCustomer(tx.db, appId, body.customer_id)) === undefined) throw new NotFound(CUSTOMER_NOT_FOUND)
        const tax = keepsTax ? taxOf(current) : taxId === null ? null : await appliedTax(tx.db, appId, taxId)
        const lines = keepsLines ? linesOf(current) : await priceLines(tx.db, appId, body.currency, items)
        const fields: InvoiceFields = { ...bodyFields(body, dueDate, sendDate), customerId: body.customer_id.toLowerCase(), lines, tax, ...amountsOf(lines, tax) }
        // The same body again changes nothing: no write, no event, updated_at as it was.
        if (!InvoicesRepository.changes(current, fields)) return toInvoice(current, options.publicUrl())
        const row = await repository.replace(appId, current.id, fields)
        if (row === undefined) throw new NotFound(NOT_FOUND)
        const updated = toInvoice(await attachPaymentLink(tx, row, options.publicUrl()), options.publicUrl())
        await tx.events.emit(appId, 'invoice.updated', updated)
        return updated
      })
    },
  })
}

/** The fields taken from the body as they are. */
function bodyFields(body: InvoiceBody, dueDate: string, sendDate: string | null) {
  return {
    name: body.name,
    email: body.email,
    currency: body.currency,
    status: body.status,
    dueDate,
    sendDate,
    delivery: body.delivery,
    paymentMethods: body.payment_methods,
    paymentLink: body.payment_link,
    partialPayment: body.partial_payment,
    address: textOrNull(body.address),
    phoneNumber: textOrNull(body.phone_number),
    logo: textOrNull(body.logo),
  }
}
