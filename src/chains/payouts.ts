import type { Db } from '../db/database.js'
import { isoOf, newId } from '../db/time.js'
import type { LivePayouts, PayoutRequest } from '../ledger/money-context.js'
import { chainConfigOf, type ChainsConfig, type ChainToken } from './config.js'
import type { ChainPayoutAttemptsTable, ChainPayoutsTable } from './tables.js'
import type { Insertable, Selectable } from 'kysely'

export type ChainPayoutRow = Selectable<ChainPayoutsTable>
export type ChainPayoutAttemptRow = Selectable<ChainPayoutAttemptsTable>

/** The payout statuses (tables.ts). */
export type PayoutStatus = 'queued' | 'awaiting_approval' | 'signed' | 'submitted' | 'confirmed' | 'failed'

/**
 * Live payouts as the money core asks for them: whether the platform sends on a rail in a
 * currency, and the queue the chains' senders take from (src/chains/sender.ts).
 */
export class LivePayoutQueue implements LivePayouts {
  constructor(private readonly config: ChainsConfig | undefined) {}

  offReason(rail: string, currency: string): string | undefined {
    if (this.config?.hotWallet === undefined) return 'live payouts are off: no hotWalletKey is configured (CHAINS_FILE, docs/chains.md#keys)'
    const chain = chainConfigOf(this.config, rail)
    if (chain === undefined) return `live payouts on ${rail} are off: this platform has no configuration for ${rail} (CHAINS_FILE, docs/chains.md)`
    if (chain.tokens[currency as ChainToken] === undefined) return `live payouts of ${currency} on ${rail} are off: no ${currency} contract is configured for ${rail}`
    return undefined
  }

  async request(db: Db, payout: PayoutRequest, now: number): Promise<void> {
    const token = chainConfigOf(this.config, payout.chain)?.tokens[payout.currency]
    if (token === undefined || this.offReason(payout.chain, payout.currency) !== undefined) throw new Error(`live payouts of ${payout.currency} on ${payout.chain} are off`)
    const at = isoOf(now)
    await new PayoutsRepository(db).insert({
      id: newId(),
      chain: payout.chain,
      environment: payout.environment,
      app_id: payout.appId,
      owner_type: payout.ownerType,
      owner_id: payout.ownerId,
      currency: payout.currency,
      token,
      to_address: payout.toAddress.toLowerCase(),
      amount: payout.amount.toString(),
      status: 'queued',
      sender: null,
      nonce: null,
      tx_hash: null,
      reason: null,
      sent_at: null,
      approved_by: null,
      approved_at: null,
      approval_reason: null,
      created_at: at,
      updated_at: at,
    })
  }
}

/** The payouts' rows: the queue, each payout's signed transactions, and the hot wallet's nonces. */
export class PayoutsRepository {
  constructor(private readonly db: Db) {}

  /** Queues a payout; one already asked for by the same owner stays as it is. */
  async insert(row: Insertable<ChainPayoutsTable>): Promise<void> {
    await this.db.insertInto('chain_payouts').values(row).onConflict((conflict) => conflict.columns(['owner_type', 'owner_id']).doNothing()).execute()
  }

  find(id: string): Promise<ChainPayoutRow | undefined> {
    return this.db.selectFrom('chain_payouts').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** A chain's payouts in `statuses`, oldest first. */
  inStatus(chain: string, statuses: readonly PayoutStatus[], limit: number): Promise<ChainPayoutRow[]> {
    return this.db.selectFrom('chain_payouts').selectAll().where('chain', '=', chain).where('status', 'in', [...statuses]).orderBy('created_at').orderBy('id').limit(limit).execute()
  }

  /** Moves a payout from `from` (false when another process moved it first). */
  async move(id: string, from: PayoutStatus, changes: Partial<Pick<ChainPayoutRow, 'status' | 'sender' | 'nonce' | 'tx_hash' | 'reason' | 'sent_at' | 'updated_at'>>): Promise<boolean> {
    const result = await this.db.updateTable('chain_payouts').set(changes).where('id', '=', id).where('status', '=', from).executeTakeFirst()
    return result.numUpdatedRows === 1n
  }

  /** What was sent of `currency` on the chain since `since` (ISO 8601), in its smallest unit: what the spending limit counts. */
  async sentSince(chain: string, currency: string, since: string): Promise<bigint> {
    const rows = await this.db
      .selectFrom('chain_payouts')
      .select('amount')
      .where('chain', '=', chain)
      .where('currency', '=', currency)
      .where('sent_at', '>=', since)
      .where('status', 'in', ['signed', 'submitted', 'confirmed'])
      .execute()
    return rows.reduce((sum, row) => sum + BigInt(row.amount), 0n)
  }

  /**
   * An operator approves a payout held above the spending limit: it is queued again, sent without
   * the limit, with who approved it, when and why kept on the payout. False unless it awaits approval.
   */
  async approve(id: string, by: string, reason: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('chain_payouts')
      .set({ status: 'queued', reason: null, approved_by: by, approved_at: at, approval_reason: reason, updated_at: at })
      .where('id', '=', id)
      .where('status', '=', 'awaiting_approval')
      .executeTakeFirst()
    return result.numUpdatedRows === 1n
  }

  /** Payouts by status, newest first (the CLI's list). */
  list(status: PayoutStatus | undefined, limit: number): Promise<ChainPayoutRow[]> {
    let query = this.db.selectFrom('chain_payouts').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit)
    if (status !== undefined) query = query.where('status', '=', status)
    return query.execute()
  }

  /** Notes why a queued payout is not sent yet (null: nothing stops it). */
  async note(id: string, reason: string | null, at: string): Promise<void> {
    await this.db.updateTable('chain_payouts').set({ reason, updated_at: at }).where('id', '=', id).where('status', '=', 'queued').execute()
  }

  async insertAttempt(row: ChainPayoutAttemptRow): Promise<void> {
    await this.db.insertInto('chain_payout_attempts').values(row).execute()
  }

  /** A payout's signed transactions, oldest first. */
  attempts(payoutId: string): Promise<ChainPayoutAttemptRow[]> {
    return this.db.selectFrom('chain_payout_attempts').selectAll().where('payout_id', '=', payoutId).orderBy('created_at').orderBy('tx_hash').execute()
  }

  /**
   * Takes the hot wallet's next nonce on the chain: the stored one, or `chainNonce` (what the chain
   * counts, the node's pool included) when that is higher (the key sent elsewhere) or none is
   * stored. The row's lock is held until the transaction ends, so two never take the same one.
   */
  async takeNonce(chain: string, address: string, chainNonce: number): Promise<number> {
    await this.db.insertInto('chain_nonces').values({ chain, address, next_nonce: chainNonce }).onConflict((conflict) => conflict.columns(['chain', 'address']).doNothing()).execute()
    // A no-op update first: it locks the row (PostgreSQL) before it is read.
    const row = await this.db
      .updateTable('chain_nonces')
      .set((eb) => ({ next_nonce: eb.ref('next_nonce') }))
      .where('chain', '=', chain)
      .where('address', '=', address)
      .returning('next_nonce')
      .executeTakeFirstOrThrow()
    const nonce = Math.max(Number(row.next_nonce), chainNonce)
    await this.db.updateTable('chain_nonces').set({ next_nonce: nonce + 1 }).where('chain', '=', chain).where('address', '=', address).execute()
    return nonce
  }

  /** Records what the sender saw of the hot wallet's gas balance. */
  async recordGas(chain: string, address: string, gasBalance: bigint, at: string): Promise<void> {
    await this.db
      .insertInto('chain_senders')
      .values({ chain, address, gas_balance: gasBalance.toString(), seen_at: at })
      .onConflict((conflict) => conflict.column('chain').doUpdateSet({ address, gas_balance: gasBalance.toString(), seen_at: at }))
      .execute()
  }

}
