import type { Module } from '../modules/module.js'
import { appsMigrations } from './migrations.js'
import { appsTables } from './tables.js'

/** Applications and their keys. */
export const appsModule: Module = { tables: appsTables, migrations: appsMigrations }
