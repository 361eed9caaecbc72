import { defineManifest } from '../manifest.js'

export const walletsManifest = defineManifest({
  name: 'wallets',
  scopes: ['wallet:read'],
  eventTypes: [],
  operations: [{ method: 'GET', path: '/wallets', operationId: 'walletControllerGetWallets', scope: 'wallet:read' }],
})
