import { Type, type Static } from 'typebox'
import { Livemode, Pagination, Timestamp, UuidParam, WaitingFor } from '../../schemas/common.js'
import { CUSTOMER_EXAMPLE } from '../customers/public.js'
import { BASE_WALLET_EXAMPLE } from '../wallets/public.js'

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
  'released',
] as const
export type TransferState = (typeof TRANSFER_STATES)[number]


/**
 * The transfer the docs page shows: 100.00 USD paid by wire into the base wallet of the wallets'
 * example (src/resources/wallets/schemas.ts) with a developer fee of 1.50, paid out. Its receipt:
 * subtotal 100.00 − 1.50 = 98.50, at the rate 1 of USD to USDC 98.500000 USDC; the wallet is on
 * base, so the payout has a transaction hash. The bank details are the sandbox bank's, of the form
 * the server gives (src/resources/transfers/requests.ts).
 */
const EXAMPLE = {
  id: '01a1ff7f-9228-76c7-828a-816ed9209f4a',
  amount: '100.00',
  developerFee: '1.50',
  subtotal: '98.50',
  converted: '98.500000',
  wireMessage: 'Invoice 1042',
  depositMessage: 'DPQ7KX2M4PLRZ3',
  bankAccountNumber: '483920175602',
  destinationTxHash: '0x1d0d80656c3f0aa6fa3648b5aa80858d554cfb998af02598f445a0e8fcc129e0',
  createdAt: '2026-11-21T19:05:13.000Z',
  updatedAt: '2026-11-21T19:41:02.000Z',
} as const

/** The sandbox bank's details for a payment in US dollars (bankInstructions in src/resources/transfers/requests.ts). */
const SANDBOX_BANK = {
  bank_name: 'Devplatform Sandbox Bank',
  bank_address: '1 Sandbox Way, Wilmington, DE 19801, US',
  bank_beneficiary_name: 'Devplatform Payments',
  bank_routing_number: '101019644',
} as const

/** The payment intent the docs page shows: Ada (the customers' example, in California) pays 100.00 USD by ACH push, settled into the same base wallet as 100.000000 USDC (no developer fee). */
const INTENT_EXAMPLE = {
  id: '01a1ff86-6440-73eb-9783-d6efa869c16d',
  amount: '100.00',
  converted: '100.000000',
  achReference: 'INV1042',
  depositMessage: 'DPM3TB7WQ2KX5N',
  bankAccountNumber: '907314582260',
  destinationTxHash: '0xd450b7dea2b7784be26227493dec6cc3f825c60844bc44a7f5a47cb5a2b2dffc',
  createdAt: '2026-11-21T19:12:40.000Z',
  updatedAt: '2026-11-21T19:48:15.000Z',
} as const

/** The payer of the payment intent example, as the API answers it. */
export const PAYER_EXAMPLE = {
  first_name: CUSTOMER_EXAMPLE.first_name,
  last_name: CUSTOMER_EXAMPLE.last_name,
  email: CUSTOMER_EXAMPLE.email,
  address: '2261 Market Street, San Francisco, CA 94114',
  country: 'United States',
  countryISO: 'US',
  province: 'California',
  provinceISO: 'CA',
  phone_number: CUSTOMER_EXAMPLE.phone_number,
} as const

/** An amount as the published client sends it (a JSON number), or as a decimal string; read from the request's own text. */
export const WireAmount = (description: string, example: number) =>
  Type.Union([Type.Number(), Type.String({ maxLength: 40 })], { description: `${description}: a JSON number or a decimal string, with at most the currency's decimals`, examples: [example] })

/** A field the client types as a free string: checked against its allowed values in the route, with a message naming them. */
const Code = (description: string, example: string) => Type.String({ minLength: 1, maxLength: 40, description, examples: [example] })

const WalletId = (description: string) => Type.String({ format: 'uuid', 'x-message': 'Invalid wallet ID format', description, examples: ['0b9c9f0e-5b2f-4c57-9a8e-3f3f1a2b4c5d'] })

const Reference = (min: number, max: number, description: string, example: string) => Type.Optional(Type.String({ minLength: min, maxLength: max, description, examples: [example] }))

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
    wire_message: Reference(1, 256, 'the message the sender puts on a wire', EXAMPLE.wireMessage),
    sepa_reference: Reference(6, 140, 'the SEPA reference', 'INV-1042-ACME'),
    ach_reference: Reference(1, 10, 'the ACH reference (letters, digits and spaces)', 'INV1042'),
    developer_fee: DeveloperFee,
  },
  {
    additionalProperties: false,
    // The body that makes the Transfer example (a wire has no SEPA or ACH reference).
    examples: [{ walletId: BASE_WALLET_EXAMPLE.id, paymentRail: 'wire', sourceCurrency: 'usd', destinationCurrency: 'usdc', amount: 100, wire_message: EXAMPLE.wireMessage, developer_fee: 1.5 }],
  },
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
  { additionalProperties: false, examples: [{ walletId: BASE_WALLET_EXAMPLE.id, network: 'base', stableCoinCurrency: 'usdc', amount: 250.5, developer_fee: 1.5 }] },
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
    wire_message: Reference(1, 256, 'the message on a wire', 'Payout for invoice 1042'),
    sepa_reference: Reference(6, 140, 'the SEPA reference', 'INV-1042-ACME'),
    swift_reference: Reference(1, 190, 'the SWIFT reference', 'Invoice 1042 Acme Marketplace'),
    spei_reference: Reference(1, 40, 'the SPEI reference', 'Factura 1042'),
    swift_charges: Type.Optional(Type.String({ maxLength: 40, description: 'who pays SWIFT charges (e.g. our, sha)', examples: ['sha'] })),
    ach_reference: Reference(1, 10, 'the ACH reference (letters, digits and spaces)', 'INV1042'),
    developer_fee: DeveloperFee,
  },
  {
    additionalProperties: false,
    // 100 USDC out by ACH, with the fee on top: the wallet needs 101.50 USDC available.
    examples: [
      {
        sourceWalletId: BASE_WALLET_EXAMPLE.id,
        sourceCurrency: 'usdc',
        destinationCurrency: 'usd',
        destinationPaymentRail: 'ach',
        external_account_id: 'ext_acct_8f4e2b1c9d',
        amount: 100,
        ach_reference: 'INV1042',
        developer_fee: 1.5,
      },
    ],
  },
)
export type ExternalBankTransferBody = Static<typeof ExternalBankTransferBody>

export const ExternalStablecoinTransferBody = Type.Object(
  {
    sourceWalletId: WalletId("the application's wallet the money leaves"),
    sourceCurrency: Code('the stablecoin debited: usdc or eurc', 'usdc'),
    destinationCurrency: Code('the stablecoin the beneficiary receives: usdc or eurc', 'usdc'),
    beneficiaryId: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', 'x-message': 'beneficiaryId must be 1 to 64 letters, digits, underscores or hyphens', examples: ['beneficiary_12345'] }),
    destinationAddress: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: "the beneficiary's address on the wallet's chain, paid to on chain; required with a production key", examples: ['0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359'] }),
    ),
    blockchain_memo: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a memo on the payout transaction', examples: ['invoice 1042'] })),
    amount: Type.Optional(WireAmount('the amount debited from the wallet, in sourceCurrency (required)', 25)),
    developer_fee: DeveloperFee,
  },
  {
    additionalProperties: false,
    // Paid out on the wallet's chain (base: no memo).
    examples: [{ sourceWalletId: BASE_WALLET_EXAMPLE.id, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'beneficiary_12345', amount: 25 }],
  },
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
  { additionalProperties: false, examples: [{ walletId: BASE_WALLET_EXAMPLE.id, sourceNetwork: 'base', sourceCurrency: 'usdc', destinationCurrency: 'eurc', amount: 100 }] },
)
export type StablecoinConversionBody = Static<typeof StablecoinConversionBody>

export const SimulateFundsBody = Type.Object(
  {
    amount: Type.Optional(WireAmount('the funds that arrive, in the source currency; required for a flexible amount, and equal to the amount otherwise', 100)),
  },
  // The funds the Transfer example awaits.
  { additionalProperties: false, examples: [{ amount: 100 }] },
)
export type SimulateFundsBody = Static<typeof SimulateFundsBody>

/** An optional text field; its example is of the example transfer where it has the field, else of another transfer's. */
const Text = (example: string, description?: string) => Type.Optional(Type.String({ examples: [example], ...(description === undefined ? {} : { description }) }))

export const EndpointSchema = Type.Object({
  payment_rail: Type.String({ description: 'a bank rail, a chain, or bridge_wallet for money leaving a wallet', examples: ['wire'] }),
  currency: Type.String({ examples: ['usd'] }),
  bridge_wallet_id: Text(BASE_WALLET_EXAMPLE.id, "the application's wallet"),
  from_address: Text('0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb', "the sender's address"),
  to_address: Text(BASE_WALLET_EXAMPLE.address, 'the address paid to'),
  external_account_id: Text('ext_acct_8f4e2b1c9d'),
  beneficiary_id: Text('beneficiary_12345'),
  wire_message: Text(EXAMPLE.wireMessage),
  sepa_reference: Text('INV-1042-ACME'),
  swift_reference: Text('Invoice 1042 Acme Marketplace'),
  spei_reference: Text('Factura 1042'),
  swift_charges: Text('sha'),
  ach_reference: Text('INV1042'),
  blockchain_memo: Text('invoice 1042'),
  trace_number: Text('021000021583046', "an ACH payment's trace number"),
  imad: Text('20261121MMQFMP482913', "a wire's Input Message Accountability Data"),
})
export type Endpoint = Static<typeof EndpointSchema>

export const DepositInstructionsSchema = Type.Object(
  {
    payment_rail: Type.String({ examples: ['wire'] }),
    currency: Type.String({ examples: ['usd'] }),
    amount: Type.Union([Type.String(), Type.Null()], { description: 'null for a flexible amount: any amount is accepted', examples: [EXAMPLE.amount] }),
    deposit_message: Type.Optional(Type.String({ description: 'the reference the sender must put on the bank payment', examples: [EXAMPLE.depositMessage] })),
    bank_name: Text(SANDBOX_BANK.bank_name),
    bank_address: Text(SANDBOX_BANK.bank_address),
    bank_beneficiary_name: Text(SANDBOX_BANK.bank_beneficiary_name),
    bank_routing_number: Text(SANDBOX_BANK.bank_routing_number, 'of a payment in US dollars'),
    bank_account_number: Text(EXAMPLE.bankAccountNumber, 'of a payment in US dollars'),
    iban: Text('DE12500105170648489890', 'of a payment in euros'),
    bic: Text('DEVPDEFFXXX', 'of a payment in euros'),
    clabe: Text('646180157304123454', 'of a payment in Mexican pesos'),
    to_address: Type.Optional(Type.String({ description: 'the address to send to, on payment_rail', examples: ['0x8f3a1c2be4d5f60718293a4b5c6d7e8f90a1b2c3'] })),
    blockchain_memo: Text('invoice 1042'),
  },
  { description: 'how the sender pays: bank details and a reference, or an address on a chain' },
)
export type DepositInstructions = Static<typeof DepositInstructionsSchema>

export const ReceiptSchema = Type.Object({
  initial_amount: Type.Union([Type.String(), Type.Null()], { description: 'what arrived or was debited, in the source currency', examples: [EXAMPLE.amount] }),
  developer_fee: Type.String({ examples: [EXAMPLE.developerFee] }),
  subtotal_amount: Type.Union([Type.String(), Type.Null()], { description: 'what is converted: initial_amount less the developer fee (money in), the amount (money out)', examples: [EXAMPLE.subtotal] }),
  destination_currency: Type.String({ examples: ['usdc'] }),
  exchange_rate: Type.Optional(Type.String({ description: 'destination units per source unit, as used (the buy rate)', examples: ['1'] })),
  converted_amount: Type.Optional(Type.String({ description: 'subtotal_amount in destination_currency', examples: [EXAMPLE.converted] })),
  final_amount: Type.Optional(Type.String({ description: 'what the destination receives', examples: [EXAMPLE.converted] })),
})

export const CustomerDetailsSchema = Type.Object({
  first_name: Text(PAYER_EXAMPLE.first_name),
  last_name: Text(PAYER_EXAMPLE.last_name),
  email: Text(PAYER_EXAMPLE.email),
  address: Text(PAYER_EXAMPLE.address),
  country: Text(PAYER_EXAMPLE.country),
  countryISO: Text(PAYER_EXAMPLE.countryISO),
  province: Text(PAYER_EXAMPLE.province),
  provinceISO: Text(PAYER_EXAMPLE.provinceISO),
  phone_number: Text(PAYER_EXAMPLE.phone_number),
})
export type CustomerDetails = Static<typeof CustomerDetailsSchema>

/** The example transfer as the API answers it once paid out (test/openapi/examples.test.ts has the server answer it). */
const TRANSFER_EXAMPLE = {
  id: EXAMPLE.id,
  type: 'direct_bank',
  state: 'payment_processed',
  amount: EXAMPLE.amount,
  currency: 'usd',
  developer_fee: EXAMPLE.developerFee,
  source: { payment_rail: 'wire', currency: 'usd', wire_message: EXAMPLE.wireMessage },
  destination: { payment_rail: 'base', currency: 'usdc', bridge_wallet_id: BASE_WALLET_EXAMPLE.id, to_address: BASE_WALLET_EXAMPLE.address },
  source_deposit_instructions: {
    payment_rail: 'wire',
    currency: 'usd',
    amount: EXAMPLE.amount,
    deposit_message: EXAMPLE.depositMessage,
    ...SANDBOX_BANK,
    bank_account_number: EXAMPLE.bankAccountNumber,
  },
  receipt: {
    initial_amount: EXAMPLE.amount,
    developer_fee: EXAMPLE.developerFee,
    subtotal_amount: EXAMPLE.subtotal,
    destination_currency: 'usdc',
    exchange_rate: '1',
    converted_amount: EXAMPLE.converted,
    final_amount: EXAMPLE.converted,
  },
  destination_tx_hash: EXAMPLE.destinationTxHash,
  livemode: false,
  created_at: EXAMPLE.createdAt,
  updated_at: EXAMPLE.updatedAt,
}

/** The example payment intent as the API answers it once settled. */
const PAYMENT_INTENT_EXAMPLE = {
  id: INTENT_EXAMPLE.id,
  type: 'payment_intent_bank',
  state: 'payment_processed',
  amount: INTENT_EXAMPLE.amount,
  currency: 'usd',
  developer_fee: '0.00',
  source: { payment_rail: 'ach_push', currency: 'usd', ach_reference: INTENT_EXAMPLE.achReference },
  destination: { payment_rail: 'base', currency: 'usdc', bridge_wallet_id: BASE_WALLET_EXAMPLE.id, to_address: BASE_WALLET_EXAMPLE.address },
  source_deposit_instructions: {
    payment_rail: 'ach_push',
    currency: 'usd',
    amount: INTENT_EXAMPLE.amount,
    deposit_message: INTENT_EXAMPLE.depositMessage,
    ...SANDBOX_BANK,
    bank_account_number: INTENT_EXAMPLE.bankAccountNumber,
  },
  customer: PAYER_EXAMPLE,
  receipt: {
    initial_amount: INTENT_EXAMPLE.amount,
    developer_fee: '0.00',
    subtotal_amount: INTENT_EXAMPLE.amount,
    destination_currency: 'usdc',
    exchange_rate: '1',
    converted_amount: INTENT_EXAMPLE.converted,
    final_amount: INTENT_EXAMPLE.converted,
  },
  destination_tx_hash: INTENT_EXAMPLE.destinationTxHash,
  livemode: false,
  created_at: INTENT_EXAMPLE.createdAt,
  updated_at: INTENT_EXAMPLE.updatedAt,
}

export const TransferSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', examples: [EXAMPLE.id] }),
    type: Type.String({
      description: 'what the transfer does: direct_bank, direct_wallet, external_bank, external_stablecoin, stablecoin_conversion (payment intents: payment_intent_bank, payment_intent_stablecoin)',
      examples: ['direct_bank'],
    }),
    state: Type.Enum([...TRANSFER_STATES], { examples: ['payment_processed'] }),
    amount: Type.Union([Type.String(), Type.Null()], { description: 'in currency; null until a flexible amount arrives', examples: [EXAMPLE.amount] }),
    currency: Type.String({ description: "the source's currency, of amount and developer_fee", examples: ['usd'] }),
    developer_fee: Type.String({ examples: [EXAMPLE.developerFee] }),
    source: EndpointSchema,
    destination: EndpointSchema,
    source_deposit_instructions: Type.Optional(DepositInstructionsSchema),
    customer: Type.Optional(CustomerDetailsSchema),
    receipt: ReceiptSchema,
    // Of a returned transfer: the example transfer was paid out, and was not refunded.
    return_reason: Type.Optional(Type.String({ examples: ['sandbox: the receiving institution returned the payment'] })),
    destination_tx_hash: Text(EXAMPLE.destinationTxHash, 'the payout transaction, on a chain'),
    refund_tx_hash: Text('0xd72932e7939a7d51498f9c7da72af59a190cb6f2b4dafceb7e56a88103b15949', "the refund's transaction, to a sender on a chain"),
    waiting_for: WaitingFor,
    livemode: Livemode,
    created_at: { ...Timestamp, examples: [EXAMPLE.createdAt] },
    updated_at: { ...Timestamp, examples: [EXAMPLE.updatedAt] },
  },
  { $id: 'Transfer', examples: [TRANSFER_EXAMPLE] },
)
export type Transfer = Static<typeof TransferSchema>

const ListFields = { total: Type.Integer({ examples: [1] }), skip: Type.Integer({ examples: [0] }), take: Type.Integer({ examples: [10] }) }

export const TransferListSchema = Type.Object({ data: Type.Array(TransferSchema), ...ListFields }, { $id: 'TransferList', examples: [{ data: [TRANSFER_EXAMPLE], total: 1, skip: 0, take: 10 }] })

/** A payment intent: a transfer into the application's wallet that a customer pays, with its own events. */
export const PaymentIntentSchema = Type.Object(TransferSchema.properties, { $id: 'PaymentIntent', examples: [PAYMENT_INTENT_EXAMPLE] })
export const PaymentIntentListSchema = Type.Object(
  { data: Type.Array(PaymentIntentSchema), ...ListFields },
  { $id: 'PaymentIntentList', examples: [{ data: [PAYMENT_INTENT_EXAMPLE], total: 1, skip: 0, take: 10 }] },
)

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
