import { randomBytes } from 'node:crypto'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import pg from 'pg'

/**
 * Which backend this test run uses: `npm test` runs the suite once on SQLite and, when
 * PostgreSQL and Redis are there, once more on them (vitest projects; see vitest.config.ts).
 */
export const TEST_BACKEND: 'sqlite' | 'postgres' = process.env.TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite'

export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test'
export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379'

/** The PostgreSQL server tests create their databases on (its database is only used to CREATE/DROP others). */
export const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || DEFAULT_TEST_REDIS_URL

/** A fresh, empty database of the run's backend, with a way to query it and to remove it. */
export interface FreshDatabase {
  /** DATABASE_URL for a server, worker or CLI */
  url: string
  /** `?` placeholders on both backends; count(*) and other bigints come back as numbers */
  query<T = Record<string, unknown>>(sqlText: string, ...params: unknown[]): Promise<T[]>
  count(sqlText: string, ...params: unknown[]): Promise<number>
  drop(): Promise<void>
}

const created: FreshDatabase[] = []

function withUrlDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/**
 * A database every test server's database can start as a copy of: this checkout's schema at its
 * newest migration, made once per run (test/global-setup.ts), a SQLite file or a PostgreSQL database.
 */
export type MigratedTemplate = { kind: 'sqlite'; file: string } | { kind: 'postgres'; database: string }

/** The template `fresh` is once migrated: the file or the database its URL names. */
export function templateOf(fresh: FreshDatabase): MigratedTemplate {
  return fresh.url.startsWith('sqlite:') ? { kind: 'sqlite', file: fresh.url.slice('sqlite:'.length) } : { kind: 'postgres', database: new URL(fresh.url).pathname.slice(1) }
}

async function freshPostgres(template?: string): Promise<FreshDatabase> {
  const name = `devplatform_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL })
  await admin.connect()
  try {
    await admin.query(template === undefined ? `create database ${name}` : `create database ${name} template ${template}`)
  } finally {
    await admin.end()
  }
  const url = withUrlDatabase(ADMIN_DATABASE_URL, name)
  const pool = new pg.Pool({ connectionString: url, max: 2 })
  pool.on('error', () => undefined)
  let dropped = false
  const fresh: FreshDatabase = {
    url,
    async query<T>(sqlText: string, ...params: unknown[]): Promise<T[]> {
      let n = 0
      const result = await pool.query(
        sqlText.replace(/\?/g, () => `$${++n}`),
        params,
      )
      return result.rows.map((row: Record<string, unknown>) => {
        const out: Record<string, unknown> = {}
        for (const [key, value] of Object.entries(row)) out[key] = typeof value === 'string' && /^-?\d+$/.test(value) && result.fields.find((f) => f.name === key)?.dataTypeID === 20 ? Number(value) : value
        return out as T
      })
    },
    async count(sqlText: string, ...params: unknown[]): Promise<number> {
      const rows = await fresh.query<Record<string, unknown>>(sqlText, ...params)
      return Number(Object.values(rows[0] ?? {})[0] ?? -1)
    },
    async drop() {
      if (dropped) return
      dropped = true
      await pool.end().catch(() => undefined)
      const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL })
      await client.connect()
      try {
        await client.query(`drop database if exists ${name} with (force)`)
      } finally {
        await client.end()
      }
    },
  }
  return fresh
}

function freshSqlite(template?: string): FreshDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'devplatform-test-'))
  const file = join(dir, 'test.db')
  if (template !== undefined) copyFileSync(template, file)
  const fresh: FreshDatabase = {
    url: `sqlite:${file}`,
    async query<T>(sqlText: string, ...params: unknown[]): Promise<T[]> {
      const db = new SQLite(file, { readonly: true, fileMustExist: true })
      try {
        return db.prepare(sqlText).all(...params) as T[]
      } finally {
        db.close()
      }
    },
    async count(sqlText: string, ...params: unknown[]): Promise<number> {
      const rows = await fresh.query<Record<string, unknown>>(sqlText, ...params)
      return Number(Object.values(rows[0] ?? {})[0] ?? -1)
    },
    async drop() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return fresh
}

/** A fresh database of this run's backend; dropped by dropFreshDatabases() (afterAll). */
export async function freshDatabase(backend: 'sqlite' | 'postgres' = TEST_BACKEND): Promise<FreshDatabase> {
  const fresh = backend === 'postgres' ? await freshPostgres() : freshSqlite()
  created.push(fresh)
  return fresh
}

/** A fresh database that starts as a copy of `template` (so at its schema); dropped by dropFreshDatabases(). */
export async function copyOfTemplate(template: MigratedTemplate): Promise<FreshDatabase> {
  const fresh = template.kind === 'postgres' ? await freshPostgres(template.database) : freshSqlite(template.file)
  created.push(fresh)
  return fresh
}

export async function dropFreshDatabases(): Promise<void> {
  await Promise.all(created.splice(0).map((fresh) => fresh.drop().catch(() => undefined)))
}
