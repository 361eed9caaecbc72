import { randomBytes } from 'node:crypto'
import type { ChainDepositRow } from '../../../src/chains/repository.js'
import { newId, nowIso } from '../../../src/db/time.js'
import type { TestServer } from '../../helper.js'

/**
 * A deposit as the chain watcher records it, written straight into the table: the resource only
 * reads them (test/chains/ has the watcher write them from a real chain).
 */
export async function insertDeposit(server: TestServer, appId: string, changes: Partial<ChainDepositRow> = {}): Promise<ChainDepositRow> {
  const now = nowIso()
  const row: ChainDepositRow = {
    id: newId(),
    chain: 'base',
    tx_hash: `0x${randomBytes(32).toString('hex')}`,
    log_index: 0,
    block_number: 100,
    block_hash: `0x${randomBytes(32).toString('hex')}`,
    token: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
    currency: 'usdc',
    from_address: `0x${randomBytes(20).toString('hex')}`,
    to_address: `0x${randomBytes(20).toString('hex')}`,
    amount: '25000000',
    environment: 'live',
    app_id: appId,
    owner_type: 'wallet',
    owner_id: newId(),
    status: 'pending',
    confirmations: 1,
    reason: null,
    credited_type: null,
    credited_id: null,
    sweep_id: null,
    created_at: now,
    updated_at: now,
    ...changes,
  }
  await server.app.db.insertInto('chain_deposits').values(row).execute()
  return row
}
