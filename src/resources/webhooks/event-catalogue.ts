import { customersManifest } from '../customers/manifest.js'
import { healthManifest } from '../health/manifest.js'
import { liquidationAddressesManifest } from '../liquidation-addresses/manifest.js'
import { taxesManifest } from '../taxes/manifest.js'
import { webhooksManifest } from './manifest.js'

/**
 * Every event type a webhook may list in `event_types`: the manifests' event types, in RESOURCES
 * order. This is EVENT_TYPES of src/resources/index.ts, read from the manifests themselves: that
 * module imports this resource's routes (index.ts → webhooks/index.ts → routes.ts), so the routes
 * importing it would close an import circle. test/resources/webhooks/event-types.test.ts holds the
 * two lists equal, so a new resource's manifest that is missing here fails there.
 */
export const EVENT_CATALOGUE: readonly string[] = [healthManifest, webhooksManifest, customersManifest, liquidationAddressesManifest, taxesManifest].flatMap(
  (manifest) => manifest.eventTypes,
)
