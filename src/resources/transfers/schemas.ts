import { Type, type Static } from 'typebox'
import { Pagination, Timestamp, UuidParam } from '../../schemas/common.js'

export const TRANSFER_STATES = [
  'awaiting_funds',
  'funds_received',
  'payment_submitted',
  'payment_processed',
  'undeliverable',
  'returned',
  'refunded',
  'canceled',
  'error',
] as const
export type TransferState = (typeof TRANSFER_STATES)[number]

export const TRANSFER_KINDS = ['direct_bank', 'direct_wallet', 'external_bank', 'external_stablecoin', 'stablecoin_conversion'] as const
export const PAYMENT_INTENT_KINDS = ['payment_intent_bank', 'payment_intent_stablecoin'] as const
export type TransferKind = (typeof TRANSFER_KINDS)[number] | (typeof PAYMENT_INTENT_KINDS)[number]

/** An amount as the published client sends it (a JSON number), or as a decimal string; read from the request's own text. */
export const WireAmount = (description: string, example: number) =>
  Type.Union([Type.Number(), Type.String({ maxLength: 40 })], { description: `${description}: a JSON number or a decimal string, with at most the currency's decimals`, examples: [example] })

/** A field the client types as a free string: checked against its allowed values in the route, with a message naming them. */
const Code = (description: string, example: string) => Type.String({ minLength: 1, maxLength: 40, description, examples: [example] })

const WalletId = (description: string) => Type.String({ format: 'uuid', 'x-message': 'Invalid wallet ID format', description, examples: ['0b9c9f0e-5b2f-4c57-9a8e-3f3f1a2b4c5d'] })

const Reference = (min: number, max: number, description: string) => Type.Optional(Type.String({ minLength: min, maxLength: max, description }))

const DeveloperFee = Type.Optional(
  WireAmount("the application's fee, in the transfer's source currency, at most 2 decimals and below the amount; withheld from what arrives (transfers in) or charged on top (transfers out)", 1.5),
)

export const DirectBankTransferBody = Type.Object(
  {
    walletId: WalletId("the application's wallet that receives the funds"),
    paymentRail: Code('the rail the sender pays on: ach, ach_push, ach_same_day, wire (usd); sepa, swift (eur); spei (mxn)', 'wire'),
    sourceCurrency: Code('the fiat the sender pays: usd, eur or mxn', 'usd'),
    destinationCurrency: Code('the stablecoin the wallet receives: usdc or eurc', 'usdc'),
    amount: WireAmount('the amount the sender pays, in sourceCurrency', 100),
    wire_message: Reference(1, 256, 'the message the sender puts on a wire'),
    sepa_reference: Reference(6, 140, 'the SEPA reference'),
    ach_reference: Reference(1, 10, 'the ACH reference (letters, digits and spaces)'),
    developer_fee: DeveloperFee,
  },
  { additionalProperties: false },
)
export type DirectBankTransferBody = Static<typeof DirectBankTransferBody>

export const DirectWalletTransferBody = Type.Object(
  {
    walletId: WalletId("the application's wallet that receives the funds"),
    network: Code('the chain the sender sends on', 'base'),
    stableCoinCurrency: Code('the stablecoin sent and received: usdc or eurc', 'usdc'),
    amount: WireAmount('the amount sent', 250.5),
    developer_fee: DeveloperFee,
  },
  { additionalProperties: false },
)
export type DirectWalletTransferBody = Static<typeof DirectWalletTransferBody>

export const ExternalBankTransferBody = Type.Object(
  {
    sourceWalletId: WalletId("the application's wallet the money leaves"),
    sourceCurrency: Code('the stablecoin debited: usdc or eurc', 'usdc'),
    destinationCurrency: Code('the fiat the bank account receives: usd, eur or mxn', 'usd'),
    destinationPaymentRail: Type.Enum(['ach', 'ach_push', 'ach_same_day', 'wire', 'sepa', 'swift', 'spei'], { description: 'BridgeFiatPaymentRail', examples: ['ach'] }),
    external_account_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', 'x-message': 'external_account_id must be 1 to 64 letters, digits, underscores or hyphens', examples: ['ext_acct_8f4e2b1c9d'] }),
    amount: Type.Optional(WireAmount('the amount debited from the wallet, in sourceCurrency (required)', 100)),
    wire_message: Reference(1, 256, 'the message on a wire'),
    sepa_reference: Reference(6, 140, 'the SEPA reference'),
    swift_reference: Reference(1, 190, 'the SWIFT reference'),
    spei_reference: Reference(1, 40, 'the SPEI reference'),
    swift_charges: Type.Optional(Type.String({ maxLength: 40, description: 'who pays SWIFT charges (e.g. our, sha)' })),
    ach_reference: Reference(1, 10, 'the ACH reference (letters, digits and spaces)'),
    developer_fee: DeveloperFee,
  },
  { additionalProperties: false },
)
export type ExternalBankTransferBody = Static<typeof ExternalBankTransferBody>

export const ExternalStablecoinTransferBody = Type.Object(
  {
    sourceWalletId: WalletId("the application's wallet the money leaves"),
    sourceCurrency: Code('the stablecoin debited: usdc or eurc', 'usdc'),
    destinationCurrency: Code('the stablecoin the beneficiary receives: usdc or eurc', 'usdc'),
    beneficiaryId: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', 'x-message': 'beneficiaryId must be 1 to 64 letters, digits, underscores or hyphens', examples: ['beneficiary_12345'] }),
    blockchain_memo: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a memo on the payout transaction' })),
    amount: Type.Optional(WireAmount('the amount debited from the wallet, in sourceCurrency (required)', 25)),
    developer_fee: DeveloperFee,
  },
  { additionalProperties: false },
)
export type ExternalStablecoinTransferBody = Static<typeof ExternalStablecoinTransferBody>

export const StablecoinConversionBody = Type.Object(
  {
    walletId: WalletId("the application's wallet whose holdings are converted"),
    sourceNetwork: Code("the wallet's chain", 'base'),
    sourceCurrency: Code('the stablecoin converted from: usdc or eurc', 'usdc'),
    destinationCurrency: Code('the stablecoin converted to: the other one', 'eurc'),
    amount: WireAmount('the amount converted, in sourceCurrency', 100),
  },
  { additionalProperties: false },
)
export type StablecoinConversionBody = Static<typeof StablecoinConversionBody>

export const SimulateFundsBody = Type.Object(
  {
    amount: Type.Optional(WireAmount('the funds that arrive, in the source currency; required for a flexible amount, and equal to the amount otherwise', 100)),
  },
  { additionalProperties: false },
)
export type SimulateFundsBody = Static<typeof SimulateFundsBody>

const Text = Type.Optional(Type.String())

export const EndpointSchema = Type.Object({
  payment_rail: Type.String({ examples: ['wire'] }),
  currency: Type.String({ examples: ['usd'] }),
  bridge_wallet_id: Text,
  from_address: Text,
  to_address: Text,
  external_account_id: Text,
  beneficiary_id: Text,
  wire_message: Text,
  sepa_reference: Text,
  swift_reference: Text,
  spei_reference: Text,
  swift_charges: Text,
  ach_reference: Text,
  blockchain_memo: Text,
  trace_number: Text,
  imad: Text,
})
export type Endpoint = Static<typeof EndpointSchema>

export const DepositInstructionsSchema = Type.Object(
  {
    payment_rail: Type.String({ examples: ['wire'] }),
    currency: Type.String({ examples: ['usd'] }),
    amount: Type.Union([Type.String(), Type.Null()], { description: 'null for a flexible amount: any amount is accepted' }),
    deposit_message: Type.Optional(Type.String({ description: 'the reference the sender must put on the bank payment', examples: ['BRGQ7KX2M4PL'] })),
    bank_name: Text,
    bank_address: Text,
    bank_beneficiary_name: Text,
    bank_routing_number: Text,
    bank_account_number: Text,
    iban: Text,
    bic: Text,
    clabe: Text,
    to_address: Type.Optional(Type.String({ description: 'the address to send to, on payment_rail' })),
    blockchain_memo: Text,
  },
  { description: 'how the sender pays: bank details and a reference, or an address on a chain' },
)
export type DepositInstructions = Static<typeof DepositInstructionsSchema>

export const ReceiptSchema = Type.Object({
  initial_amount: Type.Union([Type.String(), Type.Null()], { description: 'what arrived or was debited, in the source currency' }),
  developer_fee: Type.String(),
  subtotal_amount: Type.Union([Type.String(), Type.Null()]),
  destination_currency: Type.String(),
  exchange_rate: Type.Optional(Type.String({ description: 'destination units per source unit, as used (the buy rate)' })),
  converted_amount: Type.Optional(Type.String()),
  final_amount: Type.Optional(Type.String({ description: 'what the destination receives' })),
})

export const CustomerDetailsSchema = Type.Object({
  first_name: Text,
  last_name: Text,
  email: Text,
  address: Text,
  country: Text,
  countryISO: Text,
  province: Text,
  provinceISO: Text,
  phone_number: Text,
})
export type CustomerDetails = Static<typeof CustomerDetailsSchema>

export const TransferSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    type: Type.String({ description: 'what the transfer does: direct_bank, direct_wallet, external_bank, external_stablecoin, stablecoin_conversion (payment intents: payment_intent_bank, payment_intent_stablecoin)' }),
    state: Type.Enum([...TRANSFER_STATES]),
    amount: Type.Union([Type.String(), Type.Null()], { description: 'in currency; null until a flexible amount arrives' }),
    currency: Type.String({ description: "the source's currency, of amount and developer_fee" }),
    developer_fee: Type.String(),
    source: EndpointSchema,
    destination: EndpointSchema,
    source_deposit_instructions: Type.Optional(DepositInstructionsSchema),
    customer: Type.Optional(CustomerDetailsSchema),
    receipt: ReceiptSchema,
    return_reason: Type.Optional(Type.String()),
    destination_tx_hash: Text,
    refund_tx_hash: Text,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Transfer' },
)
export type Transfer = Static<typeof TransferSchema>

export const TransferListSchema = Type.Object({ data: Type.Array(TransferSchema), total: Type.Integer(), skip: Type.Integer(), take: Type.Integer() }, { $id: 'TransferList' })

/** A payment intent: a transfer into the application's wallet that a customer pays, with its own events. */
export const PaymentIntentSchema = Type.Object(TransferSchema.properties, { $id: 'PaymentIntent' })
export const PaymentIntentListSchema = Type.Object({ data: Type.Array(PaymentIntentSchema), total: Type.Integer(), skip: Type.Integer(), take: Type.Integer() }, { $id: 'PaymentIntentList' })

export const ListTransfersQuery = Type.Object(
  {
    ...Pagination,
    state: Type.Optional(Type.Enum([...TRANSFER_STATES], { description: 'only transfers in this state' })),
    wallet_id: Type.Optional(Type.String({ format: 'uuid', 'x-message': 'Invalid wallet ID format', description: 'only transfers into or out of this wallet' })),
  },
  { additionalProperties: false },
)
export type ListTransfersQuery = Static<typeof ListTransfersQuery>

export const TransferParams = Type.Object({ id: UuidParam('transfer') })
export const PaymentIntentParams = Type.Object({ id: UuidParam('payment intent') })
