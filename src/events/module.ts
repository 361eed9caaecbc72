import type { Module } from '../modules/module.js'
import { eventsMigrations } from './migrations.js'
import { eventsTables } from './tables.js'

/** The outbox: the events every change emits and their deliveries to webhooks. */
export const eventsModule: Module = { tables: eventsTables, migrations: eventsMigrations }
