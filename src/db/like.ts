import { type Expression, type RawBuilder, sql } from 'kysely'

/** Case-insensitive "contains" that treats % and _ in the needle literally (SQLite and PostgreSQL). */
export function containsIgnoringCase(column: Expression<string> | RawBuilder<string>, needle: string): RawBuilder<boolean> {
  const escaped = needle.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)
  return sql<boolean>`lower(${column}) like ${`%${escaped}%`} escape '\\'`
}
