import { defineManifest } from '../manifest.js'

/**
 * An operator's tools for money held in clearing (docs/operations.md#held-money): what is held and
 * why, and retry, refund and release. Both scopes are opt-in: no key has them unless they are named.
 */
export const heldManifest = defineManifest({
  name: 'held',
  scopes: ['held:read', 'held:manage'],
  optInScopes: ['held:read', 'held:manage'],
  eventTypes: [],
  operations: [
    { method: 'GET', path: '/held', operationId: 'heldControllerFindAll', scope: 'held:read' },
    { method: 'GET', path: '/held/actions', operationId: 'heldControllerFindActions', scope: 'held:read' },
    { method: 'POST', path: '/held/drains/:heldDrainId/retry', operationId: 'heldControllerRetryDrain', scope: 'held:manage' },
    { method: 'POST', path: '/held/drains/:heldDrainId/refund', operationId: 'heldControllerRefundDrain', scope: 'held:manage' },
    { method: 'POST', path: '/held/drains/:heldDrainId/release', operationId: 'heldControllerReleaseDrain', scope: 'held:manage' },
    { method: 'POST', path: '/held/transfers/:heldTransferId/retry', operationId: 'heldControllerRetryTransfer', scope: 'held:manage' },
    { method: 'POST', path: '/held/transfers/:heldTransferId/refund', operationId: 'heldControllerRefundTransfer', scope: 'held:manage' },
    { method: 'POST', path: '/held/transfers/:heldTransferId/release', operationId: 'heldControllerReleaseTransfer', scope: 'held:manage' },
  ],
})
