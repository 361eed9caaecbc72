import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { callerOf } from '../../auth/authenticate.js'
import { NotFound } from '../../errors.js'
import { ApiError } from '../../http/api-error.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import { errorResponses } from '../../schemas/common.js'
import { findCustomer } from '../customers/public.js'
import { findLiquidationAddress } from '../liquidation-addresses/public.js'
import type { ExchangeRates } from '../../ledger/rates.js'
import { type DrainContext, type DrainTimings, receiveDeposit } from './lifecycle.js'
import { toDrain } from './objects.js'
import { DrainsRepository } from './repository.js'
import { AddressDrainsParams, DrainListSchema, DrainParams, DrainSchema, ListDrainsQuery, SimulateDepositBody } from './schemas.js'
import { operation } from '../manifest.js'
import { drainsManifest } from './manifest.js'

const CUSTOMER_NOT_FOUND = 'Customer not found'
const ADDRESS_NOT_FOUND = 'Liquidation address not found'

export interface DrainRoutesOptions {
  /** the exchange rates every conversion uses (EXCHANGE_RATE_MAX_AGE_SECONDS) */
  exchangeRates: ExchangeRates
  /** how long each step waits, by rail (DRAIN_DELAY_*_MS) */
  drainTimings: DrainTimings
}

export const drainRoutes: FastifyPluginAsyncTypebox<DrainRoutesOptions> = async (app, options) => {
  const context: DrainContext = { rates: options.exchangeRates, timings: options.drainTimings, now: Date.now }
  const drains = new DrainsRepository(app.db)

  /** 404 unless the customer and the address belong to the caller's application. */
  async function requireAddress(appId: string, customerId: string, addressId: string): Promise<void> {
    if ((await findCustomer(app.db, appId, customerId)) === undefined) throw new NotFound(CUSTOMER_NOT_FOUND)
    if ((await findLiquidationAddress(app.db, appId, customerId, addressId)) === undefined) throw new NotFound(ADDRESS_NOT_FOUND)
  }

  app.route({
    ...operation(drainsManifest, 'drainControllerSimulateDeposit'),
    schema: {
      tags: ['drains'],
      summary: 'Simulate a deposit to a liquidation address (sandbox)',
      description: 'Development keys only. The deposit becomes a drain that moves on by itself; amounts 13.01, 13.02 and 13.03 take the failure paths (docs/drains.md).',
      params: AddressDrainsParams,
      body: SimulateDepositBody,
      response: { 201: DrainSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
    },
    handler: async (request, reply) => {
      const { appId, environment } = callerOf(request)
      const { customerId, liquidationAddressId } = request.params
      // Another application's address answers 404 to any key, as a missing one does.
      await requireAddress(appId, customerId, liquidationAddressId)
      if (environment !== 'development') throw new ApiError(403, 'Deposits can only be simulated with a development key: a production key moves live money')
      // The intake finds the address by application and customer: it is the customer check.
      const drain = await app.transact((tx) =>
        receiveDeposit(tx, context, {
          environment: ledgerEnvironmentOf(environment),
          appId,
          customerId,
          liquidationAddressId,
          amount: request.body.amount,
          depositTxHash: request.body.deposit_tx_hash,
          fromAddress: request.body.from_address,
        }),
      )
      return reply.code(201).send(drain)
    },
  })

  app.route({
    ...operation(drainsManifest, 'drainControllerFindAll'),
    schema: {
      tags: ['drains'],
      summary: "List a liquidation address's drains, newest first",
      params: AddressDrainsParams,
      querystring: ListDrainsQuery,
      response: { 200: DrainListSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const { appId, environment } = callerOf(request)
      const { customerId, liquidationAddressId } = request.params
      await requireAddress(appId, customerId, liquidationAddressId)
      const skip = request.query.skip ?? 0
      const take = request.query.take ?? 10
      const { rows, total } = await drains.list(ledgerEnvironmentOf(environment), appId, customerId, liquidationAddressId, { skip, take })
      return { data: rows.map(toDrain), total, skip, take }
    },
  })

  app.route({
    ...operation(drainsManifest, 'drainControllerFindOne'),
    schema: {
      tags: ['drains'],
      summary: 'Get a drain',
      params: DrainParams,
      response: { 200: DrainSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const { appId, environment } = callerOf(request)
      const { customerId, liquidationAddressId, drainId } = request.params
      await requireAddress(appId, customerId, liquidationAddressId)
      const row = await drains.find(ledgerEnvironmentOf(environment), appId, customerId, liquidationAddressId, drainId)
      if (row === undefined) throw new NotFound('Drain not found')
      return toDrain(row)
    },
  })
}
