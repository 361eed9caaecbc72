import type { Resource } from '../resource.js'
import { walletsManifest } from './manifest.js'
import { walletRoutes } from './routes.js'

export const wallets: Resource = { manifest: walletsManifest, routes: walletRoutes }
