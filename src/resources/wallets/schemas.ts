import { Type, type Static } from 'typebox'
import { WALLET_CHAINS, WALLET_CURRENCIES } from '../../ledger/wallets.js'
import { Timestamp } from '../../schemas/common.js'

/** An amount of USDC or EURC: a decimal string with all 6 decimals ("12.500000"). */
export function stablecoinAmount(description: string) {
  return Type.String({ pattern: '^(0|[1-9][0-9]*)\\.[0-9]{6}$', examples: ['12.500000'], description })
}

function applicationOf(description: string) {
  return Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }, { description })
}

export const WalletBalanceSchema = Type.Object({
  balance: stablecoinAmount('available: posted credits − posted debits − reserved (pending) debits'),
  currency: Type.Enum([...WALLET_CURRENCIES]),
  chain: Type.Enum([...WALLET_CHAINS]),
  contract_address: Type.String({ description: "the token's contract on the chain (Solana: its mint)" }),
})

export const WalletSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    bridge_id: Type.String({ description: 'the id a liquidation address names in bridge_wallet_id: the same as id (this platform is its own provider)' }),
    address: Type.String({ description: "the wallet's address, valid for its chain" }),
    chain: Type.Enum([...WALLET_CHAINS]),
    balances: Type.Array(WalletBalanceSchema, { description: 'one per currency, usdc then eurc; zero until money arrives' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    business: applicationOf('the application that owns the wallet: an application is its own business here'),
    app: applicationOf('the application that owns the wallet'),
  },
  { $id: 'Wallet' },
)
export type Wallet = Static<typeof WalletSchema>

export const WalletListSchema = Type.Object({ data: Type.Array(WalletSchema) }, { $id: 'WalletList' })
export type WalletList = Static<typeof WalletListSchema>
