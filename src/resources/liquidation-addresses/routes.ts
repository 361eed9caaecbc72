import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { callerOf } from '../../auth/authenticate.js'
import type { Receiving } from '../../chains/receiving.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import { liveFiatRefusal } from '../../ledger/simulated-rails.js'
import { RECEIVING_ADDRESSES_HOW, receivingAddressTaken, takeReceivingAddress } from '../receiving-addresses/public.js'
import { customerLookup, findCustomer } from '../customers/public.js'
import { pipelinedOutcomes } from '../../db/prepared.js'
import { toLiquidationAddress } from './objects.js'
import { LiquidationAddressesRepository } from './repository.js'
import { InvalidRequest, NotFound } from '../../errors.js'
import { errorResponses } from '../../schemas/common.js'
import {
  CreateLiquidationAddressBody,
  CustomerLiquidationAddressesParams,
  LiquidationAddressParams,
  LiquidationAddressSchema,
} from './schemas.js'
import { operation } from '../manifest.js'
import { liquidationAddressesManifest } from './manifest.js'

const CUSTOMER_NOT_FOUND = 'Customer not found'

export interface LiquidationAddressesOptions {
  receiving: Receiving
}

export const liquidationAddressRoutes: FastifyPluginAsyncTypebox<LiquidationAddressesOptions> = async (app, { receiving }) => {
  const liquidationAddresses = new LiquidationAddressesRepository(app.db)

  /** 404 unless the customer belongs to the caller's application. */
  async function requireCustomer(appId: string, customerId: string): Promise<void> {
    if ((await findCustomer(app.db, appId, customerId)) === undefined) throw new NotFound(CUSTOMER_NOT_FOUND)
  }

  app.route({
    ...operation(liquidationAddressesManifest, 'liquidationAddressControllerCreateLiquidationAddress'),
    schema: {
      tags: ['liquidation addresses'],
      summary: 'Create a liquidation address',
      params: CustomerLiquidationAddressesParams,
      body: CreateLiquidationAddressBody,
      response: { 201: LiquidationAddressSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
    },
    handler: async (request, reply) => {
      const { appId, environment: keyEnvironment } = callerOf(request)
      const environment = ledgerEnvironmentOf(keyEnvironment)
      const { chain, currency } = request.body
      const address = await app.transact(async (tx) => {
        const { customerId } = request.params
        // Live, funds sent to the address must reach the platform: only an address it receives on (docs/chains.md).
        const refusal =
          environment === 'live' ? (liveFiatRefusal('destination_payment_rail', request.body.destination_payment_rail ?? 'ach') ?? receiving.offReason(chain, currency)) : undefined
        if (refusal !== undefined) {
          if ((await findCustomer(tx.db, appId, customerId)) === undefined) throw new NotFound(CUSTOMER_NOT_FOUND)
          throw new InvalidRequest(refusal)
        }
        const addresses = new LiquidationAddressesRepository(tx.db)
        const { row, insert } = addresses.creation(appId, customerId, request.body)
        const claim = { environment, appId, chain, currency, address: request.body.address, liquidationAddressId: row.id }
        // One round trip on PostgreSQL: the customer's lookup, the insert, the receiving address's
        // take and the outbox's read go together. The lookup decides first, so another
        // application's customer answers 404 whatever the insert met (a taken address: 409).
        const [customer, inserted, take, outbox] = await pipelinedOutcomes(tx.db, customerLookup(tx.db, appId, customerId), insert, takeReceivingAddress(tx.db, claim), tx.events.outboxRead(appId))
        if (!customer.ok) throw customer.error
        if (customer.rows.length === 0) throw new NotFound(CUSTOMER_NOT_FOUND)
        LiquidationAddressesRepository.inserted(inserted)
        if (!take.ok) throw take.error
        if (!outbox.ok) throw outbox.error
        if (!(await receivingAddressTaken(tx.db, claim, take.rows)) && environment === 'live') {
          throw new InvalidRequest(
            `A live liquidation address must be a receiving address of this application for ${chain} ${currency} that no liquidation address has taken yet: get one with ${RECEIVING_ADDRESSES_HOW}`,
          )
        }
        const created = toLiquidationAddress(row)
        await tx.events.emit(appId, 'liquidation_address.created', created, outbox)
        return created
      })
      return reply.code(201).send(address)
    },
  })

  app.route({
    ...operation(liquidationAddressesManifest, 'liquidationAddressControllerGetLiquidationAddresses'),
    schema: {
      tags: ['liquidation addresses'],
      summary: "List a customer's liquidation addresses",
      params: CustomerLiquidationAddressesParams,
      response: { 200: Type.Array(LiquidationAddressSchema), ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      await requireCustomer(appId, request.params.customerId)
      const rows = await liquidationAddresses.list(appId, request.params.customerId)
      return rows.map(toLiquidationAddress)
    },
  })

  app.route({
    ...operation(liquidationAddressesManifest, 'liquidationAddressControllerGetLiquidationAddress'),
    schema: {
      tags: ['liquidation addresses'],
      summary: 'Get a liquidation address',
      params: LiquidationAddressParams,
      response: { 200: LiquidationAddressSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      await requireCustomer(appId, request.params.customerId)
      const row = await liquidationAddresses.find(appId, request.params.customerId, request.params.liquidationAddressId)
      if (row === undefined) throw new NotFound('Liquidation address not found')
      return toLiquidationAddress(row)
    },
  })
}
