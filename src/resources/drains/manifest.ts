import { defineManifest } from '../manifest.js'

export const drainsManifest = defineManifest({
  name: 'drains',
  scopes: ['drain:read', 'drain:simulate'],
  eventTypes: ['liquidation_address.drain.created', 'liquidation_address.drain.updated'],
  eventRows: [
    {
      types: ['liquidation_address.drain.created'],
      emittedBy: 'a deposit to a liquidation address (`simulate_deposit`, `devplatform sandbox deposit`)',
      data: 'the drain ([drains.md](drains.md))',
    },
    {
      types: ['liquidation_address.drain.updated'],
      emittedBy: 'each state change of a drain, by the drain scheduler',
      data: 'the drain',
    },
  ],
  operations: [
    {
      method: 'POST',
      path: '/customers/:customerId/liquidation_addresses/:liquidationAddressId/simulate_deposit',
      operationId: 'drainControllerSimulateDeposit',
      scope: 'drain:simulate',
    },
    {
      method: 'GET',
      path: '/customers/:customerId/liquidation_addresses/:liquidationAddressId/drains',
      operationId: 'drainControllerFindAll',
      scope: 'drain:read',
    },
    {
      method: 'GET',
      path: '/customers/:customerId/liquidation_addresses/:liquidationAddressId/drains/:drainId',
      operationId: 'drainControllerFindOne',
      scope: 'drain:read',
    },
  ],
})
