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
    { method: 'POST', path: '/held/drains/:drainId/retry', operationId: 'heldControllerRetryDrain', scope: 'held:manage' },
    { method: 'POST', path: '/held/drains/:drainId/refund', operationId: 'heldControllerRefundDrain', scope: 'held:manage' },
    { method: 'POST', path: '/held/drains/:drainId/release', operationId: 'heldControllerReleaseDrain', scope: 'held:manage' },
    { method: 'POST', path: '/held/transfers/:transferId/retry', operationId: 'heldControllerRetryTransfer', scope: 'held:manage' },
    { method: 'POST', path: '/held/transfers/:transferId/refund', operationId: 'heldControllerRefundTransfer', scope: 'held:manage' },
    { method: 'POST', path: '/held/transfers/:transferId/release', operationId: 'heldControllerReleaseTransfer', scope: 'held:manage' },
  ],
})
