import { formatAmount } from '../../ledger/amount.js'
import { type Holding, TOKEN_CONTRACTS, type WalletChain, type WalletRow } from './repository.js'
import type { Wallet } from './schemas.js'

/** The API's wallet object: the wallet, what it holds in each currency (`holdings` of it, in order) and its application. */
export function toWallet(row: WalletRow, holdings: readonly Holding[], application: { id: string; name: string }): Wallet {
  const chain = row.chain as WalletChain
  return {
    id: row.id,
    bridge_id: row.id,
    address: row.address,
    chain,
    balances: holdings.map((holding) => ({
      balance: formatAmount(holding.available, holding.currency),
      currency: holding.currency,
      chain,
      contract_address: TOKEN_CONTRACTS[chain][holding.currency],
    })),
    created_at: row.created_at,
    updated_at: row.updated_at,
    business: { id: application.id, name: application.name },
    app: { id: application.id, name: application.name },
  }
}
