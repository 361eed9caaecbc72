/**
 * The tables Kysely queries, by name: empty here, as each module merges its own tables into it
 * from its tables.ts (`declare module '…/db/schema.js'`), where it declares their row types and
 * what `apps delete` does with them; src/modules/index.ts lists the modules.
 *
 * Portable column choices: text ids (UUIDs), ISO 8601 text timestamps, integer 0/1 booleans and
 * JSON kept as text, so the same queries run on SQLite and PostgreSQL.
 */
export interface Database {}
