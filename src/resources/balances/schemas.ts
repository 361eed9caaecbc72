import { Type, type Static } from 'typebox'
import { BASE_WALLET_EXAMPLE, stablecoinAmount, TOKEN_CONTRACTS, WALLET_CHAINS, WALLET_CURRENCIES, WALLET_EXAMPLES, type WalletCurrency } from '../wallets/public.js'

/**
 * The balances the docs page shows: the example wallets' money (src/resources/wallets/schemas.ts).
 * The totals add them up; total_usd_value is 1234.56 USDC plus 500 EURC at the sandbox's default
 * EUR→USD mid-market rate 1.17647 (588.235 USD), rounded down to the cent.
 */
const TOTALS: Readonly<Record<WalletCurrency, string>> = { usdc: '1234.560000', eurc: '500.000000' }
const TOTAL_USD_VALUE = '1822.79'

function holdingsExample(currency: WalletCurrency) {
  return WALLET_EXAMPLES.map((wallet) => ({
    wallet_id: wallet.id,
    chain: wallet.chain,
    address: wallet.address,
    currency,
    contract_address: TOKEN_CONTRACTS[wallet.chain][currency],
    ...wallet.holdings[currency],
  }))
}

const aggregatedExample = (currency: WalletCurrency) => ({ currency, total_balance: TOTALS[currency], balances: holdingsExample(currency) })

/** One wallet's holding in the currency: the element of `balances`, which the published client leaves open. */
export const WalletHoldingSchema = Type.Object(
  {
    wallet_id: Type.String({ format: 'uuid', examples: [BASE_WALLET_EXAMPLE.id] }),
    chain: Type.Enum([...WALLET_CHAINS]),
    // A type list, not anyOf: fast-json-stringify resolves this schema's references once per anyOf branch.
    address: Type.Unsafe<string | null>({
      type: ['string', 'null'],
      description: "the wallet's address on the chain; null for a live wallet while live deposits on its chain are off",
      examples: [BASE_WALLET_EXAMPLE.address],
    }),
    currency: Type.Enum([...WALLET_CURRENCIES]),
    contract_address: Type.String({ description: "the token's contract on the chain (Solana: its mint)", examples: [TOKEN_CONTRACTS.base.usdc] }),
    balance: stablecoinAmount('available: posted credits − posted debits − reserved (pending) debits; what total_balance adds up', BASE_WALLET_EXAMPLE.holdings.usdc.balance),
    pending_incoming: stablecoinAmount('credits of pending entries: on the way in, not yet in balance', BASE_WALLET_EXAMPLE.holdings.usdc.pending_incoming),
    pending_outgoing: stablecoinAmount('debits of pending entries: reserved, already taken out of balance', BASE_WALLET_EXAMPLE.holdings.usdc.pending_outgoing),
  },
  { $id: 'WalletHolding', examples: [holdingsExample('usdc')[0]] },
)

export const AggregatedBalanceResponseSchema = Type.Object(
  {
    currency: Type.Enum([...WALLET_CURRENCIES]),
    total_balance: stablecoinAmount("the sum of the wallets' available balances in the currency", TOTALS.usdc),
    balances: Type.Array(WalletHoldingSchema, { description: 'one per wallet (chain), in the order base, ethereum, solana' }),
  },
  { $id: 'AggregatedBalanceResponse', examples: [aggregatedExample('usdc')] },
)
export type AggregatedBalanceResponse = Static<typeof AggregatedBalanceResponseSchema>

export const AllBalancesResponseSchema = Type.Object(
  {
    usdc: AggregatedBalanceResponseSchema,
    eurc: AggregatedBalanceResponseSchema,
    total_usd_value: Type.String({
      pattern: '^(0|[1-9][0-9]*)\\.[0-9]{2}$',
      examples: [TOTAL_USD_VALUE],
      description: 'USDC at par plus EURC at the current EUR→USD mid-market rate, rounded down to the cent',
    }),
  },
  { $id: 'AllBalancesResponse', examples: [{ usdc: aggregatedExample('usdc'), eurc: aggregatedExample('eurc'), total_usd_value: TOTAL_USD_VALUE }] },
)
export type AllBalancesResponse = Static<typeof AllBalancesResponseSchema>
