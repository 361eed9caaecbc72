import type { TableDeclaration } from '../modules/module.js'

/**
 * A receiving address the platform derived (derivation.ts) and who it belongs to: an address is
 * allocated once, to one object, on one chain. Live only: the sandbox's addresses are made up.
 */
export interface ChainAddressesTable {
  /** lower-case 0x hex */
  address: string
  /** its index below m/44'/60'/0'/0 */
  derivation_index: number
  chain: string
  environment: string
  app_id: string
  /** what the funds are for: 'liquidation_address', 'wallet', 'transfer' (a payment intent or direct-wallet transfer), or 'unassigned' (allocated for a liquidation address not created yet) */
  owner_type: string
  owner_id: string | null
  /** the one token accepted there, or null for every token of the chain (a wallet) */
  currency: string | null
  created_at: string
}

/** The next derivation index: one row, taken under its row lock so no two allocations share one. */
export interface ChainAddressCounterTable {
  name: string
  next_index: number
}

/** How far the watcher of a chain has read. */
export interface ChainCursorsTable {
  chain: string
  /** the first block not read yet */
  next_block: number
  /** the newest head seen, its time, and the last fault (for `chains status` and /metrics) */
  head_block: number | null
  head_seen_at: string | null
  last_error: string | null
  last_error_at: string | null
  updated_at: string
}

/** The hashes of the recent blocks the watcher read: how it sees a reorg. */
export interface ChainBlocksTable {
  chain: string
  number: number
  hash: string
}

/** One token transfer to a receiving address, seen on chain; amounts are integer text of the token's smallest unit. */
export interface ChainDepositsTable {
  id: string
  chain: string
  tx_hash: string
  log_index: number
  block_number: number
  block_hash: string
  /** the token contract, lower-case */
  token: string
  currency: string
  from_address: string
  to_address: string
  amount: string
  environment: string
  app_id: string
  owner_type: string
  owner_id: string | null
  /** pending → confirmed | held, pending → removed (a reorg), confirmed | held → reversed (a reorg deeper than the confirmations) */
  status: string
  confirmations: number
  /** why a confirmed deposit was not credited (held), or what the reorg did */
  reason: string | null
  /** what the deposit became once credited (a drain, a wallet, a transfer: ChainDepositConfirmed.credited); null while not credited */
  credited_type: string | null
  credited_id: string | null
  /** the sweep that moved it to the hot wallet (chain_sweeps); null while it is on its receiving address */
  sweep_id: string | null
  created_at: string
  updated_at: string
}

/** A lease: one holder at a time across every instance, taken over once it expires. */
export interface ChainLeasesTable {
  name: string
  holder: string
  /** ISO 8601 */
  expires_at: string
}

/**
 * A live payout on chain (src/chains/sender.ts): queued → signed (nonce taken, transaction written
 * before broadcast) → submitted (broadcast) → confirmed | failed (reverted); queued →
 * awaiting_approval (above the spending limit) → queued once an operator approves it.
 */
export interface ChainPayoutsTable {
  id: string
  chain: string
  environment: string
  app_id: string
  /** what asked for it: 'drain' or 'transfer' (ChainPayoutUpdated's subscribers) */
  owner_type: string
  owner_id: string
  currency: string
  /** the token's contract, lower-case */
  token: string
  to_address: string
  /** in the currency's smallest unit */
  amount: string
  status: string
  /** the hot wallet's address that signed it */
  sender: string | null
  nonce: number | null
  /** the mined transaction once known, else the latest sent */
  tx_hash: string | null
  reason: string | null
  /** when it was first signed: what the spending limit's window counts */
  sent_at: string | null
  /** the operator's approval of a payout above the spending limit (`devplatform payouts approve`): who, when, why */
  approved_by: string | null
  approved_at: string | null
  approval_reason: string | null
  created_at: string
  updated_at: string
}

/** One signed transaction of a payout (a replacement is another, with the same nonce). */
export interface ChainPayoutAttemptsTable {
  tx_hash: string
  payout_id: string
  nonce: number
  /** the signed transaction, serialized: public once broadcast, rebroadcast as is after a crash */
  raw: string
  max_fee_per_gas: string
  created_at: string
}

/** The hot wallet's next nonce on a chain. */
export interface ChainNoncesTable {
  chain: string
  address: string
  next_nonce: number
}

/** What a chain's sender last saw of its hot wallet. */
export interface ChainSendersTable {
  chain: string
  address: string
  /** the chain's own coin, in wei */
  gas_balance: string
  seen_at: string
}

/**
 * Confirmed deposits moved from a receiving address to the hot wallet (src/chains/sweeper.ts):
 * signed (both transactions signed and written before broadcast) → submitted → confirmed | failed.
 */
export interface ChainSweepsTable {
  id: string
  chain: string
  environment: string
  /** the receiving address swept, lower-case, and its derivation index */
  address: string
  derivation_index: number
  currency: string
  token: string
  /** the deposits it moves (chain_deposits.sweep_id), in the token's smallest unit */
  amount: string
  /** the token's nonces(address) the permit was signed with */
  permit_nonce: string
  /** the hot wallet: the permit's spender, who receives and pays the gas */
  sender: string
  status: string
  /** the hot wallet's two transactions, serialized (public once broadcast; sent again as they are after a crash) */
  permit_tx_hash: string
  permit_tx_nonce: number
  permit_raw: string
  transfer_tx_hash: string
  transfer_tx_nonce: number
  transfer_raw: string
  reason: string | null
  created_at: string
  updated_at: string
}

declare module '../db/schema.js' {
  interface Database {
    chain_addresses: ChainAddressesTable
    chain_address_counter: ChainAddressCounterTable
    chain_cursors: ChainCursorsTable
    chain_blocks: ChainBlocksTable
    chain_deposits: ChainDepositsTable
    chain_leases: ChainLeasesTable
    chain_payouts: ChainPayoutsTable
    chain_payout_attempts: ChainPayoutAttemptsTable
    chain_nonces: ChainNoncesTable
    chain_senders: ChainSendersTable
    chain_sweeps: ChainSweepsTable
  }
}

export const chainsTables: readonly TableDeclaration[] = [
  { name: 'chain_address_counter', appDeletion: 'untouched', reason: "the platform's: derivation indexes are never given twice" },
  { name: 'chain_addresses', appDeletion: 'kept', reason: 'an address is never given to anyone else, and funds sent to it later must still be found' },
  { name: 'chain_cursors', appDeletion: 'untouched', reason: "the platform's: how far each chain was read" },
  { name: 'chain_blocks', appDeletion: 'untouched', reason: "the platform's: the recent blocks' hashes" },
  { name: 'chain_deposits', appDeletion: 'kept', reason: 'money records: what arrived on chain, and the ledger entries it made' },
  { name: 'chain_leases', appDeletion: 'untouched', reason: "the platform's: which instance watches each chain" },
  { name: 'chain_payouts', appDeletion: 'kept', reason: 'money records: what left on chain, and the ledger entries it settled' },
  { name: 'chain_payout_attempts', appDeletion: 'untouched', reason: "a payout's: the transactions signed for it" },
  { name: 'chain_nonces', appDeletion: 'untouched', reason: "the platform's: the hot wallet's next nonce per chain" },
  { name: 'chain_senders', appDeletion: 'untouched', reason: "the platform's: what each chain's sender last saw of the hot wallet" },
  { name: 'chain_sweeps', appDeletion: 'untouched', reason: "the platform's: deposits moved from its receiving addresses to its hot wallet" },
]
