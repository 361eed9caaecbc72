import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { callerOf } from '../../auth/authenticate.js'
import { InvalidRequest } from '../../errors.js'
import { formatAmount } from '../../ledger/amount.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import { type Movement, readMovements } from '../../ledger/movements.js'
import { errorResponses } from '../../schemas/common.js'
import { instantOf } from '../../validation/instant.js'
import { operation } from '../manifest.js'
import { balanceTransactionsManifest } from './manifest.js'
import { BALANCE_TRANSACTION_TYPES, type BalanceTransaction, BalanceTransactionListSchema, type BalanceTransactionType, ListBalanceTransactionsQuery } from './schemas.js'

/** A wallet movement's type, from what its entry belongs to. */
const TYPE_OF_REASON: Readonly<Record<string, BalanceTransactionType>> = {
  deposit: 'deposit',
  drain: 'drain',
  transfer: 'transfer',
  payment_intent: 'payment_intent',
  test_payment: 'test_payment',
  test_payment_refund: 'refund',
  drain_refund: 'refund',
  held_release: 'release',
}

const typeOf = (movement: Movement): BalanceTransactionType => (movement.balance === 'fees' ? 'fee' : (TYPE_OF_REASON[movement.reasonType] ?? 'adjustment'))

const idOf = (movement: Movement) => `txn_${movement.entryId}_${movement.balance}_${movement.currency}`

function toBalanceTransaction(movement: Movement): BalanceTransaction {
  return {
    id: idOf(movement),
    type: typeOf(movement),
    balance: movement.balance,
    currency: movement.currency,
    amount: formatAmount(movement.net + movement.fee, movement.currency),
    fee: formatAmount(movement.fee, movement.currency),
    net: formatAmount(movement.net, movement.currency),
    status: movement.status,
    source: { type: movement.reasonType, id: movement.reasonId },
    created_at: movement.createdAt,
  }
}

/** Entries read per statement while a page fills. */
const BATCH = 200

/**
 * Every movement of the application's money in the key's environment (src/ledger/movements.ts),
 * newest first, filtered by type, currency and time, paged by cursor.
 */
export const balanceTransactionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.route({
    ...operation(balanceTransactionsManifest, 'balanceTransactionControllerFindAll'),
    schema: {
      tags: ['balance transactions'],
      summary: "List the movements of the application's money",
      description:
        "Newest first: every movement of the wallets' balance and of the developer fees collected, from the ledger, each with its amount, fee and net as decimal strings. The nets of the wallet movements add up to GET /balance; type=fee is the fee report.",
      querystring: ListBalanceTransactionsQuery,
      response: { 200: BalanceTransactionListSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request) => {
      const { appId, environment } = callerOf(request)
      const query = request.query
      let types: Set<string> | undefined
      if (query.type !== undefined) {
        types = new Set(query.type.flatMap((value) => value.split(',')).map((type) => type.trim()))
        for (const type of types) {
          if (!(BALANCE_TRANSACTION_TYPES as readonly string[]).includes(type)) throw new InvalidRequest(`type: ${JSON.stringify(type)} is not a balance transaction type (types: ${BALANCE_TRANSACTION_TYPES.join(', ')})`)
        }
      }
      const createdAfter = instantOf('created_after', query.created_after)
      const createdBefore = instantOf('created_before', query.created_before)
      if (createdAfter !== undefined && createdBefore !== undefined && createdAfter >= createdBefore) throw new InvalidRequest('created_after must be before created_before')
      const take = query.take ?? 10
      const cursor = query.starting_after?.toLowerCase()
      let atOrBefore: { id: string; createdAt: string } | undefined
      if (cursor !== undefined) {
        const entryId = cursor.slice(4, 40)
        const entry = await app.db.selectFrom('ledger_entries').select(['id', 'created_at']).where('id', '=', entryId).where('app_id', '=', appId).where('environment', '=', ledgerEnvironmentOf(environment)).executeTakeFirst()
        if (entry === undefined) throw new InvalidRequest(`starting_after names no balance transaction of this application: ${query.starting_after ?? ''}`)
        atOrBefore = { id: entry.id, createdAt: entry.created_at }
      }
      const found: Movement[] = []
      let passedCursor = cursor === undefined
      await readMovements(app.db, ledgerEnvironmentOf(environment), appId, { currency: query.currency, createdAfter, createdBefore, atOrBefore, batch: BATCH }, (movements) => {
        for (const movement of movements) {
          if (!passedCursor) {
            // The cursor's own entry is read again: its movements up to the cursor were given.
            if (idOf(movement) === cursor) passedCursor = true
            continue
          }
          if (types === undefined || types.has(typeOf(movement))) found.push(movement)
        }
        return found.length <= take
      })
      return { data: found.slice(0, take).map(toBalanceTransaction), has_more: found.length > take }
    },
  })
}
