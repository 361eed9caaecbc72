import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { callerOf } from '../../auth/authenticate.js'
import { Conflict, InvalidRequest, NotFound } from '../../errors.js'
import { ApiError } from '../../http/api-error.js'
import { amountField } from '../../http/amount-field.js'
import { formatAmount, MAX_AMOUNT_UNITS, parseAmount } from '../../ledger/amount.js'
import { InsufficientFunds } from '../../ledger/ledger.js'
import { errorResponses } from '../../schemas/common.js'
import { findCustomer } from '../customers/public.js'
import { creditPayment, debitRefund, STABLECOIN_OF, stablecoinUnits } from './money.js'
import { toPayment, toRefund } from './objects.js'
import { newPaymentId, type TestPaymentRow, TestPaymentsRepository } from './repository.js'
import { MAX_PAYMENT_UNITS, PAYMENT_CURRENCIES, type PaymentCurrency, PaymentRequestBody, PaymentResponseSchema, RefundResponseSchema, TestPaymentParams } from './schemas.js'
import { operation } from '../manifest.js'
import { testPaymentsManifest } from './manifest.js'

const NOT_FOUND = 'Test payment not found'
const CUSTOMER_NOT_FOUND = 'Customer not found'
const DEVELOPMENT_ONLY = 'Test payments can only be made, read and refunded with a development key: they move sandbox money, and a production key moves live money'
const UNSUPPORTED_CURRENCY = `currency must be one of ${PAYMENT_CURRENCIES.join(', ')} (any case): a test payment credits the sandbox's USDC or EURC`
const TOO_LARGE = `amount must be at most ${MAX_PAYMENT_UNITS}.00 for a test payment`
/** amountField's own message above its platform-wide bound, which is above this resource's. */
const ABOVE_PLATFORM_BOUND = `amount must be at most ${MAX_AMOUNT_UNITS}`

function requireDevelopmentKey(request: FastifyRequest): void {
  if (callerOf(request).environment !== 'development') throw new ApiError(403, DEVELOPMENT_ONLY)
}

function currencyOf(text: string): PaymentCurrency {
  const upper = text.toUpperCase()
  const currency = PAYMENT_CURRENCIES.find((code) => code === upper)
  if (currency === undefined) throw new InvalidRequest(UNSUPPORTED_CURRENCY)
  return currency
}

/** The amount in cents: at most the currency's 2 decimals, greater than 0, at most MAX_PAYMENT_UNITS. */
function centsOf(request: FastifyRequest, value: string | number, currency: PaymentCurrency): bigint {
  const fiat = currency === 'USD' ? 'usd' : 'eur'
  let cents: bigint
  try {
    cents = amountField(request, 'amount', value, fiat)
  } catch (error) {
    if (error instanceof InvalidRequest && error.message === ABOVE_PLATFORM_BOUND) throw new InvalidRequest(TOO_LARGE)
    throw error
  }
  if (cents > parseAmount(MAX_PAYMENT_UNITS.toString(), fiat)) throw new InvalidRequest(TOO_LARGE)
  return cents
}

function insufficientFunds(payment: TestPaymentRow, error: InsufficientFunds): Conflict {
  const coin = STABLECOIN_OF[payment.currency as PaymentCurrency]
  const name = coin.toUpperCase()
  return new Conflict(
    `Insufficient sandbox balance to refund test payment ${payment.id}: the base wallet has ${formatAmount(error.available, coin)} ${name} available, the refund needs ${formatAmount(stablecoinUnits(BigInt(payment.amount)), coin)} ${name}`,
  )
}

export const testPaymentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const payments = new TestPaymentsRepository(app.db)

  /** The caller's payment, 404 otherwise; then 403 for a production key (another application's answers 404 to any key). */
  async function ownPayment(request: FastifyRequest, id: string): Promise<TestPaymentRow> {
    const row = await payments.find(callerOf(request).appId, id)
    if (row === undefined) throw new NotFound(NOT_FOUND)
    requireDevelopmentKey(request)
    return row
  }

  app.route({
    ...operation(testPaymentsManifest, 'testPaymentControllerCreatePaymentV0'),
    schema: {
      tags: ['test payments'],
      summary: 'Make a test payment (sandbox)',
      description:
        "Development keys only. The payment succeeds at once and credits the application's base sandbox wallet: USD as USDC, EUR as EURC (GET /balance shows it). amount is a JSON number or a decimal string, with at most 2 decimals, at most 1000000.00. The idempotency-key header is required.",
      body: PaymentRequestBody,
      response: { 201: PaymentResponseSchema, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
    },
    handler: async (request, reply) => {
      const { appId } = callerOf(request)
      requireDevelopmentKey(request)
      const body = request.body
      const currency = currencyOf(body.currency)
      const cents = centsOf(request, body.amount, currency)
      let customerId: string | null = null
      if (body.customerId !== undefined && body.customerId !== null) {
        const customer = await findCustomer(app.db, appId, body.customerId)
        if (customer === undefined) throw new NotFound(CUSTOMER_NOT_FOUND)
        customerId = customer.id
      }
      const payment = await app.transact(async (tx) => {
        const id = newPaymentId('pay')
        const { wallet, entryId } = await creditPayment(tx.db, appId, id, currency, cents)
        const row = await new TestPaymentsRepository(tx.db).create(appId, { id, amount: cents, currency, description: body.description, customerId, walletId: wallet.id, entryId })
        const created = toPayment(row)
        await tx.events.emit(appId, 'test_payment.created', created)
        return created
      })
      return reply.code(201).send(payment)
    },
  })

  app.route({
    ...operation(testPaymentsManifest, 'testPaymentControllerGetPaymentV0'),
    schema: {
      tags: ['test payments'],
      summary: 'Get a test payment',
      description: 'Development keys only.',
      params: TestPaymentParams,
      response: { 200: PaymentResponseSchema, ...errorResponses(401, 403, 404, 429) },
    },
    handler: async (request) => toPayment(await ownPayment(request, request.params.id)),
  })

  app.route({
    ...operation(testPaymentsManifest, 'testPaymentControllerRefundPaymentV0'),
    schema: {
      tags: ['test payments'],
      summary: 'Refund a test payment in full (sandbox)',
      description:
        "Development keys only; no body. The whole amount goes back out of the wallet the payment credited; a payment is refunded at most once (409 after that). 409 with the balance available when the wallet no longer holds the amount. The idempotency-key header is required.",
      params: TestPaymentParams,
      response: { 200: RefundResponseSchema, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      const { id } = await ownPayment(request, request.params.id)
      return app.transact(async (tx) => {
        const repository = new TestPaymentsRepository(tx.db)
        const refundId = newPaymentId('ref')
        const claimed = await repository.claimRefund(appId, id, refundId)
        if (claimed === undefined) {
          const current = await repository.find(appId, id)
          if (current === undefined) throw new NotFound(NOT_FOUND)
          throw new Conflict(`Test payment ${id} was already refunded (${current.refund_id ?? 'refund'}): a payment is refunded at most once, in full`)
        }
        let entryId: string
        try {
          entryId = await debitRefund(tx.db, claimed, refundId)
        } catch (error) {
          if (error instanceof InsufficientFunds) throw insufficientFunds(claimed, error)
          throw error
        }
        await repository.setRefundEntry(appId, id, entryId)
        const refund = toRefund(claimed)
        await tx.events.emit(appId, 'test_payment.refunded', refund)
        return refund
      })
    },
  })
}
