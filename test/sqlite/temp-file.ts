import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A SQLite file's path (not yet made) in a new temporary directory named from `prefix`. */
export function newSqliteFile(prefix: string): string {
  return join(mkdtempSync(join(tmpdir(), prefix)), 'db.sqlite')
}
