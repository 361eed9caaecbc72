import { formatAmount } from '../../ledger/amount.js'
import type { LiveReceiving } from '../../ledger/money-context.js'
import { contractOf, type Holding, type WalletChain, type WalletCurrency } from '../wallets/public.js'
import type { AggregatedBalanceResponse, AllBalancesResponse } from './schemas.js'

/** The currency's total over the application's wallets, and each wallet's part (`holdings` of that currency, in wallet order). */
export function toAggregatedBalance(currency: WalletCurrency, holdings: readonly Holding[], receiving: LiveReceiving): AggregatedBalanceResponse {
  const total = holdings.reduce((sum, holding) => sum + holding.available, 0n)
  return {
    currency,
    total_balance: formatAmount(total, currency),
    balances: holdings.map((holding) => {
      const chain = holding.wallet.chain as WalletChain
      return {
        wallet_id: holding.wallet.id,
        chain,
        address: holding.wallet.address,
        currency,
        contract_address: contractOf(holding.wallet, currency, receiving),
        balance: formatAmount(holding.available, currency),
        pending_incoming: formatAmount(holding.pendingIncoming, currency),
        pending_outgoing: formatAmount(holding.pendingOutgoing, currency),
      }
    }),
  }
}

/** Both currencies' balances and their worth in US dollars (`usdCents`, already worked out). */
export function toAllBalances(holdings: readonly Holding[], usdCents: bigint, receiving: LiveReceiving): AllBalancesResponse {
  return {
    usdc: toAggregatedBalance('usdc', holdings.filter((holding) => holding.currency === 'usdc'), receiving),
    eurc: toAggregatedBalance('eurc', holdings.filter((holding) => holding.currency === 'eurc'), receiving),
    total_usd_value: formatAmount(usdCents, 'usd'),
  }
}
