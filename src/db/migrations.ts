import { type Kysely, type Migration, Migrator, sql } from 'kysely'

/** Migrations by name: the names order them. src/modules/database.ts assembles them from the modules. */
export type Migrations = Readonly<Record<string, Migration>>

/** Thrown when the database holds migrations this version does not know: a newer version wrote it. */
export class NewerSchemaError extends Error {}

/** Names of the migrations already applied (none on a new database). */
async function appliedMigrations<DB>(db: Kysely<DB>): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
  if (!tables.some((table) => table.name === 'kysely_migration')) return []
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db)
  return rows.map((row) => row.name)
}

/** The newest of the migrations: the schema version they bring a database to. */
export function latestOf(migrations: Migrations): string {
  return Object.keys(migrations).sort().at(-1) ?? ''
}

/** Brings a new database's schema to the named version and no further: tests of an upgrade start there. */
export async function migrateToVersion<DB>(db: Kysely<DB>, migrations: Migrations, name: string): Promise<void> {
  const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo(name)
  if (error !== undefined) throw error
}

/**
 * Brings the schema to the newest version; throws with the failing migration's error. A schema
 * that a newer version of devplatform wrote is refused before anything changes: running old code
 * on it could corrupt what the new code relies on.
 */
export async function migrateToLatest<DB>(db: Kysely<DB>, migrations: Migrations): Promise<void> {
  const unknown = (await appliedMigrations(db)).filter((name) => !(name in migrations)).sort()
  if (unknown.length > 0) {
    throw new NewerSchemaError(
      `the database schema was written by a newer devplatform (migration ${unknown.join(', ')} is unknown to this version, which knows up to ${latestOf(migrations)}); upgrade devplatform`,
    )
  }
  const { error, results } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateToLatest()
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName
    const reason = error instanceof Error ? error.message : String(error)
    // No migration named: it failed before any ran (e.g. the database stayed locked).
    throw new Error(failed === undefined ? `database migration could not start: ${reason}` : `database migration ${failed} failed: ${reason}`)
  }
}
