import { Type, type Static } from 'typebox'
import { CHAINS } from '../../validation/chain-address.js'
import { Timestamp, UuidParam } from '../../schemas/common.js'
import { CUSTOMER_EXAMPLE } from '../customers/public.js'

export const CURRENCIES = ['usdc', 'eurc', 'dai', 'pyusd', 'usdt'] as const
export const PAYMENT_RAILS = [...CHAINS, 'bridge_wallet', 'wire', 'ach', 'ach_push', 'ach_same_day', 'sepa', 'swift', 'spei'] as const
export const DESTINATION_CURRENCIES = ['usd', 'eur', 'mxn', 'usdc', 'eurc', 'dai', 'pyusd', 'usdt'] as const
export const LIQUIDATION_ADDRESS_STATES = ['active', 'deactivated'] as const

/** 0 <= x < 100 written as a decimal string with at most 5 decimals: "10.2", "0", "99.99999". */
export const FEE_PERCENT_PATTERN = '^(0|[1-9][0-9]?)(\\.[0-9]{1,5})?$'

const id42 = (example: string) => Type.String({ minLength: 1, maxLength: 42, examples: [example] })

/**
 * The liquidation address the docs page shows: EIP-55 checksummed Ethereum addresses that pass
 * the chain's check, and a payout by ACH to an external account.
 */
const EXAMPLE = {
  id: 'cb39c487-679e-4447-8d5a-f947bf3e3e7e',
  address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  destinationAddress: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  returnAddress: '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  externalAccountId: 'ext_acct_8f4e2b1c9d',
  prefundedAccountId: 'pfa_2c9d7e41',
  bridgeWalletId: 'bw_5a1f3c88',
  feePercent: '0.5',
} as const

export const CreateLiquidationAddressBody = Type.Object(
  {
    chain: Type.Enum([...CHAINS]),
    currency: Type.Enum([...CURRENCIES]),
    address: Type.String({ description: 'the liquidation address, valid for the chain', examples: [EXAMPLE.address] }),
    external_account_id: Type.Optional(id42(EXAMPLE.externalAccountId)),
    prefunded_account_id: Type.Optional(id42(EXAMPLE.prefundedAccountId)),
    bridge_wallet_id: Type.Optional(id42(EXAMPLE.bridgeWalletId)),
    destination_payment_rail: Type.Optional(Type.Enum([...PAYMENT_RAILS], { default: 'ach' })),
    destination_currency: Type.Optional(Type.Enum([...DESTINATION_CURRENCIES], { default: 'usd' })),
    destination_wire_message: Type.Optional(Type.String({ maxLength: 256, 'x-free-text': true, examples: ['Payout for invoice 1042'] })),
    destination_sepa_reference: Type.Optional(Type.String({ minLength: 6, maxLength: 140, examples: ['INV-1042'] })),
    destination_ach_reference: Type.Optional(Type.String({ maxLength: 10, examples: ['INV1042'] })),
    destination_address: Type.Optional(
      Type.String({ description: 'crypto address, valid on the chain of destination_payment_rail', examples: [EXAMPLE.destinationAddress] }),
    ),
    destination_blockchain_memo: Type.Optional(Type.String({ maxLength: 256, 'x-free-text': true, examples: ['invoice 1042'] })),
    return_address: Type.Optional(Type.String({ description: 'address on the same chain; not supported on stellar', examples: [EXAMPLE.returnAddress] })),
    custom_developer_fee_percent: Type.Optional(
      Type.String({
        examples: [EXAMPLE.feePercent],
        pattern: FEE_PERCENT_PATTERN,
        'x-message': 'custom_developer_fee_percent must be a decimal string from 0 to less than 100 with at most 5 decimals (e.g. "10.2")',
      }),
    ),
  },
  {
    additionalProperties: false,
    'x-rules': 'liquidationAddress',
    // The body the docs page offers: the fields of one payout (each field's own example may belong to another rail).
    examples: [
      {
        chain: 'ethereum',
        currency: 'usdc',
        address: EXAMPLE.address,
        external_account_id: EXAMPLE.externalAccountId,
        destination_payment_rail: 'ach',
        destination_currency: 'usd',
        destination_ach_reference: 'INV1042',
        return_address: EXAMPLE.returnAddress,
        custom_developer_fee_percent: EXAMPLE.feePercent,
      },
    ],
  },
)
export type CreateLiquidationAddressBody = Static<typeof CreateLiquidationAddressBody>

export const LiquidationAddressSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', examples: [EXAMPLE.id] }),
    state: Type.Enum([...LIQUIDATION_ADDRESS_STATES]),
    customer_id: Type.String({ format: 'uuid', examples: [CUSTOMER_EXAMPLE.id] }),
    chain: Type.Enum([...CHAINS]),
    currency: Type.Enum([...CURRENCIES]),
    address: Type.String({ examples: [EXAMPLE.address] }),
    created_at: Timestamp,
    updated_at: Timestamp,
    external_account_id: Type.Optional(Type.String({ examples: [EXAMPLE.externalAccountId] })),
    prefunded_account_id: Type.Optional(Type.String({ examples: [EXAMPLE.prefundedAccountId] })),
    bridge_wallet_id: Type.Optional(Type.String({ examples: [EXAMPLE.bridgeWalletId] })),
    destination_payment_rail: Type.Enum([...PAYMENT_RAILS], { examples: ['ach'] }),
    destination_currency: Type.Enum([...DESTINATION_CURRENCIES], { examples: ['usd'] }),
    custom_developer_fee_percent: Type.Optional(Type.String({ examples: [EXAMPLE.feePercent] })),
  },
  { $id: 'LiquidationAddress' },
)
export type LiquidationAddress = Static<typeof LiquidationAddressSchema>

export const CustomerLiquidationAddressesParams = Type.Object({ customerId: UuidParam('customer') })
export const LiquidationAddressParams = Type.Object({
  customerId: UuidParam('customer'),
  liquidationAddressId: UuidParam('liquidation address'),
})
