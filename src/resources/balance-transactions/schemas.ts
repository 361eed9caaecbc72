import { type Static, Type } from 'typebox'
import { Timestamp } from '../../schemas/common.js'

/** What a movement is, from what its entry belongs to; `fee` is every developer fee collected. */
export const BALANCE_TRANSACTION_TYPES = ['deposit', 'drain', 'transfer', 'payment_intent', 'test_payment', 'refund', 'release', 'fee', 'adjustment'] as const
export type BalanceTransactionType = (typeof BALANCE_TRANSACTION_TYPES)[number]

export const BALANCE_TRANSACTION_CURRENCIES = ['usdc', 'eurc'] as const

const EXAMPLE = {
  id: 'txn_019ab0e4-7a10-7c3d-8e9f-0a1b2c3d4e5f_wallet_usdc',
  type: 'drain',
  balance: 'wallet',
  currency: 'usdc',
  amount: '100.250000',
  fee: '1.503750',
  net: '98.746250',
  status: 'posted',
  source: { type: 'drain', id: '019ab0e4-7a0f-7b2c-9d8e-1f2a3b4c5d6e' },
  created_at: '2026-11-21T19:05:13.000Z',
}

const money = (description: string, example: string) => Type.String({ pattern: '^-?\\d+\\.\\d+$', description, examples: [example] })

export const BalanceTransactionSchema = Type.Object(
  {
    id: Type.String({ description: 'txn_<ledger entry id>_<balance>_<currency>: one per entry, balance and currency', examples: [EXAMPLE.id] }),
    type: Type.Enum([...BALANCE_TRANSACTION_TYPES], { description: 'what moved it: fee for a developer fee collected into the fee balance; otherwise what its entry belongs to' }),
    balance: Type.Enum(['wallet', 'fees'], { description: "which balance it moves: the wallets' (GET /balance) or the developer fees collected" }),
    currency: Type.String({ examples: [EXAMPLE.currency] }),
    amount: money('the gross movement, signed: net + fee', EXAMPLE.amount),
    fee: money('the developer fee the same movement collected into the fee balance (0 on a fee movement itself)', EXAMPLE.fee),
    net: money('the change of the balance, signed (negative: money out or reserved)', EXAMPLE.net),
    status: Type.Enum(['pending', 'posted'], { description: 'pending: a reservation, already out of the balance, not yet final; posted: final' }),
    source: Type.Object({ type: Type.String({ examples: ['drain'] }), id: Type.String({ examples: [EXAMPLE.source.id] }) }, { description: 'the object the movement belongs to' }),
    created_at: Timestamp,
  },
  { $id: 'BalanceTransaction' },
)
export type BalanceTransaction = Static<typeof BalanceTransactionSchema>

export const MAX_TYPES = BALANCE_TRANSACTION_TYPES.length

export const ListBalanceTransactionsQuery = Type.Object(
  {
    type: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: MAX_TYPES,
        description: `only these types, repeated or comma-separated (${BALANCE_TRANSACTION_TYPES.join(', ')}); type=fee is the fee report`,
      }),
    ),
    currency: Type.Optional(Type.Enum([...BALANCE_TRANSACTION_CURRENCIES], { description: 'only movements in this currency' })),
    created_after: Type.Optional(Type.String({ format: 'date-time', description: 'only movements created after this instant (exclusive), ISO 8601 with a Z or an offset' })),
    created_before: Type.Optional(Type.String({ format: 'date-time', description: 'only movements created before this instant (exclusive)' })),
    starting_after: Type.Optional(Type.String({ pattern: '^txn_[0-9a-fA-F-]{36}_(wallet|fees)_[a-z]+$', 'x-message': 'starting_after must be a balance transaction id (txn_…)', description: 'the next page: the movements after this one (the last of the page before)' })),
    take: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'movements to return (1-100)' })),
  },
  { additionalProperties: false },
)

export const BalanceTransactionListSchema = Type.Object(
  {
    data: Type.Array(BalanceTransactionSchema, { description: 'newest first' }),
    has_more: Type.Boolean({ description: 'whether more movements match after this page' }),
  },
  { $id: 'BalanceTransactionList', examples: [{ data: [EXAMPLE], has_more: false }] },
)
