import { formatAmount } from '../../ledger/amount.js'
import type { LiveReceiving } from '../../ledger/money-context.js'
import { type Holding, TOKEN_CONTRACTS, type WalletChain, type WalletCurrency, type WalletRow } from './repository.js'
import type { Wallet } from './schemas.js'

/**
 * The token contract a wallet's balance in `currency` is held in: Circle's, or in live on a chain
 * that is on, the one the operator configured (the chain the platform actually watches).
 */
export function contractOf(wallet: WalletRow, currency: WalletCurrency, receiving: LiveReceiving): string {
  const chain = wallet.chain as WalletChain
  return (wallet.environment === 'live' ? receiving.tokenContract(chain, currency) : undefined) ?? TOKEN_CONTRACTS[chain][currency]
}

/** The API's wallet object: the wallet, what it holds in each currency (`holdings` of it, in order) and its application. */
export function toWallet(row: WalletRow, holdings: readonly Holding[], application: { id: string; name: string }, receiving: LiveReceiving): Wallet {
  const chain = row.chain as WalletChain
  const wallet: Wallet = {
    id: row.id,
    bridge_id: row.id,
    address: row.address,
    chain,
    balances: holdings.map((holding) => ({
      balance: formatAmount(holding.available, holding.currency),
      currency: holding.currency,
      chain,
      contract_address: contractOf(row, holding.currency, receiving),
    })),
    created_at: row.created_at,
    updated_at: row.updated_at,
    business: { id: application.id, name: application.name },
    app: { id: application.id, name: application.name },
  }
  if (row.address === null) wallet.address_unavailable_reason = receiving.offReason(chain, undefined) ?? 'its receiving address is being given: read the wallets again'
  return wallet
}
