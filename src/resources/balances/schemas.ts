import { Type, type Static } from 'typebox'
import { WALLET_CHAINS, WALLET_CURRENCIES } from '../../ledger/wallets.js'
import { stablecoinAmount } from '../wallets/schemas.js'

/** One wallet's holding in the currency: the element of `balances`, which the published client leaves open. */
export const WalletHoldingSchema = Type.Object(
  {
    wallet_id: Type.String({ format: 'uuid' }),
    chain: Type.Enum([...WALLET_CHAINS]),
    address: Type.String({ description: "the wallet's address on the chain" }),
    currency: Type.Enum([...WALLET_CURRENCIES]),
    contract_address: Type.String({ description: "the token's contract on the chain (Solana: its mint)" }),
    balance: stablecoinAmount('available: posted credits − posted debits − reserved (pending) debits; what total_balance adds up'),
    pending_incoming: stablecoinAmount('credits of pending entries: on the way in, not yet in balance'),
    pending_outgoing: stablecoinAmount('debits of pending entries: reserved, already taken out of balance'),
  },
  { $id: 'WalletHolding' },
)

export const AggregatedBalanceResponseSchema = Type.Object(
  {
    currency: Type.Enum([...WALLET_CURRENCIES]),
    total_balance: stablecoinAmount("the sum of the wallets' available balances in the currency"),
    balances: Type.Array(WalletHoldingSchema, { description: 'one per wallet (chain), in the order base, ethereum, solana' }),
  },
  { $id: 'AggregatedBalanceResponse' },
)
export type AggregatedBalanceResponse = Static<typeof AggregatedBalanceResponseSchema>

export const AllBalancesResponseSchema = Type.Object(
  {
    usdc: AggregatedBalanceResponseSchema,
    eurc: AggregatedBalanceResponseSchema,
    total_usd_value: Type.String({
      pattern: '^(0|[1-9][0-9]*)\\.[0-9]{2}$',
      examples: ['1234.56'],
      description: 'USDC at par plus EURC at the current EUR→USD mid-market rate, rounded down to the cent',
    }),
  },
  { $id: 'AllBalancesResponse' },
)
export type AllBalancesResponse = Static<typeof AllBalancesResponseSchema>
