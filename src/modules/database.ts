import type { Kysely, Migration } from 'kysely'
import type { DatabaseLocation } from '../config.js'
import { connectDatabase, type Db, type OpenDatabaseOptions } from '../db/database.js'
import { latestOf, migrateToLatest, migrateToVersion, type Migrations } from '../db/migrations.js'
import { MODULES } from './index.js'
import type { MigrationStep, Module } from './module.js'

/** Each module's parts of the migrations, assembled: a migration runs every module's part of its name, in the modules' order. */
function migrationsOf(modules: readonly Module[]): Migrations {
  const parts = new Map<string, MigrationStep[]>()
  for (const module of modules) {
    for (const [name, step] of Object.entries(module.migrations ?? {})) parts.set(name, [...(parts.get(name) ?? []), step])
  }
  return Object.fromEntries(
    [...parts].map(([name, steps]): [string, Migration] => [
      name,
      {
        async up(db) {
          for (const step of steps) await step(db)
        },
      },
    ]),
  )
}

/** Every migration, from MODULES. */
export const MIGRATIONS: Migrations = migrationsOf(MODULES)

/** The newest schema version this build knows. */
export const LATEST_MIGRATION = latestOf(MIGRATIONS)

/** Brings a new database's schema to the named version and no further: tests of an upgrade start there. */
export async function migrateTo<DB>(db: Kysely<DB>, name: string): Promise<void> {
  await migrateToVersion(db, MIGRATIONS, name)
}

/** Opens the database named by the configuration and migrates it to the newest schema. */
export async function openDatabase(location: DatabaseLocation, options: OpenDatabaseOptions = {}): Promise<Db> {
  const db = await connectDatabase(location, options)
  try {
    await migrateToLatest(db, MIGRATIONS)
  } catch (error) {
    await db.destroy()
    throw error
  }
  return db
}
