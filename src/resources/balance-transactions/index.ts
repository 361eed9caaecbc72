import { defineResource } from '../resource.js'
import { balanceTransactionsManifest } from './manifest.js'
import { balanceTransactionRoutes } from './routes.js'

/** The movements of an application's money, read from the ledger (src/ledger/movements.ts). */
export const balanceTransactions = defineResource({ manifest: balanceTransactionsManifest, routes: balanceTransactionRoutes })
