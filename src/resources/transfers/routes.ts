import type { LivePayouts, LiveReceiving } from '../../ledger/money-context.js'
import { type Chain, describeAddressFormat, isValidChainAddress } from '../../validation/chain-address.js'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyRequest, RawRequestDefaultExpression, RawServerDefault, RouteGenericInterface } from 'fastify'
import type { TSchema } from 'typebox'
import { callerOf } from '../../auth/authenticate.js'
import { InvalidRequest, NotFound } from '../../errors.js'
import { ApiError } from '../../http/api-error.js'
import { amountField } from '../../http/amount-field.js'
import type { Currency } from '../../ledger/amount.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { liveFiatRefusal } from '../../ledger/simulated-rails.js'
import { findWallet, type WalletRow } from '../wallets/public.js'
import { errorResponses } from '../../schemas/common.js'
import type { Transaction } from '../../events/transact.js'
import { type OperationRoute, operation } from '../manifest.js'
import type { ExchangeRates } from '../../ledger/rates.js'
import type { DrainTimings } from '../drains/public.js'
import { transfersManifest } from './manifest.js'
import { cancelTransfer, createTransfer, type NewTransfer, receiveFunds, type TransferContext } from './lifecycle.js'
import { toTransfer } from './objects.js'
import { type TransferFamily, TransfersRepository } from './repository.js'
import {
  bankInstructions,
  checkAchReference,
  depositAddress,
  developerFeeField,
  FIATS,
  INBOUND_NETWORKS,
  oneOf,
  railFor,
  requiredAmount,
  STABLECOINS,
} from './requests.js'
import {
  DirectBankTransferBody,
  DirectWalletTransferBody,
  ExternalBankTransferBody,
  ExternalStablecoinTransferBody,
  ListTransfersQuery,
  PaymentIntentListSchema,
  PaymentIntentParams,
  PaymentIntentSchema,
  SimulateFundsBody,
  StablecoinConversionBody,
  TransferListSchema,
  TransferParams,
  TransferSchema,
} from './schemas.js'

/** What the routes of transfers and of payment intents (transfers of their own family) take. */
export interface TransferRoutesOptions {
  /** the exchange rates every conversion uses (EXCHANGE_RATE_MAX_AGE_SECONDS) */
  exchangeRates: ExchangeRates
  /** how long each step waits, by rail (DRAIN_DELAY_*_MS) */
  drainTimings: DrainTimings
  /**
   * The origin every URL put into an answer, an event or a page starts with (PUBLIC_URL, or this
   * machine on the port it listens on), never the request's Host: a caller can't choose it.
   */
  publicUrl: () => string
  /** live receiving addresses for money asked for on chain */
  receiving: LiveReceiving
  /** live payouts on chain: whether a transfer out can be sent */
  payouts: LivePayouts
}

/**
 * The address a transfer out to a beneficiary is paid to on `chain`. Live: required (this platform
 * keeps no beneficiaries, so beneficiaryId names no address) and paid for real, so refused when
 * live payouts of `currency` on `chain` are off; the sandbox takes it or not, and simulates.
 */
function payoutAddressOf(chain: string, address: string | undefined, environment: LedgerEnvironment, currency: string, payouts: LivePayouts): string | undefined {
  if (address !== undefined && !isValidChainAddress(chain as Chain, address)) throw new InvalidRequest(`destinationAddress must be a valid ${chain} address (${describeAddressFormat(chain as Chain)})`)
  if (environment !== 'live') return address
  if (address === undefined) throw new InvalidRequest("destinationAddress is required with a production key: live money is paid on chain to that address (this platform keeps no beneficiaries' addresses)")
  const off = payouts.offReason(chain, currency)
  if (off !== undefined) throw new InvalidRequest(`${off}: this transfer could not be sent`)
  return address
}

export const WALLET_NOT_FOUND = 'Bridge wallet not found'
const NOT_FOUND = 'Transfer not found'
export const SANDBOX_ONLY = 'Funds can only be simulated with a development key: a production key moves live money'

/** The caller's wallet `walletId` in the key's environment; 404 for another application's or environment's. */
export async function requireWallet(tx: Transaction, environment: LedgerEnvironment, appId: string, walletId: string): Promise<WalletRow> {
  const wallet = await findWallet(tx.db, environment, appId, walletId)
  if (wallet === undefined) throw new NotFound(WALLET_NOT_FOUND)
  return wallet
}

/** What each creation route shares: the caller, and the one transaction the transfer is made in. */
function creation(app: { transact: <T>(work: (tx: Transaction) => Promise<T>) => Promise<T> }, context: TransferContext) {
  return async (request: FastifyRequest, build: (tx: Transaction, environment: LedgerEnvironment, appId: string) => Promise<NewTransfer>) => {
    const { appId, environment } = callerOf(request)
    const ledgerEnvironment = ledgerEnvironmentOf(environment)
    return app.transact(async (tx) => createTransfer(tx, context, await build(tx, ledgerEnvironment, appId)))
  }
}

/** What a creation route documents of itself; its answers are its family's. */
export interface CreationSchema<Body extends TSchema> {
  tags: string[]
  summary: string
  description: string
  body: Body
}

/**
 * `request.body` of a route whose body schema is `Body`, as the TypeBox provider types it: written
 * the way Fastify resolves it so that the helper's generic handler can hand it on as is; for a
 * given schema it is that schema's Static.
 */
type CreationBody<Body extends TSchema> = FastifyRequest<RouteGenericInterface, RawServerDefault, RawRequestDefaultExpression, { body: Body }, TypeBoxTypeProvider>['body']

/** What a creation route's build gets: the validated body, the request (for its errors), and the caller's transaction. */
export interface CreationInput<Body extends TSchema> {
  body: CreationBody<Body>
  request: FastifyRequest
  tx: Transaction
  environment: LedgerEnvironment
  appId: string
}

/**
 * Registers a family's creation routes (`post(operation(manifest, operationId), schema, build)`):
 * each makes the transfer `build` describes in one transaction and answers 201 with it (`item`),
 * or one of `errors`.
 */
export function creationRoutes(app: Parameters<FastifyPluginAsyncTypebox<TransferRoutesOptions>>[0], context: TransferContext, item: typeof TransferSchema, errors: ReturnType<typeof errorResponses>) {
  const create = creation(app, context)
  const created = { 201: item, ...errors }
  return <Body extends TSchema>(declared: OperationRoute, schema: CreationSchema<Body>, build: (input: CreationInput<Body>) => Promise<NewTransfer>) => {
    app.route({
      ...declared,
      schema: { tags: schema.tags, summary: schema.summary, description: schema.description, body: schema.body, response: created },
      handler: async (request, reply) => {
        const body = request.body
        const transfer = await create(request, (tx, environment, appId) => build({ body, request, tx, environment, appId }))
        return reply.code(201).send(transfer)
      },
    })
  }
}

/** A family's operations after creation, each from its manifest. */
export interface FollowOperations {
  list: OperationRoute
  find: OperationRoute
  cancel: OperationRoute
  simulateFunds: OperationRoute
}

/** The list, read, cancel and simulate_funds routes of a family (transfers, payment intents). */
export function followRoutes(family: TransferFamily, context: TransferContext, notFound: string, operations: FollowOperations) {
  const tag = family === 'transfer' ? 'transfers' : 'payment intents'
  const what = family === 'transfer' ? 'transfer' : 'payment intent'
  const plural = family === 'transfer' ? 'transfers' : 'payment intents'
  const ItemSchema = family === 'transfer' ? TransferSchema : PaymentIntentSchema
  const Params = family === 'transfer' ? TransferParams : PaymentIntentParams
  const ListSchema = family === 'transfer' ? TransferListSchema : PaymentIntentListSchema
  const plugin: FastifyPluginAsyncTypebox<TransferRoutesOptions> = async (app, options) => {
    const transfers = new TransfersRepository(app.db)
    app.route({
      ...operations.list,
      schema: {
        tags: [tag],
        summary: `List ${plural}, newest first`,
        querystring: ListTransfersQuery,
        response: { 200: ListSchema, ...errorResponses(400, 401, 403, 429) },
      },
      handler: async (request) => {
        const { appId, environment } = callerOf(request)
        const skip = request.query.skip ?? 0
        const take = request.query.take ?? 10
        const { rows, total } = await transfers.list(ledgerEnvironmentOf(environment), appId, family, { state: request.query.state, walletId: request.query.wallet_id }, { skip, take })
        return { data: rows.map(toTransfer), total, skip, take }
      },
    })
    app.route({
      ...operations.find,
      schema: { tags: [tag], summary: `Get a ${what}`, params: Params, response: { 200: ItemSchema, ...errorResponses(400, 401, 403, 404, 429) } },
      handler: async (request) => {
        const { appId, environment } = callerOf(request)
        const row = await transfers.find(ledgerEnvironmentOf(environment), appId, family, request.params.id)
        if (row === undefined) throw new NotFound(notFound)
        return toTransfer(row)
      },
    })
    app.route({
      ...operations.cancel,
      schema: {
        tags: [tag],
        summary: `Cancel a ${what} still awaiting funds`,
        description: 'Only while awaiting_funds (nothing has moved yet); 409 in any other state.',
        params: Params,
        response: { 200: ItemSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
      handler: async (request) => {
        const { appId, environment } = callerOf(request)
        return app.transact((tx) => cancelTransfer(tx, context, family, ledgerEnvironmentOf(environment), appId, request.params.id))
      },
    })
    app.route({
      ...operations.simulateFunds,
      schema: {
        tags: [tag],
        summary: `Make the funds a ${what} awaits arrive (sandbox)`,
        description: 'Development keys only. Amounts 13.01, 13.02 and 13.03 take the failure paths (docs/transfers.md).',
        params: Params,
        body: SimulateFundsBody,
        response: { 200: ItemSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
      // No body is an empty one: the funds awaited arrive.
      preValidation: async (request) => {
        request.body ??= {}
      },
      handler: async (request) => {
        const { appId, environment } = callerOf(request)
        const ledgerEnvironment = ledgerEnvironmentOf(environment)
        const id = request.params.id
        // Another application's transfer answers 404 to any key, as a missing one does.
        const row = await transfers.find(ledgerEnvironment, appId, family, id)
        if (environment !== 'development') {
          if (row === undefined) throw new NotFound(notFound)
          throw new ApiError(403, SANDBOX_ONLY)
        }
        const amount = request.body.amount === undefined || row === undefined ? undefined : amountField(request, 'amount', request.body.amount, row.currency as Currency)
        return app.transact((tx) => receiveFunds(tx, context, family, ledgerEnvironment, appId, id, amount))
      },
    })
  }
  return plugin
}

export const transferRoutes: FastifyPluginAsyncTypebox<TransferRoutesOptions> = async (app, options) => {
  const context: TransferContext = { rates: options.exchangeRates, timings: options.drainTimings, now: Date.now, receiving: options.receiving, payouts: options.payouts }
  const post = creationRoutes(app, context, TransferSchema, errorResponses(400, 401, 403, 404, 409, 429, 503))

  post(
    operation(transfersManifest, 'transferControllerCreateDirectBankTransfer'),
    {
      tags: ['transfers'],
      summary: 'Money into a wallet from a bank',
      description: "Starts awaiting_funds; source_deposit_instructions say how the sender pays (bank details and the deposit_message to quote). Once the funds arrive they are converted to the wallet's stablecoin and credited.",
      body: DirectBankTransferBody,
    },
    async ({ body, request, tx, environment, appId }) => {
      const sourceCurrency = oneOf('sourceCurrency', body.sourceCurrency, FIATS)
      const destinationCurrency = oneOf('destinationCurrency', body.destinationCurrency, STABLECOINS)
      const rail = railFor('paymentRail', body.paymentRail, sourceCurrency)
      checkAchReference(body.ach_reference)
      const amount = amountField(request, 'amount', body.amount, sourceCurrency)
      const developerFee = developerFeeField(request, body.developer_fee, sourceCurrency, amount)
      const wallet = await requireWallet(tx, environment, appId, body.walletId)
      const references = { wire_message: body.wire_message, sepa_reference: body.sepa_reference, ach_reference: body.ach_reference }
      return {
        environment,
        appId,
        kind: 'direct_bank',
        wallet,
        currency: sourceCurrency,
        amount,
        developerFee,
        destinationCurrency,
        source: { payment_rail: rail, currency: sourceCurrency, ...references },
        destination: { payment_rail: wallet.chain, currency: destinationCurrency, bridge_wallet_id: wallet.id, to_address: wallet.address ?? undefined },
        instructions: bankInstructions(sourceCurrency),
      }
    },
  )

  post(
    operation(transfersManifest, 'transferControllerCreateDirectWalletTransfer'),
    {
      tags: ['transfers'],
      summary: 'Money into a wallet from any address on a chain',
      description: 'Starts awaiting_funds; source_deposit_instructions give the address to send to on `network`.',
      body: DirectWalletTransferBody,
    },
    async ({ body, request, tx, environment, appId }) => {
      const network = oneOf('network', body.network, INBOUND_NETWORKS)
      const currency = oneOf('stableCoinCurrency', body.stableCoinCurrency, STABLECOINS)
      const amount = amountField(request, 'amount', body.amount, currency)
      const developerFee = developerFeeField(request, body.developer_fee, currency, amount)
      const wallet = await requireWallet(tx, environment, appId, body.walletId)
      return {
        environment,
        appId,
        kind: 'direct_wallet',
        wallet,
        currency,
        amount,
        developerFee,
        destinationCurrency: currency,
        source: { payment_rail: network, currency },
        destination: { payment_rail: wallet.chain, currency, bridge_wallet_id: wallet.id, to_address: wallet.address ?? undefined },
        instructions: { to_address: depositAddress(network) },
      }
    },
  )

  post(
    operation(transfersManifest, 'transferControllerCreateExternalBankTransfer'),
    {
      tags: ['transfers'],
      summary: "Money out of a wallet to a bank account",
      description: 'amount + developer_fee are reserved on the wallet at once (409 with the balance available when it does not hold them); the bank account receives amount converted to destinationCurrency at the buy rate.',
      body: ExternalBankTransferBody,
    },
    async ({ body, request, tx, environment, appId }) => {
      const sourceCurrency = oneOf('sourceCurrency', body.sourceCurrency, STABLECOINS)
      const destinationCurrency = oneOf('destinationCurrency', body.destinationCurrency, FIATS)
      const rail = railFor('destinationPaymentRail', body.destinationPaymentRail, destinationCurrency)
      const fiat = environment === 'live' ? liveFiatRefusal('destinationPaymentRail', rail) : undefined
      if (fiat !== undefined) throw new InvalidRequest(fiat)
      checkAchReference(body.ach_reference)
      const amount = requiredAmount(request, 'amount', body.amount, sourceCurrency)
      const developerFee = developerFeeField(request, body.developer_fee, sourceCurrency, amount)
      const wallet = await requireWallet(tx, environment, appId, body.sourceWalletId)
      const { wire_message, sepa_reference, swift_reference, spei_reference, swift_charges, ach_reference } = body
      return {
        environment,
        appId,
        kind: 'external_bank',
        wallet,
        currency: sourceCurrency,
        amount,
        developerFee,
        destinationCurrency,
        source: { payment_rail: 'bridge_wallet', currency: sourceCurrency, bridge_wallet_id: wallet.id },
        destination: { payment_rail: rail, currency: destinationCurrency, external_account_id: body.external_account_id, wire_message, sepa_reference, swift_reference, spei_reference, swift_charges, ach_reference },
      }
    },
  )

  post(
    operation(transfersManifest, 'transferControllerCreateExternalStablecoinTransfer'),
    {
      tags: ['transfers'],
      summary: "Money out of a wallet to a beneficiary's address",
      description: "amount + developer_fee are reserved on the wallet at once (409 with the balance available when it does not hold them); paid out on the wallet's chain.",
      body: ExternalStablecoinTransferBody,
    },
    async ({ body, request, tx, environment, appId }) => {
      const sourceCurrency = oneOf('sourceCurrency', body.sourceCurrency, STABLECOINS)
      const destinationCurrency = oneOf('destinationCurrency', body.destinationCurrency, STABLECOINS)
      const amount = requiredAmount(request, 'amount', body.amount, sourceCurrency)
      const developerFee = developerFeeField(request, body.developer_fee, sourceCurrency, amount)
      const wallet = await requireWallet(tx, environment, appId, body.sourceWalletId)
      const destination: NewTransfer['destination'] = { payment_rail: wallet.chain, currency: destinationCurrency, beneficiary_id: body.beneficiaryId }
      const toAddress = payoutAddressOf(wallet.chain, body.destinationAddress, environment, destinationCurrency, options.payouts)
      if (toAddress !== undefined) destination.to_address = toAddress
      if (body.blockchain_memo !== undefined) destination.blockchain_memo = body.blockchain_memo
      return {
        environment,
        appId,
        kind: 'external_stablecoin',
        wallet,
        currency: sourceCurrency,
        amount,
        developerFee,
        destinationCurrency,
        source: { payment_rail: 'bridge_wallet', currency: sourceCurrency, bridge_wallet_id: wallet.id },
        destination,
      }
    },
  )

  post(
    operation(transfersManifest, 'transferControllerCreateStablecoinConversion'),
    {
      tags: ['transfers'],
      summary: 'USDC to EURC, or back, inside a wallet',
      description: 'At the buy rate of the moment, stored on the transfer; 503 with Retry-After when no fresh rate is known (never guessed). The amount is reserved at once (409 when the wallet does not hold it).',
      body: StablecoinConversionBody,
    },
    async ({ body, request, tx, environment, appId }) => {
      const sourceCurrency = oneOf('sourceCurrency', body.sourceCurrency, STABLECOINS)
      const destinationCurrency = oneOf('destinationCurrency', body.destinationCurrency, STABLECOINS)
      if (sourceCurrency === destinationCurrency) throw new InvalidRequest('destinationCurrency must differ from sourceCurrency')
      const amount = amountField(request, 'amount', body.amount, sourceCurrency)
      const wallet = await requireWallet(tx, environment, appId, body.walletId)
      if (body.sourceNetwork.toLowerCase() !== wallet.chain) throw new InvalidRequest(`sourceNetwork must be the wallet's chain, ${wallet.chain}`)
      return {
        environment,
        appId,
        kind: 'stablecoin_conversion',
        wallet,
        currency: sourceCurrency,
        amount,
        developerFee: 0n,
        destinationCurrency,
        source: { payment_rail: wallet.chain, currency: sourceCurrency, bridge_wallet_id: wallet.id },
        destination: { payment_rail: wallet.chain, currency: destinationCurrency, bridge_wallet_id: wallet.id },
      }
    },
  )

  await followRoutes('transfer', context, NOT_FOUND, {
    list: operation(transfersManifest, 'transferControllerFindAll'),
    find: operation(transfersManifest, 'transferControllerFindOne'),
    cancel: operation(transfersManifest, 'transferControllerCancel'),
    simulateFunds: operation(transfersManifest, 'transferControllerSimulateFunds'),
  })(app, options)
}
