import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'

/** A table of the database: one module declares it (src/modules/index.ts). */
export type TableName = keyof Database

/** The tables with an app_id column: an application's rows are in them. */
export type ApplicationTable = { [Table in TableName]: Database[Table] extends { app_id: string } ? Table : never }[TableName]

/**
 * What `devplatform apps delete` does with a table's rows (docs/cli.md#apps-delete):
 * - `removed`: the application's rows go. Tables go in the reverse of MODULES' order, and of each
 *   module's declarations: what builds on a row goes before it (a liquidation address before its customer).
 * - `kept`: they stay, for `reason`.
 * - `untouched`: the table has no app_id; `reason` says whose its rows are (those of a row of
 *   another table, kept with it, or no application's).
 */
type AppDeletionOf<Table extends TableName> = Table extends ApplicationTable
  ? { readonly appDeletion: 'removed' } | { readonly appDeletion: 'kept'; readonly reason: string }
  : { readonly appDeletion: 'kept'; readonly reason: string } | { readonly appDeletion: 'untouched'; readonly reason: string }

/** One table a module owns, by name, and what an application's deletion does with it. */
export type TableDeclaration = { [Table in TableName]: { readonly name: Table } & AppDeletionOf<Table> }[TableName]

/** A module's part of one migration. */
export type MigrationStep = (db: Kysely<unknown>) => Promise<void>

/**
 * What a module (a resource, or a part of the platform: apps and keys, the events outbox, the
 * ledger, idempotency) contributes to what is derived from MODULES (src/modules/), declared in
 * its own folder.
 */
export interface Module {
  /** the tables it owns, in the order it creates them; each one's row type is in the module's tables.ts */
  tables?: readonly TableDeclaration[]
  /**
   * Its part of each migration that changes its tables, by the migration's name (`0011_products`).
   * A migration is every module's part of that name, run in MODULES' order in one transaction
   * (src/modules/database.ts); the names order the migrations, so a new one takes the next number
   * and an applied one never changes. Migrations live in code, not files on disk, so the built
   * package and the tests run the same list. Only portable DDL: text, integer, double precision;
   * no SQLite-only or PostgreSQL-only syntax.
   */
  migrations?: Readonly<Record<string, MigrationStep>>
}
