import { randomBytes } from 'node:crypto'
import { base32 } from '@scure/base'
import type { FastifyRequest } from 'fastify'
import { amountField } from '../../http/amount-field.js'
import { topLevelNumberText } from '../../http/json-number.js'
import { InvalidRequest } from '../../errors.js'
import { AmountError, CURRENCY_DECIMALS, type Currency, parseAmount } from '../../ledger/amount.js'
import { newWalletAddress, type WalletChain } from '../wallets/public.js'
import { CHAINS, type Chain } from '../../validation/chain-address.js'
import type { DepositInstructions } from './schemas.js'

/**
 * What the transfer and payment-intent routes check beyond their schemas: the client types
 * currencies, rails and networks as free strings, so each is checked here against the values it
 * may take, with a message naming them. Codes are taken in any case and answered in lower case.
 */

export const FIATS = ['usd', 'eur', 'mxn'] as const
export const STABLECOINS = ['usdc', 'eurc'] as const
export type Fiat = (typeof FIATS)[number]
export type Stablecoin = (typeof STABLECOINS)[number]

/** The bank rails each fiat is paid on. */
export const FIAT_RAILS: Readonly<Record<Fiat, readonly string[]>> = {
  usd: ['ach', 'ach_push', 'ach_same_day', 'wire'],
  eur: ['sepa', 'swift'],
  mxn: ['spei'],
}

/** The chains money can arrive on: an address of each is made for the sender (memo chains are not offered). */
export const INBOUND_NETWORKS: readonly Chain[] = CHAINS.filter((chain) => chain !== 'stellar' && chain !== 'tron')

export function oneOf<const T extends string>(field: string, value: string, allowed: readonly T[]): T {
  const code = value.toLowerCase()
  if (!(allowed as readonly string[]).includes(code)) throw new InvalidRequest(`${field} must be one of ${allowed.join(', ')}`)
  return code as T
}

export function railFor(field: string, value: string, currency: Fiat): string {
  const rail = value.toLowerCase()
  const rails = FIAT_RAILS[currency]
  if (!rails.includes(rail)) throw new InvalidRequest(`${field} must be one of ${rails.join(', ')} for ${currency}`)
  return rail
}

/** The required amount `field`: a 400 naming it when absent. */
export function requiredAmount(request: FastifyRequest, field: string, value: string | number | undefined, currency: Currency): bigint {
  if (value === undefined) throw new InvalidRequest(`${field} is required`)
  return amountField(request, field, value, currency)
}

/**
 * The developer fee: 0 when absent; otherwise at most 2 decimals (as the provider's fixed fee)
 * and strictly below `amount` when the amount is known.
 */
export function developerFeeField(request: FastifyRequest, value: string | number | undefined, currency: Currency, amount: bigint | null): bigint {
  if (value === undefined) return 0n
  const text = typeof value === 'string' ? value : topLevelNumberText(request.jsonText, 'developer_fee')
  let fee: bigint
  try {
    fee = parseAmount(text ?? '', 'usd')
  } catch (error) {
    if (error instanceof AmountError) throw new InvalidRequest(`developer_fee must be a decimal amount with at most 2 decimals (got ${JSON.stringify(String(text ?? value).slice(0, 40))})`)
    throw error
  }
  const units = fee * 10n ** BigInt(CURRENCY_DECIMALS[currency] - 2)
  if (amount !== null && units >= amount) throw new InvalidRequest('developer_fee must be less than the amount')
  return units
}

const ACH_REFERENCE = /^[A-Za-z0-9 ]{1,10}$/

export function checkAchReference(reference: string | undefined): void {
  if (reference !== undefined && !ACH_REFERENCE.test(reference)) throw new InvalidRequest('ach_reference must be 1 to 10 letters, digits and spaces')
}

function digits(count: number): string {
  let text = ''
  for (const byte of randomBytes(count)) text += String(byte % 10)
  return text
}

/** The sandbox bank's details for a payment in `currency`, with a reference the sender must quote. */
export function bankInstructions(currency: Fiat): Omit<DepositInstructions, 'amount' | 'currency' | 'payment_rail'> {
  const common = {
    deposit_message: `DP${base32.encode(randomBytes(10)).slice(0, 12)}`,
    bank_name: 'Devplatform Sandbox Bank',
    bank_address: '1 Sandbox Way, Wilmington, DE 19801, US',
    bank_beneficiary_name: 'Devplatform Payments',
  }
  if (currency === 'usd') return { ...common, bank_routing_number: '101019644', bank_account_number: digits(12) }
  if (currency === 'eur') return { ...common, iban: `DE${digits(2)}50010517${digits(10)}`, bic: 'DEVPDEFFXXX' }
  return { ...common, clabe: `646180${digits(12)}` }
}

/** A new address on `chain` for a sender to pay to. */
export function depositAddress(chain: Chain): string {
  return newWalletAddress(chain === 'solana' ? 'solana' : ('base' satisfies WalletChain))
}
