import type { Insertable, Selectable } from 'kysely'
import type { Db } from '../db/database.js'
import type { ChainAddressesTable, ChainBlocksTable, ChainCursorsTable, ChainDepositsTable } from './tables.js'

export type ChainAddressRow = Selectable<ChainAddressesTable>
export type ChainDepositRow = Selectable<ChainDepositsTable>
export type ChainCursorRow = Selectable<ChainCursorsTable>
export type ChainBlockRow = Selectable<ChainBlocksTable>

/** The deposit states (tables.ts). */
export type DepositStatus = 'pending' | 'confirmed' | 'held' | 'removed' | 'reorged' | 'reversed'

/** The chains module's rows: receiving addresses, cursors, recent blocks, deposits, leases. */
export class ChainsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Takes the next derivation index. The counter row's lock is held until the transaction ends,
   * so two allocations never take the same index, and one rolled back gives its index back.
   */
  async takeDerivationIndex(): Promise<number> {
    const row = await this.db
      .updateTable('chain_address_counter')
      .set((eb) => ({ next_index: eb('next_index', '+', 1) }))
      .where('name', '=', 'receiving')
      .returning('next_index')
      .executeTakeFirstOrThrow()
    return Number(row.next_index) - 1
  }

  async insertAddress(row: Insertable<ChainAddressesTable>): Promise<void> {
    await this.db.insertInto('chain_addresses').values(row).execute()
  }

  findAddress(address: string): Promise<ChainAddressRow | undefined> {
    return this.db.selectFrom('chain_addresses').selectAll().where('address', '=', address.toLowerCase()).executeTakeFirst()
  }

  /** The addresses owned by one object (a wallet has one per chain). */
  addressesOf(ownerType: string, ownerId: string): Promise<ChainAddressRow[]> {
    return this.db.selectFrom('chain_addresses').selectAll().where('owner_type', '=', ownerType).where('owner_id', '=', ownerId).execute()
  }

  /** Gives an unassigned address to its owner; false when it is not the application's unassigned address on that chain. */
  async assign(address: string, environment: string, appId: string, chain: string, ownerType: string, ownerId: string): Promise<boolean> {
    const result = await this.db
      .updateTable('chain_addresses')
      .set({ owner_type: ownerType, owner_id: ownerId })
      .where('address', '=', address.toLowerCase())
      .where('environment', '=', environment)
      .where('app_id', '=', appId)
      .where('chain', '=', chain)
      .where('owner_type', '=', 'unassigned')
      .executeTakeFirst()
    return result.numUpdatedRows === 1n
  }

  /** A chain's addresses with an index above `afterIndex`, in index order: how a watcher learns the new ones. */
  addressesAfter(chain: string, afterIndex: number, limit: number): Promise<Pick<ChainAddressRow, 'address' | 'derivation_index'>[]> {
    return this.db
      .selectFrom('chain_addresses')
      .select(['address', 'derivation_index'])
      .where('chain', '=', chain)
      .where('derivation_index', '>', afterIndex)
      .orderBy('derivation_index')
      .limit(limit)
      .execute()
  }

  cursor(chain: string): Promise<ChainCursorRow | undefined> {
    return this.db.selectFrom('chain_cursors').selectAll().where('chain', '=', chain).executeTakeFirst()
  }

  cursors(): Promise<ChainCursorRow[]> {
    return this.db.selectFrom('chain_cursors').selectAll().orderBy('chain').execute()
  }

  async saveCursor(row: ChainCursorRow): Promise<void> {
    await this.db
      .insertInto('chain_cursors')
      .values(row)
      .onConflict((oc) => oc.column('chain').doUpdateSet({ next_block: row.next_block, head_block: row.head_block, head_seen_at: row.head_seen_at, updated_at: row.updated_at }))
      .execute()
  }

  async recordFault(chain: string, message: string, at: string): Promise<void> {
    await this.db.updateTable('chain_cursors').set({ last_error: message, last_error_at: at }).where('chain', '=', chain).execute()
  }

  /** The stored recent blocks, newest first. */
  recentBlocks(chain: string, limit: number): Promise<ChainBlockRow[]> {
    return this.db.selectFrom('chain_blocks').selectAll().where('chain', '=', chain).orderBy('number', 'desc').limit(limit).execute()
  }

  async saveBlocks(rows: readonly ChainBlockRow[]): Promise<void> {
    if (rows.length === 0) return
    await this.db
      .insertInto('chain_blocks')
      .values([...rows])
      .onConflict((oc) => oc.columns(['chain', 'number']).doUpdateSet((eb) => ({ hash: eb.ref('excluded.hash') })))
      .execute()
  }

  /** Forgets blocks from `number` up (a reorg) or below it (older than a reorg the watcher would see). */
  async forgetBlocks(chain: string, side: 'from' | 'below', number: number): Promise<void> {
    await this.db
      .deleteFrom('chain_blocks')
      .where('chain', '=', chain)
      .where('number', side === 'from' ? '>=' : '<', number)
      .execute()
  }

  /** Records a deposit once per log; false when that log was already recorded. */
  async insertDeposit(row: ChainDepositRow): Promise<boolean> {
    const result = await this.db
      .insertInto('chain_deposits')
      .values(row)
      .onConflict((oc) => oc.columns(['chain', 'tx_hash', 'log_index']).doNothing())
      .executeTakeFirst()
    return (result.numInsertedOrUpdatedRows ?? 0n) === 1n
  }

  findDepositByLog(chain: string, txHash: string, logIndex: number): Promise<ChainDepositRow | undefined> {
    return this.db.selectFrom('chain_deposits').selectAll().where('chain', '=', chain).where('tx_hash', '=', txHash).where('log_index', '=', logIndex).executeTakeFirst()
  }

  findDeposit(id: string): Promise<ChainDepositRow | undefined> {
    return this.db.selectFrom('chain_deposits').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** The latest deposit still on the chain (not removed, reorged or reversed) to an application's `address` on `chain`, through the application's index. */
  latestDepositTo(appId: string, environment: string, chain: string, address: string): Promise<ChainDepositRow | undefined> {
    return this.db
      .selectFrom('chain_deposits')
      .selectAll()
      .where('app_id', '=', appId)
      .where('environment', '=', environment)
      .where('chain', '=', chain)
      .where('to_address', '=', address.toLowerCase())
      .where('status', 'in', ['pending', 'confirmed', 'held'])
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst()
  }

  /** A chain's deposits in `statuses` from block `from` up. */
  depositsFrom(chain: string, from: number, statuses: readonly DepositStatus[]): Promise<ChainDepositRow[]> {
    return this.db
      .selectFrom('chain_deposits')
      .selectAll()
      .where('chain', '=', chain)
      .where('block_number', '>=', from)
      .where('status', 'in', [...statuses])
      .orderBy('block_number')
      .orderBy('log_index')
      .execute()
  }

  /** A chain's deposits in `statuses` at block `upTo` or below, oldest first. */
  depositsUpTo(chain: string, upTo: number, statuses: readonly DepositStatus[], limit: number): Promise<ChainDepositRow[]> {
    return this.db
      .selectFrom('chain_deposits')
      .selectAll()
      .where('chain', '=', chain)
      .where('block_number', '<=', upTo)
      .where('status', 'in', [...statuses])
      .orderBy('block_number')
      .orderBy('log_index')
      .limit(limit)
      .execute()
  }

  /** Moves a deposit from one status to another; false when it was not in `from` (another process moved it). */
  async move(id: string, from: DepositStatus, changes: Partial<Pick<ChainDepositRow, 'status' | 'reason' | 'confirmations' | 'block_number' | 'block_hash' | 'updated_at'>>): Promise<boolean> {
    const result = await this.db.updateTable('chain_deposits').set(changes).where('id', '=', id).where('status', '=', from).executeTakeFirst()
    return result.numUpdatedRows === 1n
  }

  /** Counts the confirmations of a chain's pending deposits at head `head`. */
  async countConfirmations(chain: string, head: number): Promise<void> {
    await this.db
      .updateTable('chain_deposits')
      .set((eb) => ({ confirmations: eb(eb.val(head + 1), '-', eb.ref('block_number')) }))
      .where('chain', '=', chain)
      .where('status', '=', 'pending')
      .execute()
  }

  /**
   * Takes or renews the lease `name` for `holder` until `expiresAt`: granted when no one holds it,
   * the holder is this one, or the last holder's lease has run out. True when granted.
   */
  async takeLease(name: string, holder: string, now: string, expiresAt: string): Promise<boolean> {
    await this.db
      .insertInto('chain_leases')
      .values({ name, holder, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ holder, expires_at: expiresAt })
          .where((eb) => eb.or([eb('chain_leases.holder', '=', holder), eb('chain_leases.expires_at', '<', now)])),
      )
      .execute()
    const row = await this.db.selectFrom('chain_leases').select('holder').where('name', '=', name).executeTakeFirst()
    return row?.holder === holder
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.db.deleteFrom('chain_leases').where('name', '=', name).where('holder', '=', holder).execute()
  }

  leases(): Promise<{ name: string; holder: string; expires_at: string }[]> {
    return this.db.selectFrom('chain_leases').selectAll().execute()
  }
}
