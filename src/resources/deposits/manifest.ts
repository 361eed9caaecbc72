import { defineManifest } from '../manifest.js'

export const depositsManifest = defineManifest({
  name: 'deposits',
  scopes: ['deposit:read'],
  eventTypes: ['deposit.pending', 'deposit.confirmed', 'deposit.held', 'deposit.removed', 'deposit.reversed'],
  eventRows: [
    {
      types: ['deposit.pending', 'deposit.confirmed', 'deposit.held', 'deposit.removed', 'deposit.reversed'],
      emittedBy: 'the chain watcher: a live token transfer to a receiving address seen, credited after its confirmations, held, taken away by a reorg ([chains.md](chains.md))',
      data: 'the deposit',
    },
  ],
  operations: [
    { method: 'GET', path: '/deposits', operationId: 'depositControllerFindAll', scope: 'deposit:read' },
    { method: 'GET', path: '/deposits/:id', operationId: 'depositControllerFindOne', scope: 'deposit:read' },
  ],
})
