import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { InvalidRequest } from '../../errors.js'
import { amountField } from '../../http/amount-field.js'
import { type Currency, parseAmount } from '../../ledger/amount.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { ensureWallets, WALLET_CHAINS } from '../wallets/public.js'
import { errorResponses } from '../../schemas/common.js'
import type { Transaction } from '../../events/transact.js'
import { describeAddressFormat, isValidChainAddress } from '../../validation/chain-address.js'
import { operation } from '../manifest.js'
import {
  bankInstructions,
  checkAchReference,
  creationRoutes,
  type CustomerDetails,
  depositAddress,
  FIATS,
  followRoutes,
  INBOUND_NETWORKS,
  type NewTransfer,
  oneOf,
  PaymentIntentSchema,
  railFor,
  STABLECOINS,
  type TransferContext,
  type TransferRoutesOptions,
} from '../transfers/public.js'
import { paymentIntentsManifest } from './manifest.js'
import { BankPaymentIntentBody, StablePaymentIntentBody } from './schemas.js'

const NOT_FOUND = 'Payment intent not found'

/** Above this much of the source currency, the payer's first and last names are required. */
const NAMES_REQUIRED_ABOVE = '1000'

type CustomerFieldsBody = Pick<
  BankPaymentIntentBody,
  | 'customer_first_name'
  | 'customer_last_name'
  | 'customer_email'
  | 'customer_address'
  | 'customer_country'
  | 'customer_countryISO'
  | 'customer_province'
  | 'customer_provinceISO'
  | 'phoneNumber'
>

/** The payer's details as stored; the names above NAMES_REQUIRED_ABOVE, a province for US and CA payers. */
function customerOf(body: CustomerFieldsBody, amount: bigint | null, currency: Currency): CustomerDetails | undefined {
  const countryISO = body.customer_countryISO?.toUpperCase()
  if ((countryISO === 'US' || countryISO === 'CA') && body.customer_provinceISO === undefined) throw new InvalidRequest(`customer_provinceISO is required for a payer in ${countryISO}`)
  if (amount !== null && amount > parseAmount(NAMES_REQUIRED_ABOVE, currency) && (body.customer_first_name === undefined || body.customer_last_name === undefined)) {
    throw new InvalidRequest(`customer_first_name and customer_last_name are required above ${NAMES_REQUIRED_ABOVE} ${currency}`)
  }
  const customer: CustomerDetails = JSON.parse(
    JSON.stringify({
      first_name: body.customer_first_name,
      last_name: body.customer_last_name,
      email: body.customer_email,
      address: body.customer_address,
      country: body.customer_country,
      countryISO,
      province: body.customer_province,
      provinceISO: body.customer_provinceISO?.toUpperCase(),
      phone_number: body.phoneNumber,
    }),
  ) as CustomerDetails
  return Object.keys(customer).length === 0 ? undefined : customer
}

/**
 * Where an intent settles: the application's wallet on `network` (made on first use), or
 * `address` on it when one is given.
 */
async function settlementOf(tx: Transaction, environment: LedgerEnvironment, appId: string, networkText: string, address: string | undefined, currency: Currency): Promise<Pick<NewTransfer, 'wallet' | 'destination'>> {
  const network = oneOf('destinationNetwork', networkText, INBOUND_NETWORKS)
  if (address !== undefined) {
    if (!isValidChainAddress(network, address)) throw new InvalidRequest(`destinationAddress must be a valid ${network} address (${describeAddressFormat(network)})`)
    return { wallet: undefined, destination: { payment_rail: network, currency, to_address: address } }
  }
  const wallet = (await ensureWallets(tx.db, environment, appId)).find((row) => row.chain === network)
  if (wallet === undefined) {
    throw new InvalidRequest(`destinationNetwork must be one of ${WALLET_CHAINS.join(', ')} to settle into the application's wallet; give a destinationAddress to settle elsewhere`)
  }
  return { wallet, destination: { payment_rail: network, currency, bridge_wallet_id: wallet.id, to_address: wallet.address ?? undefined } }
}

function intentAmount(request: FastifyRequest, value: string | number | undefined, currency: Currency): bigint | null {
  return value === undefined ? null : amountField(request, 'amount', value, currency)
}

export const paymentIntentRoutes: FastifyPluginAsyncTypebox<TransferRoutesOptions> = async (app, options) => {
  const context: TransferContext = { rates: options.exchangeRates, timings: options.drainTimings, now: Date.now, receiving: options.receiving }
  const post = creationRoutes(app, context, PaymentIntentSchema, errorResponses(400, 401, 403, 404, 409, 429))

  post(
    operation(paymentIntentsManifest, 'paymentIntentControllerCreateBankPaymentIntent'),
    {
      tags: ['payment intents'],
      summary: 'Ask a customer to pay by bank',
      description:
        "Requires idempotency-key. Starts awaiting_funds; source_deposit_instructions give the bank details and the deposit_message the payer quotes. Once paid, the fiat is converted to destinationCurrency and settled into the application's wallet on destinationNetwork (or paid out to destinationAddress). Without amount the payer chooses it.",
      body: BankPaymentIntentBody,
    },
    async ({ body, request, tx, environment, appId }) => {
      const sourceCurrency = oneOf('sourceCurrency', body.sourceCurrency, FIATS)
      const destinationCurrency = oneOf('destinationCurrency', body.destinationCurrency, STABLECOINS)
      const rail = railFor('sourcePaymentRail', body.sourcePaymentRail, sourceCurrency)
      checkAchReference(body.ach_reference)
      const amount = intentAmount(request, body.amount, sourceCurrency)
      const customer = customerOf(body, amount, sourceCurrency)
      const settlement = await settlementOf(tx, environment, appId, body.destinationNetwork, body.destinationAddress, destinationCurrency)
      const source = { payment_rail: rail, currency: sourceCurrency, wire_message: body.wire_message, sepa_reference: body.sepa_reference, ach_reference: body.ach_reference }
      return { environment, appId, kind: 'payment_intent_bank', ...settlement, currency: sourceCurrency, amount, developerFee: 0n, destinationCurrency, source, instructions: bankInstructions(sourceCurrency), customer }
    },
  )

  post(
    operation(paymentIntentsManifest, 'paymentIntentControllerCreateStablePaymentIntent'),
    {
      tags: ['payment intents'],
      summary: 'Ask a customer to pay in a stablecoin',
      description:
        "Requires idempotency-key. Starts awaiting_funds; source_deposit_instructions give the address to send to on sourceNetwork. Once paid, the funds (converted when destinationCurrency differs) settle into the application's wallet on destinationNetwork (or go to destinationAddress). Without amount the payer chooses it.",
      body: StablePaymentIntentBody,
    },
    async ({ body, request, tx, environment, appId }) => {
      const sourceCurrency = oneOf('sourceCurrency', body.sourceCurrency, STABLECOINS)
      const sourceNetwork = oneOf('sourceNetwork', body.sourceNetwork, INBOUND_NETWORKS)
      const destinationCurrency = body.destinationCurrency === undefined ? sourceCurrency : oneOf('destinationCurrency', body.destinationCurrency, STABLECOINS)
      const amount = intentAmount(request, body.amount, sourceCurrency)
      const customer = customerOf(body, amount, sourceCurrency)
      const settlement = await settlementOf(tx, environment, appId, body.destinationNetwork, body.destinationAddress, destinationCurrency)
      return {
        environment,
        appId,
        kind: 'payment_intent_stablecoin',
        ...settlement,
        currency: sourceCurrency,
        amount,
        developerFee: 0n,
        destinationCurrency,
        source: { payment_rail: sourceNetwork, currency: sourceCurrency },
        instructions: { to_address: depositAddress(sourceNetwork) },
        customer,
      }
    },
  )

  await followRoutes('payment_intent', context, NOT_FOUND, {
    list: operation(paymentIntentsManifest, 'paymentIntentControllerFindAll'),
    find: operation(paymentIntentsManifest, 'paymentIntentControllerFindOne'),
    cancel: operation(paymentIntentsManifest, 'paymentIntentControllerCancel'),
    simulateFunds: operation(paymentIntentsManifest, 'paymentIntentControllerSimulateFunds'),
  })(app, options)
}
