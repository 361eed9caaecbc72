import { Type, type Static } from 'typebox'
import { Pagination, Timestamp, UuidParam } from '../../schemas/common.js'
import { CHAINS } from '../../validation/chain-address.js'
import { CURRENCIES, DESTINATION_CURRENCIES, PAYMENT_RAILS } from '../liquidation-addresses/schemas.js'

export const DRAIN_STATES = ['funds_received', 'payment_submitted', 'payment_processed', 'undeliverable', 'returned', 'refunded', 'error', 'canceled'] as const
export type DrainState = (typeof DRAIN_STATES)[number]

/** A deposit's amount: a plain decimal in the address's currency (its decimals are checked against the currency). */
export const DEPOSIT_AMOUNT_PATTERN = '^(0|[1-9][0-9]{0,9})(\\.[0-9]{1,18})?$'

export const SimulateDepositBody = Type.Object(
  {
    amount: Type.String({
      pattern: DEPOSIT_AMOUNT_PATTERN,
      'x-message': 'amount must be a decimal string greater than 0 and at most 1000000000 (e.g. "100.25")',
      description: "the deposit, in the liquidation address's currency",
      examples: ['100.25'],
    }),
    deposit_tx_hash: Type.Optional(
      Type.String({
        pattern: '^[0-9A-Za-z]{16,128}$',
        'x-message': 'deposit_tx_hash must be 16 to 128 letters and digits (0x-prefixed hex on EVM chains)',
        description: 'the incoming transaction; generated when absent. One drain per hash and address.',
      }),
    ),
    from_address: Type.Optional(Type.String({ maxLength: 128, description: "the sender's address, valid on the address's chain" })),
  },
  { additionalProperties: false },
)
export type SimulateDepositBody = Static<typeof SimulateDepositBody>

const Decimal = Type.String({ description: 'a decimal string', examples: ['100.050000'] })

export const DrainDestinationSchema = Type.Object({
  payment_rail: Type.Enum([...PAYMENT_RAILS]),
  currency: Type.Enum([...DESTINATION_CURRENCIES]),
  to_address: Type.Optional(Type.String()),
  external_account_id: Type.Optional(Type.String()),
  bridge_wallet_id: Type.Optional(Type.String()),
  blockchain_memo: Type.Optional(Type.String()),
  wire_message: Type.Optional(Type.String()),
  sepa_reference: Type.Optional(Type.String()),
  ach_reference: Type.Optional(Type.String()),
  imad: Type.Optional(Type.String()),
  trace_number: Type.Optional(Type.String()),
})
export type DrainDestination = Static<typeof DrainDestinationSchema>

export const DrainReceiptSchema = Type.Object({
  initial_amount: Decimal,
  developer_fee: Decimal,
  subtotal_amount: Decimal,
  destination_currency: Type.Enum([...DESTINATION_CURRENCIES]),
  /** known once the payment is submitted */
  exchange_rate: Type.Optional(Type.String({ description: 'destination units per deposit unit, as used' })),
  converted_amount: Type.Optional(Decimal),
  gas_fee: Type.Optional(Decimal),
  outgoing_amount: Type.Optional(Decimal),
})

export const DrainSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    customer_id: Type.String({ format: 'uuid' }),
    liquidation_address_id: Type.String({ format: 'uuid' }),
    state: Type.Enum([...DRAIN_STATES]),
    amount: Decimal,
    currency: Type.Enum([...CURRENCIES]),
    deposit_tx_hash: Type.String(),
    from_address: Type.Optional(Type.String()),
    source_payment_rail: Type.Enum([...CHAINS]),
    destination: DrainDestinationSchema,
    receipt: DrainReceiptSchema,
    destination_tx_hash: Type.Optional(Type.String()),
    refund_tx_hash: Type.Optional(Type.String()),
    return_details: Type.Optional(Type.Object({ reason: Type.String() })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Drain' },
)
export type Drain = Static<typeof DrainSchema>

export const DrainListSchema = Type.Object(
  { data: Type.Array(DrainSchema), total: Type.Integer(), skip: Type.Integer(), take: Type.Integer() },
  { $id: 'DrainList' },
)

export const AddressDrainsParams = Type.Object({
  customerId: UuidParam('customer'),
  liquidationAddressId: UuidParam('liquidation address'),
})
export const DrainParams = Type.Object({
  customerId: UuidParam('customer'),
  liquidationAddressId: UuidParam('liquidation address'),
  drainId: UuidParam('drain'),
})
export const ListDrainsQuery = Type.Object({ ...Pagination })
