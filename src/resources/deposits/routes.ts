import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { callerOf } from '../../auth/authenticate.js'
import { findDeposit, listDeposits } from '../../chains/deposits-read.js'
import type { Receiving } from '../../chains/receiving.js'
import { NotFound } from '../../errors.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import { errorResponses } from '../../schemas/common.js'
import { operation } from '../manifest.js'
import { depositsManifest } from './manifest.js'
import { type Deposit, type DepositList, DepositListSchema, DepositParams, DepositSchema, ListDepositsQuery } from './schemas.js'

export interface DepositRoutesOptions {
  receiving: Receiving
}

export const depositRoutes: FastifyPluginAsyncTypebox<DepositRoutesOptions> = async (app, { receiving }) => {
  const required = (chain: string) => receiving.chain(chain)?.confirmations ?? 1

  app.route({
    ...operation(depositsManifest, 'depositControllerFindAll'),
    schema: {
      tags: ['deposits'],
      summary: 'List deposits seen on chain',
      description:
        "Token transfers to the application's live receiving addresses that the platform saw on chain, newest first: pending ones with their confirmations, credited, held, and those a reorg took away (docs/chains.md). The sandbox's deposits are simulated and never listed here.",
      querystring: ListDepositsQuery,
      response: { 200: DepositListSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request): Promise<DepositList> => {
      const { appId, environment } = callerOf(request)
      const skip = request.query.skip ?? 0
      const take = request.query.take ?? 10
      const filters = { ...(request.query.status === undefined ? {} : { status: request.query.status }), ...(request.query.chain === undefined ? {} : { chain: request.query.chain }) }
      const { deposits, total } = await listDeposits(app.db, ledgerEnvironmentOf(environment), appId, filters, { skip, take }, required)
      return { data: deposits, total, skip, take }
    },
  })

  app.route({
    ...operation(depositsManifest, 'depositControllerFindOne'),
    schema: {
      tags: ['deposits'],
      summary: 'Get a deposit seen on chain',
      params: DepositParams,
      response: { 200: DepositSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request): Promise<Deposit> => {
      const { appId, environment } = callerOf(request)
      const deposit = await findDeposit(app.db, ledgerEnvironmentOf(environment), appId, request.params.id.toLowerCase(), required)
      if (deposit === undefined) throw new NotFound('Deposit not found')
      return deposit
    },
  })
}
