import { Type, type Static } from 'typebox'
import { PAYER_EXAMPLE } from '../transfers/public.js'

const Code = (description: string, example: string) => Type.String({ minLength: 1, maxLength: 40, description, examples: [example] })
const Text = (max: number, description: string, example: string) => Type.Optional(Type.String({ minLength: 1, maxLength: max, description, examples: [example] }))

/** The payer, with the published client's wire names (snake case with ISO in capitals). */
const CustomerFields = {
  customer_first_name: Text(100, "the payer's first name; required with the last name above 1000 of the amount", PAYER_EXAMPLE.first_name),
  customer_last_name: Text(100, "the payer's last name", PAYER_EXAMPLE.last_name),
  customer_email: Type.Optional(Type.String({ format: 'email', maxLength: 255, description: "the payer's email", examples: [PAYER_EXAMPLE.email] })),
  customer_address: Text(255, "the payer's address", PAYER_EXAMPLE.address),
  customer_country: Text(100, "the payer's country", PAYER_EXAMPLE.country),
  customer_countryISO: Type.Optional(
    Type.String({ pattern: '^[A-Za-z]{2}$', 'x-message': 'customer_countryISO must be an ISO 3166-1 alpha-2 code (2 letters)', description: 'ISO 3166-1 alpha-2', examples: [PAYER_EXAMPLE.countryISO] }),
  ),
  customer_province: Text(100, "the payer's province or state", PAYER_EXAMPLE.province),
  customer_provinceISO: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9]{1,3}$',
      'x-message': 'customer_provinceISO must be 1 to 3 letters or digits (the ISO 3166-2 subdivision code)',
      description: 'required for US and CA payers',
      examples: [PAYER_EXAMPLE.provinceISO],
    }),
  ),
  phoneNumber: Type.Optional(
    Type.String({
      pattern: '^\\+?[0-9 ()-]{6,20}$',
      'x-message': 'phoneNumber must be 6 to 20 digits, spaces, parentheses or hyphens, with an optional leading +',
      description: "the payer's phone number",
      examples: [PAYER_EXAMPLE.phone_number],
    }),
  ),
}

/** The payer's fields of a body: the payer of the PaymentIntent example (src/resources/transfers/schemas.ts). */
const PAYER_FIELDS_EXAMPLE = {
  customer_first_name: PAYER_EXAMPLE.first_name,
  customer_last_name: PAYER_EXAMPLE.last_name,
  customer_email: PAYER_EXAMPLE.email,
  customer_address: PAYER_EXAMPLE.address,
  customer_country: PAYER_EXAMPLE.country,
  customer_countryISO: PAYER_EXAMPLE.countryISO,
  customer_province: PAYER_EXAMPLE.province,
  customer_provinceISO: PAYER_EXAMPLE.provinceISO,
  phoneNumber: PAYER_EXAMPLE.phone_number,
}

/** Settling elsewhere than the application's wallet: an address on base (EIP-55). */
const DESTINATION_ADDRESS_EXAMPLE = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359'

const IntentAmount = Type.Optional(
  Type.Union([Type.String({ maxLength: 40 }), Type.Number()], {
    description: "a decimal string in the source currency (a JSON number is read from the request's text); omit it for a flexible intent where the payer chooses the amount",
    examples: ['100.00'],
  }),
)

export const BankPaymentIntentBody = Type.Object(
  {
    sourcePaymentRail: Code('the rail the payer pays on: ach_push, ach, ach_same_day, wire (usd); sepa, swift (eur); spei (mxn)', 'ach_push'),
    sourceCurrency: Code('the fiat the payer pays: usd, eur or mxn', 'usd'),
    destinationCurrency: Code('the stablecoin settled: usdc or eurc', 'usdc'),
    destinationNetwork: Code("the chain settled on: the application's wallet there (base, ethereum, solana), or destinationAddress on any EVM chain or solana", 'base'),
    destinationAddress: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: "pay out to this address on destinationNetwork instead of the application's wallet", examples: [DESTINATION_ADDRESS_EXAMPLE] }),
    ),
    amount: IntentAmount,
    ...CustomerFields,
    wire_message: Text(256, 'the message the payer puts on a wire', 'Invoice 1042'),
    sepa_reference: Type.Optional(Type.String({ minLength: 6, maxLength: 140, description: 'the SEPA reference (6-140 characters)', examples: ['INV-1042-ACME'] })),
    ach_reference: Text(10, 'the ACH reference (letters, digits and spaces)', 'INV1042'),
  },
  {
    additionalProperties: false,
    // The body that makes the PaymentIntent example: settled into the application's wallet on base.
    examples: [
      { sourcePaymentRail: 'ach_push', sourceCurrency: 'usd', destinationCurrency: 'usdc', destinationNetwork: 'base', amount: '100.00', ...PAYER_FIELDS_EXAMPLE, ach_reference: 'INV1042' },
    ],
  },
)
export type BankPaymentIntentBody = Static<typeof BankPaymentIntentBody>

export const StablePaymentIntentBody = Type.Object(
  {
    sourceCurrency: Code('the stablecoin the payer sends: usdc or eurc', 'usdc'),
    sourceNetwork: Code('the chain the payer sends on', 'ethereum'),
    destinationNetwork: Code("the chain settled on: the application's wallet there (base, ethereum, solana), or destinationAddress on any EVM chain or solana", 'base'),
    destinationCurrency: Type.Optional(Code('the stablecoin settled (default: sourceCurrency)', 'usdc')),
    destinationAddress: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: "pay out to this address on destinationNetwork instead of the application's wallet", examples: [DESTINATION_ADDRESS_EXAMPLE] }),
    ),
    amount: IntentAmount,
    ...CustomerFields,
  },
  {
    additionalProperties: false,
    // USDC sent on ethereum, settled into the application's wallet on base.
    examples: [{ sourceCurrency: 'usdc', sourceNetwork: 'ethereum', destinationNetwork: 'base', destinationCurrency: 'usdc', amount: '100.00', customer_first_name: PAYER_EXAMPLE.first_name, customer_last_name: PAYER_EXAMPLE.last_name, customer_email: PAYER_EXAMPLE.email }],
  },
)
export type StablePaymentIntentBody = Static<typeof StablePaymentIntentBody>
