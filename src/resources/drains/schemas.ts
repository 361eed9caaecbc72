import { Type, type Static } from 'typebox'
import { Livemode, Pagination, Timestamp, UuidParam, WaitingFor } from '../../schemas/common.js'
import { CHAINS } from '../../validation/chain-address.js'
import { CUSTOMER_EXAMPLE } from '../customers/public.js'
import { CURRENCIES, DESTINATION_CURRENCIES, PAYMENT_RAILS } from '../liquidation-addresses/public.js'
import { BASE_WALLET_EXAMPLE } from '../wallets/public.js'

export const DRAIN_STATES = ['funds_received', 'payment_submitted', 'payment_processed', 'undeliverable', 'returned', 'refund_in_flight', 'refunded', 'refund_failed', 'error', 'canceled', 'released'] as const
export type DrainState = (typeof DRAIN_STATES)[number]

/** A deposit's amount: a plain decimal in the address's currency (its decimals are checked against the currency). */
export const DEPOSIT_AMOUNT_PATTERN = '^(0|[1-9][0-9]{0,9})(\\.[0-9]{1,18})?$'

/**
 * The drain the docs page shows: 100.25 USDC sent on ethereum to the liquidation address of its
 * schema's example (src/resources/liquidation-addresses/schemas.ts: a 0.5 % developer fee, paid
 * out in US dollars by ACH), paid out. Its receipt: fee 0.5 % of 100.250000 = 0.501250, subtotal
 * 99.748750, at the rate 1 of USDC to USD 99.74 (rounded down to the cent), no gas on ACH.
 * The deposit's hash and the sender's address are of ethereum's form (the sender's passes EIP-55).
 */
const EXAMPLE = {
  id: '9f70463a-cf1a-45cf-98a1-3f28977db2e1',
  liquidationAddressId: 'cb39c487-679e-4447-8d5a-f947bf3e3e7e',
  deposit: '100.25',
  depositTxHash: '0x73f32af832035577f7ff7ce80436c42061a7210ad18a8aed1292d21d0eaee16f',
  fromAddress: '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
  amount: '100.250000',
  developerFee: '0.501250',
  subtotal: '99.748750',
  converted: '99.74',
  gasFee: '0.00',
  externalAccountId: 'ext_acct_8f4e2b1c9d',
  achReference: 'INV1042',
  traceNumber: '021000021583046',
} as const

export const SimulateDepositBody = Type.Object(
  {
    amount: Type.String({
      pattern: DEPOSIT_AMOUNT_PATTERN,
      'x-message': 'amount must be a decimal string greater than 0 and at most 1000000000 (e.g. "100.25")',
      description: "the deposit, in the liquidation address's currency",
      examples: [EXAMPLE.deposit],
    }),
    deposit_tx_hash: Type.Optional(
      Type.String({
        pattern: '^[0-9A-Za-z]{16,128}$',
        'x-message': 'deposit_tx_hash must be 16 to 128 letters and digits (0x-prefixed hex on EVM chains)',
        description: 'the incoming transaction; generated when absent. One drain per hash and address.',
        examples: [EXAMPLE.depositTxHash],
      }),
    ),
    from_address: Type.Optional(Type.String({ maxLength: 128, description: "the sender's address, valid on the address's chain", examples: [EXAMPLE.fromAddress] })),
  },
  {
    additionalProperties: false,
    // The body the docs page offers: without a hash, so each try is a new deposit (one drain per hash and address).
    examples: [{ amount: EXAMPLE.deposit, from_address: EXAMPLE.fromAddress }],
  },
)
export type SimulateDepositBody = Static<typeof SimulateDepositBody>

/** An amount with all of its currency's decimals. */
const Decimal = (example: string) => Type.String({ description: "a decimal string with all of its currency's decimals", examples: [example] })

/** A field of the destination: its example is of another rail's payout where the example drain's rail (ACH) has none. */
const text = (example: string) => Type.Optional(Type.String({ examples: [example] }))

export const DrainDestinationSchema = Type.Object({
  payment_rail: Type.Enum([...PAYMENT_RAILS], { examples: ['ach'] }),
  currency: Type.Enum([...DESTINATION_CURRENCIES], { examples: ['usd'] }),
  // The destination_address of the liquidation address example.
  to_address: text('0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359'),
  external_account_id: text(EXAMPLE.externalAccountId),
  bridge_wallet_id: text(BASE_WALLET_EXAMPLE.id),
  blockchain_memo: text('invoice 1042'),
  wire_message: text('Payout for invoice 1042'),
  sepa_reference: text('INV-1042'),
  ach_reference: text(EXAMPLE.achReference),
  imad: Type.Optional(Type.String({ description: "a wire's Input Message Accountability Data", examples: ['20261121MMQFMP482913'] })),
  trace_number: Type.Optional(Type.String({ description: "an ACH payment's trace number", examples: [EXAMPLE.traceNumber] })),
})
export type DrainDestination = Static<typeof DrainDestinationSchema>

export const DrainReceiptSchema = Type.Object({
  initial_amount: Decimal(EXAMPLE.amount),
  developer_fee: Decimal(EXAMPLE.developerFee),
  subtotal_amount: Decimal(EXAMPLE.subtotal),
  destination_currency: Type.Enum([...DESTINATION_CURRENCIES], { examples: ['usd'] }),
  /** known once the payment is submitted */
  exchange_rate: Type.Optional(Type.String({ description: 'destination units per deposit unit, as used', examples: ['1'] })),
  converted_amount: Type.Optional(Decimal(EXAMPLE.converted)),
  gas_fee: Type.Optional(Decimal(EXAMPLE.gasFee)),
  outgoing_amount: Type.Optional(Decimal(EXAMPLE.converted)),
})

/** The example drain as the API answers it once paid out (test/openapi/examples.test.ts has the server answer it). */
const DRAIN_EXAMPLE = {
  id: EXAMPLE.id,
  customer_id: CUSTOMER_EXAMPLE.id,
  liquidation_address_id: EXAMPLE.liquidationAddressId,
  state: 'payment_processed',
  amount: EXAMPLE.amount,
  currency: 'usdc',
  deposit_tx_hash: EXAMPLE.depositTxHash,
  from_address: EXAMPLE.fromAddress,
  source_payment_rail: 'ethereum',
  destination: { payment_rail: 'ach', currency: 'usd', external_account_id: EXAMPLE.externalAccountId, ach_reference: EXAMPLE.achReference, trace_number: EXAMPLE.traceNumber },
  receipt: {
    initial_amount: EXAMPLE.amount,
    developer_fee: EXAMPLE.developerFee,
    subtotal_amount: EXAMPLE.subtotal,
    destination_currency: 'usd',
    exchange_rate: '1',
    converted_amount: EXAMPLE.converted,
    gas_fee: EXAMPLE.gasFee,
    outgoing_amount: EXAMPLE.converted,
  },
  livemode: false,
  created_at: '2026-11-21T19:05:13.000Z',
  updated_at: '2026-11-21T19:05:19.000Z',
}

export const DrainSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', examples: [EXAMPLE.id] }),
    customer_id: Type.String({ format: 'uuid', examples: [CUSTOMER_EXAMPLE.id] }),
    liquidation_address_id: Type.String({ format: 'uuid', examples: [EXAMPLE.liquidationAddressId] }),
    state: Type.Enum([...DRAIN_STATES], { examples: ['payment_processed'] }),
    amount: Decimal(EXAMPLE.amount),
    currency: Type.Enum([...CURRENCIES], { examples: ['usdc'] }),
    deposit_tx_hash: Type.String({ examples: [EXAMPLE.depositTxHash] }),
    from_address: Type.Optional(Type.String({ examples: [EXAMPLE.fromAddress] })),
    source_payment_rail: Type.Enum([...CHAINS], { examples: ['ethereum'] }),
    destination: DrainDestinationSchema,
    receipt: DrainReceiptSchema,
    // Of a payout on a chain and of a refund on ethereum: the example drain (ACH, paid out) has neither.
    destination_tx_hash: Type.Optional(Type.String({ examples: ['0xaae60ea58af73b93b8a2de30b8293fe7bda2e150a67eaeb04ebc912c597727ef'] })),
    refund_tx_hash: Type.Optional(Type.String({ examples: ['0xe83416f644309cb0c31b030ef8514fd58391838e5db8cd87a3934c3ef09e0d55'] })),
    return_details: Type.Optional(Type.Object({ reason: Type.String({ examples: ['the liquidation address is deactivated'] }) })),
    waiting_for: WaitingFor,
    livemode: Livemode,
    created_at: Timestamp,
    updated_at: { ...Timestamp, examples: [DRAIN_EXAMPLE.updated_at] },
  },
  { $id: 'Drain', examples: [DRAIN_EXAMPLE] },
)
export type Drain = Static<typeof DrainSchema>

export const DrainListSchema = Type.Object(
  {
    data: Type.Array(DrainSchema),
    total: Type.Integer({ examples: [1] }),
    skip: Type.Integer({ examples: [0] }),
    take: Type.Integer({ examples: [10] }),
  },
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
