import type { Module } from '../modules/module.js'
import { idempotencyTables } from './tables.js'

/** Idempotency-Keys: the stored answers of every resource's requests that sent one. */
export const idempotencyModule: Module = { tables: idempotencyTables }
