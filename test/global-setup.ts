import type { TestProject } from 'vitest/node'
import { parseDatabaseUrl } from '../src/config.js'
import { openDatabase } from '../src/modules/database.js'
import { dropFreshDatabases, freshDatabase, type MigratedTemplate, templateOf } from './backend.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** what a test server's database is copied from (test/helper.ts) */
    migratedTemplate?: MigratedTemplate
  }
}

/**
 * Once per project and run: a database this checkout's code migrates to its newest schema, which
 * startTestServer copies (a file copy on SQLite, CREATE DATABASE … TEMPLATE on PostgreSQL) instead
 * of running every migration again for each test server. Dropped when the run ends.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const template = await freshDatabase(project.name === 'sqlite' ? 'sqlite' : 'postgres')
  const db = await openDatabase(parseDatabaseUrl(template.url, 'DATABASE_URL', 1))
  await db.destroy()
  project.provide('migratedTemplate', templateOf(template))
  return dropFreshDatabases
}
