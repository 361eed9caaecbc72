import type { Module } from '../modules/module.js'
import { idempotencyMigrations } from './migrations.js'
import { idempotencyTables } from './tables.js'

/** Idempotency-Keys: the stored answers of every resource's requests that sent one. */
export const idempotencyModule: Module = { tables: idempotencyTables, migrations: idempotencyMigrations }
