import { appsModule } from '../apps/module.js'
import { chainsModule } from '../chains/module.js'
import { eventsModule } from '../events/module.js'
import { idempotencyModule } from '../idempotency/module.js'
import { ledgerModule } from '../ledger/module.js'
import { RESOURCES } from '../resources/index.js'
import type { Module, TableDeclaration } from './module.js'

/**
 * Every module: the platform's parts the resources build on, the resources (RESOURCES, in their
 * order), then idempotency, which stores the answers of every resource's requests. The one place a
 * platform module is registered: the tables, the migrations (src/modules/database.ts) and what
 * `apps delete` does with each table are derived from this list.
 */
export const MODULES: readonly Module[] = [appsModule, eventsModule, ledgerModule, chainsModule, ...RESOURCES, idempotencyModule]

/** Every table, as its module declares it, in MODULES' order. */
export const TABLES: readonly TableDeclaration[] = MODULES.flatMap((module) => module.tables ?? [])
