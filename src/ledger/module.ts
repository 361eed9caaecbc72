import type { Module } from '../modules/module.js'
import { ledgerMigrations } from './migrations.js'
import { ledgerTables } from './tables.js'

/** The double-entry ledger and the exchange rates its conversions use. */
export const ledgerModule: Module = { tables: ledgerTables, migrations: ledgerMigrations }
