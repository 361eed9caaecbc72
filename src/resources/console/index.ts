import { defineResource } from '../resource.js'
import { keysRoutes } from './keys-page.js'
import { consoleManifest } from './manifest.js'
import { consoleMigrations } from './migrations.js'
import { overviewPage } from './overview.js'
import { consolePagesOf } from './pages.js'
import { type ConsoleOptions, consoleRoutes } from './routes.js'
import { consoleTables } from './tables.js'
import { customersRoutes } from './customers.js'
import { eventsRoutes } from './events-page.js'
import { invoicesRoutes } from './invoices.js'
import { paymentsRoutes } from './payments.js'
import { heldRoutes } from './held-page.js'
import { webhooksRoutes } from './webhooks-page.js'

/**
 * The console (docs/console.md): an application's money, payments and webhooks as its owner sees
 * them, in pages under /console opened through a single-use link (POST /console/links, console:link,
 * or `devplatform console link`).
 */
export const consoleResource = defineResource({
  manifest: consoleManifest,
  configure: ({ config, exchangeRates, payouts, publicUrl, scopes }): ConsoleOptions => ({ publicUrl, scopes, money: { rates: exchangeRates, timings: config.drains, now: Date.now, payouts } }),
  tables: consoleTables,
  migrations: consoleMigrations,
  routes: consoleRoutes,
  pages: consolePagesOf([{ method: 'GET', path: '', handle: overviewPage }, ...paymentsRoutes, ...invoicesRoutes, ...customersRoutes, ...eventsRoutes, ...webhooksRoutes, ...keysRoutes, ...heldRoutes]),
})
