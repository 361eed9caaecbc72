import { defineManifest } from '../manifest.js'

export const transfersManifest = defineManifest({
  name: 'transfers',
  scopes: ['transfer:create', 'transfer:list', 'transfer:read', 'transfer:cancel', 'transfer:simulate'],
  eventTypes: ['transfer.created', 'transfer.updated'],
  eventRows: [
    {
      types: ['transfer.created'],
      emittedBy: "a transfer's creation (`POST /transfers/…`)",
      data: 'the transfer ([transfers.md](transfers.md))',
    },
    {
      types: ['transfer.updated'],
      emittedBy: "each state change of a transfer: funds arriving (`simulate_funds`), the money scheduler's steps, `DELETE /transfers/{id}`",
      data: 'the transfer',
    },
  ],
  operations: [
    { method: 'POST', path: '/transfers/direct-bank', operationId: 'transferControllerCreateDirectBankTransfer', scope: 'transfer:create' },
    { method: 'POST', path: '/transfers/direct-wallet', operationId: 'transferControllerCreateDirectWalletTransfer', scope: 'transfer:create' },
    { method: 'POST', path: '/transfers/external-bank-transfer', operationId: 'transferControllerCreateExternalBankTransfer', scope: 'transfer:create' },
    { method: 'POST', path: '/transfers/external-stablecoin-transfer', operationId: 'transferControllerCreateExternalStablecoinTransfer', scope: 'transfer:create' },
    { method: 'POST', path: '/transfers/stablecoin-conversion', operationId: 'transferControllerCreateStablecoinConversion', scope: 'transfer:create' },
    { method: 'GET', path: '/transfers', operationId: 'transferControllerFindAll', scope: 'transfer:list' },
    { method: 'GET', path: '/transfers/:id', operationId: 'transferControllerFindOne', scope: 'transfer:read' },
    { method: 'DELETE', path: '/transfers/:id', operationId: 'transferControllerCancel', scope: 'transfer:cancel' },
    { method: 'POST', path: '/transfers/:id/simulate_funds', operationId: 'transferControllerSimulateFunds', scope: 'transfer:simulate' },
  ],
})
