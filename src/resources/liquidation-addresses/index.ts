import type { Resource } from '../resource.js'
import { liquidationAddressesManifest } from './manifest.js'
import { liquidationAddressRoutes } from './routes.js'

export const liquidationAddresses: Resource = { manifest: liquidationAddressesManifest, routes: liquidationAddressRoutes }
