import { Type, type Static } from 'typebox'
import { CHAINS } from '../../validation/chain-address.js'
import { Timestamp, UuidParam } from '../../schemas/common.js'

export const CURRENCIES = ['usdc', 'eurc', 'dai', 'pyusd', 'usdt'] as const
export const PAYMENT_RAILS = [...CHAINS, 'bridge_wallet', 'wire', 'ach', 'ach_push', 'ach_same_day', 'sepa', 'swift', 'spei'] as const
export const DESTINATION_CURRENCIES = ['usd', 'eur', 'mxn', 'usdc', 'eurc', 'dai', 'pyusd', 'usdt'] as const
export const LIQUIDATION_ADDRESS_STATES = ['active', 'deactivated'] as const

/** 0 <= x < 100 written as a decimal string with at most 5 decimals: "10.2", "0", "99.99999". */
export const FEE_PERCENT_PATTERN = '^(0|[1-9][0-9]?)(\\.[0-9]{1,5})?$'

const id42 = Type.String({ minLength: 1, maxLength: 42 })

export const CreateLiquidationAddressBody = Type.Object(
  {
    chain: Type.Enum([...CHAINS]),
    currency: Type.Enum([...CURRENCIES]),
    address: Type.String({ description: 'the liquidation address, valid for the chain' }),
    external_account_id: Type.Optional(id42),
    prefunded_account_id: Type.Optional(id42),
    bridge_wallet_id: Type.Optional(id42),
    destination_payment_rail: Type.Optional(Type.Enum([...PAYMENT_RAILS], { default: 'ach' })),
    destination_currency: Type.Optional(Type.Enum([...DESTINATION_CURRENCIES], { default: 'usd' })),
    destination_wire_message: Type.Optional(Type.String({ maxLength: 256, 'x-free-text': true })),
    destination_sepa_reference: Type.Optional(Type.String({ minLength: 6, maxLength: 140 })),
    destination_ach_reference: Type.Optional(Type.String({ maxLength: 10 })),
    destination_address: Type.Optional(Type.String({ description: 'crypto address, valid on the chain of destination_payment_rail' })),
    destination_blockchain_memo: Type.Optional(Type.String({ maxLength: 256, 'x-free-text': true })),
    return_address: Type.Optional(Type.String({ description: 'address on the same chain; not supported on stellar' })),
    custom_developer_fee_percent: Type.Optional(
      Type.String({
        pattern: FEE_PERCENT_PATTERN,
        'x-message': 'custom_developer_fee_percent must be a decimal string from 0 to less than 100 with at most 5 decimals (e.g. "10.2")',
      }),
    ),
  },
  { additionalProperties: false, 'x-rules': 'liquidationAddress' },
)
export type CreateLiquidationAddressBody = Static<typeof CreateLiquidationAddressBody>

export const LiquidationAddressSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    state: Type.Enum([...LIQUIDATION_ADDRESS_STATES]),
    customer_id: Type.String({ format: 'uuid' }),
    chain: Type.Enum([...CHAINS]),
    currency: Type.Enum([...CURRENCIES]),
    address: Type.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
    external_account_id: Type.Optional(Type.String()),
    prefunded_account_id: Type.Optional(Type.String()),
    bridge_wallet_id: Type.Optional(Type.String()),
    destination_payment_rail: Type.Enum([...PAYMENT_RAILS]),
    destination_currency: Type.Enum([...DESTINATION_CURRENCIES]),
    custom_developer_fee_percent: Type.Optional(Type.String()),
  },
  { $id: 'LiquidationAddress' },
)
export type LiquidationAddress = Static<typeof LiquidationAddressSchema>

export const CustomerLiquidationAddressesParams = Type.Object({ customerId: UuidParam('customer') })
export const LiquidationAddressParams = Type.Object({
  customerId: UuidParam('customer'),
  liquidationAddressId: UuidParam('liquidation address'),
})
