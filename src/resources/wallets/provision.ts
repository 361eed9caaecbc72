import type { FastifyInstance } from 'fastify'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { WALLET_CHAINS, type WalletRow, WalletsRepository } from './repository.js'

/**
 * The application's wallets in the environment, made on its first use. A read answers once they
 * all exist; only the first use (or one racing it) opens a write transaction to make them.
 */
export async function walletsOf(app: FastifyInstance, environment: LedgerEnvironment, appId: string): Promise<WalletRow[]> {
  const existing = await new WalletsRepository(app.db).list(environment, appId)
  if (existing.length === WALLET_CHAINS.length) return existing
  return app.transact((tx) => new WalletsRepository(tx.db).ensure(environment, appId))
}
