import type { Resource } from '../resource.js'
import { balancesManifest } from './manifest.js'
import { balanceRoutes } from './routes.js'

export const balances: Resource = { manifest: balancesManifest, routes: balanceRoutes }
