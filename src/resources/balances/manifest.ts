import { defineManifest } from '../manifest.js'

export const balancesManifest = defineManifest({
  name: 'balances',
  scopes: ['balance:read'],
  eventTypes: [],
  operations: [
    { method: 'GET', path: '/balance', operationId: 'balanceControllerGetAllBalances', scope: 'balance:read' },
    { method: 'GET', path: '/balance/usdc', operationId: 'balanceControllerGetUSDCBalance', scope: 'balance:read' },
    { method: 'GET', path: '/balance/eurc', operationId: 'balanceControllerGetEURCBalance', scope: 'balance:read' },
  ],
})
