import { defineManifest } from '../manifest.js'

export const liquidationAddressesManifest = defineManifest({
  name: 'liquidation-addresses',
  scopes: ['liquidation_address:create', 'liquidation_address:read'],
  eventTypes: ['liquidation_address.created'],
  eventRows: [
    {
      types: ['liquidation_address.created'],
      emittedBy: '`POST /customers/{customerId}/liquidation_addresses`',
      data: 'the liquidation address',
    },
  ],
  operations: [
    {
      method: 'POST',
      path: '/customers/:customerId/liquidation_addresses',
      operationId: 'liquidationAddressControllerCreateLiquidationAddress',
      scope: 'liquidation_address:create',
    },
    {
      method: 'GET',
      path: '/customers/:customerId/liquidation_addresses',
      operationId: 'liquidationAddressControllerGetLiquidationAddresses',
      scope: 'liquidation_address:read',
    },
    {
      method: 'GET',
      path: '/customers/:customerId/liquidation_addresses/:liquidationAddressId',
      operationId: 'liquidationAddressControllerGetLiquidationAddress',
      scope: 'liquidation_address:read',
    },
  ],
})
