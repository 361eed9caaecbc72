import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { callerOf } from '../../auth/authenticate.js'
import type { Receiving } from '../../chains/receiving.js'
import { isoOf } from '../../db/time.js'
import { InvalidRequest, NotFound } from '../../errors.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import { errorResponses } from '../../schemas/common.js'
import { operation } from '../manifest.js'
import { receivingAddressesManifest } from './manifest.js'
import { toReceivingAddress } from './objects.js'
import { madeUpEvmAddress, ReceivingAddressesRepository } from './repository.js'
import { CreateReceivingAddressBody, ListReceivingAddressesQuery, ReceivingAddressListSchema, ReceivingAddressParams, ReceivingAddressSchema } from './schemas.js'

export interface ReceivingAddressesOptions {
  receiving: Receiving
}

export const receivingAddressRoutes: FastifyPluginAsyncTypebox<ReceivingAddressesOptions> = async (app, { receiving }) => {
  const repository = new ReceivingAddressesRepository(app.db)

  app.route({
    ...operation(receivingAddressesManifest, 'receivingAddressControllerCreate'),
    schema: {
      tags: ['receiving addresses'],
      summary: 'Get a receiving address for a liquidation address',
      description:
        'An address the platform receives on, for the chain and currency: give it as `address` when creating a liquidation address (a production key must; docs/chains.md). A production key gets an address derived from the operator\'s key, and is refused (400) on a chain or currency the platform does not receive live; a development key gets a made-up sandbox address.',
      body: CreateReceivingAddressBody,
      response: { 201: ReceivingAddressSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request, reply) => {
      const { appId, environment: keyEnvironment } = callerOf(request)
      const environment = ledgerEnvironmentOf(keyEnvironment)
      const { chain, currency } = request.body
      if (environment === 'live') {
        const off = receiving.offReason(chain, currency)
        if (off !== undefined) throw new InvalidRequest(off)
      }
      const created = await app.transact(async (tx) => {
        const now = Date.now()
        const address =
          environment === 'live' ? await receiving.allocate(tx.db, chain, { appId, ownerType: 'unassigned', ownerId: null, currency }, now) : madeUpEvmAddress()
        return new ReceivingAddressesRepository(tx.db).create({ environment, appId, chain, currency, address, createdAt: isoOf(now) })
      })
      return reply.code(201).send(toReceivingAddress(created))
    },
  })

  app.route({
    ...operation(receivingAddressesManifest, 'receivingAddressControllerFindAll'),
    schema: {
      tags: ['receiving addresses'],
      summary: "List the application's receiving addresses",
      querystring: ListReceivingAddressesQuery,
      response: { 200: ReceivingAddressListSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request) => {
      const { appId, environment } = callerOf(request)
      const skip = request.query.skip ?? 0
      const take = request.query.take ?? 10
      const { rows, total } = await repository.list(ledgerEnvironmentOf(environment), appId, { skip, take })
      return { data: rows.map(toReceivingAddress), total, skip, take }
    },
  })

  app.route({
    ...operation(receivingAddressesManifest, 'receivingAddressControllerFindOne'),
    schema: {
      tags: ['receiving addresses'],
      summary: 'Get a receiving address',
      params: ReceivingAddressParams,
      response: { 200: ReceivingAddressSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const { appId, environment } = callerOf(request)
      const row = await repository.find(ledgerEnvironmentOf(environment), appId, request.params.id)
      if (row === undefined) throw new NotFound('Receiving address not found')
      return toReceivingAddress(row)
    },
  })
}
