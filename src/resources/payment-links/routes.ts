import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { callerOf } from '../../auth/authenticate.js'
import { InvalidRequest, NotFound } from '../../errors.js'
import { amountField } from '../../http/amount-field.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import { errorResponses, namesAField } from '../../schemas/common.js'
import { toPaymentLink } from './objects.js'
import { fieldsOf, type PaymentLinkFields, PaymentLinksRepository } from './repository.js'
import { createPaymentLink } from './public.js'
import { checkedCoverImage, checkedCustomFields, checkedExpiration, checkLinkRules, LinkReferences, slugOf } from './rules.js'
import {
  type CreatePaymentLinkBody,
  CreatePaymentLinkBody as CreateBodySchema,
  type LinkCurrency,
  ListPaymentLinksQuery,
  PaymentLinkListSchema,
  PaymentLinkParams,
  PaymentLinkSchema,
  type UpdatePaymentLinkBody,
  UpdatePaymentLinkBody as UpdateBodySchema,
} from './schemas.js'
import { operation } from '../manifest.js'
import { paymentLinksManifest } from './manifest.js'

const NOT_FOUND = 'Payment link not found'

/** The link a create body describes, its own fields checked (its references are checked in the transaction). */
function fieldsOfCreate(request: FastifyRequest, body: CreatePaymentLinkBody, now: Date): PaymentLinkFields {
  const fields: PaymentLinkFields = {
    slug: slugOf(body.url),
    title: body.title,
    description: body.description ?? null,
    coverImage: body.coverImage === undefined ? null : checkedCoverImage(body.coverImage),
    linkType: body.linkType,
    currency: body.currency,
    amount: body.amount === undefined ? null : amountField(request, 'amount', body.amount, body.currency),
    paymentForId: body.paymentForId ?? null,
    customerId: body.customerId?.toLowerCase() ?? null,
    products: (body.paymentLinkProducts ?? []).map((line) => ({ productId: line.productId.toLowerCase(), quantity: line.quantity })),
    isForAllProducts: body.isForAllProduct ?? false,
    allowQuantityAdjustment: body.allowQuantityAdjustment,
    collectTax: body.collectTax,
    taxId: body.taxId?.toLowerCase() ?? null,
    collectAddress: body.collectAddress,
    allowMobilePayment: body.allowMobilePayment,
    limitPayments: body.limitPayments ?? false,
    maxPayments: body.maxPayments ?? null,
    customFields: body.customFields === undefined ? null : checkedCustomFields(body.customFields),
    expiresAt: body.expiration_date === undefined ? null : checkedExpiration(body.expiration_date, now),
  }
  checkLinkRules(fields)
  return fields
}

/** A field of an update: undefined keeps the current value, null clears it, a value is checked by `check`. */
function merged<Value, Stored>(value: Value | null | undefined, current: Stored | null, check: (value: Value) => Stored): Stored | null {
  if (value === undefined) return current
  if (value === null) return null
  return check(value)
}

const same = <T>(value: T): T => value
const lower = (value: string): string => value.toLowerCase()

/** The link an update body makes of the link as it is; linkType never changes. */
function fieldsOfUpdate(request: FastifyRequest, body: UpdatePaymentLinkBody, current: PaymentLinkFields, paymentsCount: number, now: Date): PaymentLinkFields {
  if (body.linkType !== undefined && body.linkType !== current.linkType) {
    throw new InvalidRequest(`linkType cannot change after the payment link is created (it is ${current.linkType})`)
  }
  const currency = (body.currency ?? current.currency) as LinkCurrency
  const limitPayments = body.limitPayments ?? current.limitPayments
  if (body.maxPayments !== undefined && body.maxPayments !== null && !limitPayments) throw new InvalidRequest('maxPayments needs limitPayments: true')
  const fields: PaymentLinkFields = {
    slug: body.url === undefined ? current.slug : slugOf(body.url),
    title: body.title ?? current.title,
    description: merged(body.description, current.description, same),
    coverImage: merged(body.coverImage, current.coverImage, checkedCoverImage),
    linkType: current.linkType,
    currency,
    amount: merged(body.amount, current.amount, (value) => amountField(request, 'amount', value, currency)),
    paymentForId: merged(body.paymentForId, current.paymentForId, same),
    customerId: merged(body.customerId, current.customerId, lower),
    products: body.paymentLinkProducts === undefined ? current.products : body.paymentLinkProducts.map((line) => ({ productId: line.productId.toLowerCase(), quantity: line.quantity })),
    isForAllProducts: body.isForAllProduct ?? current.isForAllProducts,
    allowQuantityAdjustment: body.allowQuantityAdjustment ?? current.allowQuantityAdjustment,
    collectTax: body.collectTax ?? current.collectTax,
    taxId: merged(body.taxId, current.taxId, lower),
    collectAddress: body.collectAddress ?? current.collectAddress,
    allowMobilePayment: body.allowMobilePayment ?? current.allowMobilePayment,
    limitPayments,
    // Turning the limit off lets go of its maximum.
    maxPayments: limitPayments ? merged(body.maxPayments, current.maxPayments, same) : null,
    customFields: merged(body.customFields, current.customFields, checkedCustomFields),
    expiresAt: merged(body.expiration_date, current.expiresAt, (value) => checkedExpiration(value, now)),
  }
  checkLinkRules(fields)
  if (fields.maxPayments !== null && fields.maxPayments < paymentsCount) {
    throw new InvalidRequest(`maxPayments must be at least the ${paymentsCount} payments already made through the link`)
  }
  return fields
}

export interface PaymentLinkRoutesOptions {
  /**
   * The origin every URL put into an answer, an event or a page starts with (PUBLIC_URL, or this
   * machine on the port it listens on), never the request's Host: a caller can't choose it.
   */
  publicUrl: () => string
}

export const paymentLinkRoutes: FastifyPluginAsyncTypebox<PaymentLinkRoutesOptions> = async (app, options) => {
  const links = new PaymentLinksRepository(app.db)

  app.route({
    ...operation(paymentLinksManifest, 'paymentLinksControllerCreate'),
    schema: {
      tags: ['payment links'],
      summary: 'Create a payment link',
      description: 'The link is priced by `amount`, by its products (PRODUCT links) or by the payer (COLLECTION and DONATION without amount); `url` is a slug unique within the application.',
      body: CreateBodySchema,
      response: { 201: PaymentLinkSchema, ...errorResponses(400, 401, 403, 409, 429) },
    },
    handler: async (request, reply) => {
      const { appId, environment } = callerOf(request)
      const now = new Date()
      const fields = fieldsOfCreate(request, request.body, now)
      const origin = options.publicUrl()
      const link = await app.transact(async (tx) => {
        const references = new LinkReferences(tx.db, appId)
        if (fields.customerId !== null) await references.checkCustomer(fields.customerId)
        if (fields.taxId !== null) await references.checkTax(fields.taxId)
        await references.checkProducts(fields.products, fields.currency as LinkCurrency)
        return createPaymentLink(tx, appId, ledgerEnvironmentOf(environment), fields, origin, now)
      })
      return reply.code(201).send(link)
    },
  })

  app.route({
    ...operation(paymentLinksManifest, 'paymentLinksControllerFindAll'),
    schema: {
      tags: ['payment links'],
      summary: "List the application's payment links",
      querystring: ListPaymentLinksQuery,
      response: { 200: PaymentLinkListSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request) => {
      const skip = request.query.skip ?? 0
      const take = request.query.take ?? 10
      const { rows, total } = await links.list(callerOf(request).appId, { ...request.query, skip, take })
      const origin = options.publicUrl()
      const now = new Date()
      return { data: rows.map((row) => toPaymentLink(row, origin, now)), total, skip, take }
    },
  })

  app.route({
    ...operation(paymentLinksManifest, 'paymentLinksControllerFindOne'),
    schema: {
      tags: ['payment links'],
      summary: 'Get a payment link',
      params: PaymentLinkParams,
      response: { 200: PaymentLinkSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const row = await links.find(callerOf(request).appId, request.params.id)
      if (row === undefined) throw new NotFound(NOT_FOUND)
      return toPaymentLink(row, options.publicUrl())
    },
  })

  app.route({
    ...operation(paymentLinksManifest, 'paymentLinksControllerUpdate'),
    schema: {
      tags: ['payment links'],
      summary: 'Update a payment link',
      description: 'Every field is optional: the fields sent change, the others stay; null clears an optional field. linkType cannot change.',
      params: PaymentLinkParams,
      body: UpdateBodySchema,
      response: { 200: PaymentLinkSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
    },
    // No body is the empty update, which changes nothing (the Python SDK's payment_links.update(id) sends none).
    preValidation: async (request) => {
      if (request.body === undefined) request.body = {}
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      const body = request.body
      const now = new Date()
      const origin = options.publicUrl()
      return app.transact(async (tx) => {
        const repository = new PaymentLinksRepository(tx.db)
        const current = await repository.lock(appId, request.params.id)
        if (current === undefined) throw new NotFound(NOT_FOUND)
        const fields = fieldsOfUpdate(request, body, fieldsOf(current), current.payments_count, now)
        const references = new LinkReferences(tx.db, appId)
        // A reference is checked when the body sets it: a product deleted since does not block editing the title.
        if (body.customerId !== undefined && fields.customerId !== null) await references.checkCustomer(fields.customerId)
        if (body.taxId !== undefined && fields.taxId !== null) await references.checkTax(fields.taxId)
        if (body.paymentLinkProducts !== undefined || (body.currency !== undefined && body.currency !== current.currency)) {
          await references.checkProducts(fields.products, fields.currency as LinkCurrency)
        }
        if (!namesAField(body)) return toPaymentLink(current, origin, now)
        const row = await repository.replace(appId, current.id, fields)
        if (row === undefined) throw new NotFound(NOT_FOUND)
        const updated = toPaymentLink(row, origin, now)
        await tx.events.emit(appId, 'payment_link.updated', updated)
        return updated
      })
    },
  })
}
