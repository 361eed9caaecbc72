import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { callerOf } from '../../auth/authenticate.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import type { MoneyContext } from '../../ledger/money-context.js'
import { errorResponses } from '../../schemas/common.js'
import { IDEMPOTENCY_KEY_HEADER } from '../../idempotency/plugin.js'
import { operation } from '../manifest.js'
import { actOnHeld, listHeld, listHeldActions } from './actions.js'
import { heldManifest } from './manifest.js'
import { DrainIdParams, HeldActionListSchema, HeldActionSchema, type HeldActionName, type HeldKind, HeldListSchema, RefundBody, ReleaseBody, RetryBody, TransferIdParams } from './schemas.js'

export interface HeldRoutesOptions {
  money: MoneyContext
}

const SUMMARIES: Readonly<Record<HeldActionName, string>> = {
  retry: 'Retry one in error: submitted again at once (a pending entry reserves its payout), the scheduler takes it on',
  refund: 'Refund its held funds to the return address (given one first when there is none)',
  release: "Release its held funds into one of the application's wallets",
}

export const heldRoutes: FastifyPluginAsyncTypebox<HeldRoutesOptions> = async (app, options) => {
  app.route({
    ...operation(heldManifest, 'heldControllerFindAll'),
    schema: {
      tags: ['held'],
      summary: 'What money of the application is held in clearing for an operator, and why',
      description: "Drains and money in that ended in error, undeliverable, returned or canceled with nowhere to go, or whose refund failed, in the key's environment, longest held first (docs/operations.md#held-money). Needs held:read, which a key has only when it is named.",
      response: { 200: HeldListSchema, ...errorResponses(401, 403, 429) },
    },
    handler: async (request) => {
      const { appId, environment } = callerOf(request)
      return { data: await listHeld(app.db, ledgerEnvironmentOf(environment), appId) }
    },
  })

  app.route({
    ...operation(heldManifest, 'heldControllerFindActions'),
    schema: {
      tags: ['held'],
      summary: "The audit of operators' actions on held money, newest first (the last 100)",
      response: { 200: HeldActionListSchema, ...errorResponses(401, 403, 429) },
    },
    handler: async (request) => {
      const { appId, environment } = callerOf(request)
      return { data: await listHeldActions(app.db, ledgerEnvironmentOf(environment), appId) }
    },
  })

  async function act(request: FastifyRequest, kind: HeldKind, id: string, action: HeldActionName, body: { by: string; reason: string; return_address?: string; wallet_id?: string }) {
    const { appId, environment } = callerOf(request)
    const header = request.headers[IDEMPOTENCY_KEY_HEADER]
    const { action: done } = await app.transact((tx) =>
      actOnHeld(tx, options.money, {
        environment: ledgerEnvironmentOf(environment),
        appId,
        kind,
        id,
        action,
        by: body.by,
        reason: body.reason,
        idempotencyKey: typeof header === 'string' ? `api:${header}` : undefined,
        returnAddress: body.return_address,
        walletId: body.wallet_id,
      }),
    )
    return done
  }

  const responses = { 200: HeldActionSchema, ...errorResponses(400, 401, 403, 404, 409, 429) }
  const notes = ' Needs held:manage, which a key has only when it is named; one ledger entry and one audit record (docs/operations.md#held-money).'

  app.route({
    ...operation(heldManifest, 'heldControllerRetryDrain'),
    schema: { tags: ['held'], summary: `Drain: ${SUMMARIES.retry}`, description: `409 unless the drain is in error.${notes}`, params: DrainIdParams, body: RetryBody, response: responses },
    handler: (request) => act(request, 'drain', request.params.heldDrainId, 'retry', request.body),
  })
  app.route({
    ...operation(heldManifest, 'heldControllerRefundDrain'),
    schema: { tags: ['held'], summary: `Drain: ${SUMMARIES.refund}`, description: `Sandbox: posted at once; live: a refund payout on chain (refund_in_flight).${notes}`, params: DrainIdParams, body: RefundBody, response: responses },
    handler: (request) => act(request, 'drain', request.params.heldDrainId, 'refund', request.body),
  })
  app.route({
    ...operation(heldManifest, 'heldControllerReleaseDrain'),
    schema: { tags: ['held'], summary: `Drain: ${SUMMARIES.release}`, description: `The whole deposit, no developer fee.${notes}`, params: DrainIdParams, body: ReleaseBody, response: responses },
    handler: (request) => act(request, 'drain', request.params.heldDrainId, 'release', request.body),
  })
  app.route({
    ...operation(heldManifest, 'heldControllerRetryTransfer'),
    schema: { tags: ['held'], summary: `Transfer: ${SUMMARIES.retry}`, description: `409 unless the transfer (money in) is in error.${notes}`, params: TransferIdParams, body: RetryBody, response: responses },
    handler: (request) => act(request, 'transfer', request.params.heldTransferId, 'retry', request.body),
  })
  app.route({
    ...operation(heldManifest, 'heldControllerRefundTransfer'),
    schema: { tags: ['held'], summary: `Transfer: ${SUMMARIES.refund}`, description: `Sandbox only: a live transfer's refund is not sent by the platform yet (409).${notes}`, params: TransferIdParams, body: RefundBody, response: responses },
    handler: (request) => act(request, 'transfer', request.params.heldTransferId, 'refund', request.body),
  })
  app.route({
    ...operation(heldManifest, 'heldControllerReleaseTransfer'),
    schema: { tags: ['held'], summary: `Transfer: ${SUMMARIES.release}`, description: `The whole amount, no developer fee (a fiat as its stablecoin, one to one).${notes}`, params: TransferIdParams, body: ReleaseBody, response: responses },
    handler: (request) => act(request, 'transfer', request.params.heldTransferId, 'release', request.body),
  })
}
