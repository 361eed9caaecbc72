import { ANY_VALID_KEY, defineManifest, PUBLIC } from '../manifest.js'

export const healthManifest = defineManifest({
  name: 'health',
  scopes: [],
  eventTypes: [],
  operations: [
    { method: 'GET', path: '/health/public', operationId: 'healthControllerPublicHealthCheckV0', scope: PUBLIC },
    { method: 'GET', path: '/health', operationId: 'healthControllerCheckV0', scope: ANY_VALID_KEY },
  ],
})
