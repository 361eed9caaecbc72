import { type Static, Type } from 'typebox'
import { Livemode, Pagination, Timestamp, UuidParam } from '../../schemas/common.js'

const STATUSES = ['pending', 'confirmed', 'held', 'removed', 'reorged', 'reversed'] as const
const EXAMPLE_ADDRESS = '0x8f3a1c2be4d5f60718293a4b5c6d7e8f90a1b2c3'

const Reference = (description: string) =>
  Type.Object({ type: Type.String({ examples: ['liquidation_address'] }), id: Type.Union([Type.String(), Type.Null()]) }, { description })

/** A token transfer to a receiving address, seen on chain (src/chains/objects.ts, DepositObject). */
export const DepositSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    chain: Type.String({ examples: ['base'] }),
    currency: Type.String({ examples: ['usdc'] }),
    amount: Type.String({ pattern: '^(0|[1-9][0-9]*)\\.[0-9]{6}$', examples: ['25.000000'], description: 'a decimal string in the currency' }),
    from_address: Type.String({ examples: ['0x70997970c51812dc3a010c7d01b50e0d17dc79c8'] }),
    to_address: Type.String({ examples: [EXAMPLE_ADDRESS], description: 'the receiving address paid to' }),
    tx_hash: Type.String({ examples: ['0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060'] }),
    log_index: Type.Integer({ minimum: 0 }),
    block_number: Type.Integer({ minimum: 0 }),
    status: Type.Enum([...STATUSES], {
        description:
          'pending: seen, counting confirmations; confirmed: credited to what owns the address; held: confirmed but not taken by its owner (see reason), kept in the ledger; removed: a reorg took its block away before it was confirmed; reorged: a credited one whose block a reorg took away, until the watcher has read the new chain; reversed: credited, then taken away by a reorg deeper than the confirmations (an operator alert)',
    }),
    confirmations: Type.Integer({ minimum: 0, description: 'blocks on top of its own, its own included, capped at confirmations_required' }),
    confirmations_required: Type.Integer({ minimum: 1 }),
    destination: Reference('what the receiving address belongs to: a liquidation_address, wallet or transfer (a payment intent or direct-wallet transfer), or unassigned'),
    credited_to: Type.Union([Type.Object({ type: Type.String({ examples: ['drain'] }), id: Type.String() }), Type.Null()], {
      description: 'what the deposit became once credited (a drain, the wallet, the transfer); null before, and for a held one',
    }),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'why it is held, removed or reversed' }),
    livemode: Livemode,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Deposit' },
)
export type Deposit = Static<typeof DepositSchema>

export const DepositListSchema = Type.Object({ data: Type.Array(DepositSchema), total: Type.Integer(), skip: Type.Integer(), take: Type.Integer() }, { $id: 'DepositList' })
export type DepositList = Static<typeof DepositListSchema>

export const ListDepositsQuery = Type.Object({
  ...Pagination,
  status: Type.Optional(Type.Enum([...STATUSES], { description: 'only deposits in this status' })),
  chain: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
})
export type ListDepositsQuery = Static<typeof ListDepositsQuery>

export const DepositParams = Type.Object({ id: UuidParam('deposit') })
