import { defineManifest } from '../manifest.js'

export const balanceTransactionsManifest = defineManifest({
  name: 'balance-transactions',
  scopes: ['balance_transaction:read'],
  eventTypes: [],
  operations: [{ method: 'GET', path: '/balance-transactions', operationId: 'balanceTransactionControllerFindAll', scope: 'balance_transaction:read' }],
})
