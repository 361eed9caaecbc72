import type { Module } from '../modules/module.js'
import { chainsMigrations } from './migrations.js'
import { chainsTables } from './tables.js'

/** Live money on EVM chains: receiving addresses, the watchers' cursors and the deposits they saw (docs/chains.md). */
export const chainsModule: Module = { tables: chainsTables, migrations: chainsMigrations }
