import { defineManifest } from '../manifest.js'

export const receivingAddressesManifest = defineManifest({
  name: 'receiving-addresses',
  scopes: ['receiving_address:write', 'receiving_address:read'],
  eventTypes: [],
  operations: [
    { method: 'POST', path: '/receiving-addresses', operationId: 'receivingAddressControllerCreate', scope: 'receiving_address:write' },
    { method: 'GET', path: '/receiving-addresses', operationId: 'receivingAddressControllerFindAll', scope: 'receiving_address:read' },
    { method: 'GET', path: '/receiving-addresses/:id', operationId: 'receivingAddressControllerFindOne', scope: 'receiving_address:read' },
  ],
})
