/**
 * The database a benchmark runs on: a fresh SQLite file by default, or, when DATABASE_URL names
 * PostgreSQL, a fresh database created on that server (and dropped at the end), so a bench never
 * touches data it did not make. REDIS_URL is passed through to the servers it starts.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { type DatabaseLocation, describeDatabase, parseDatabaseUrl } from '../src/config.js'

export interface BenchDatabase {
  location: DatabaseLocation
  /** DATABASE_URL for the processes the bench starts */
  url: string
  /** for the printed header: "sqlite" or "postgresql + redis" */
  label: string
  drop(): Promise<void>
}

export async function benchDatabase(): Promise<BenchDatabase> {
  const given = process.env.DATABASE_URL
  const redis = process.env.REDIS_URL ? ' + redis' : ' (no REDIS_URL: in-process rate limiter)'
  if (given !== undefined && /^postgres(ql)?:\/\//.test(given)) {
    const name = `devplatform_bench_${randomBytes(4).toString('hex')}`
    const admin = new pg.Client({ connectionString: given })
    await admin.connect()
    await admin.query(`create database ${name}`)
    await admin.end()
    const url = new URL(given)
    url.pathname = `/${name}`
    const location = parseDatabaseUrl(url.toString())
    return {
      location,
      url: url.toString(),
      label: `postgresql ${describeDatabase(location)}${redis}`,
      async drop() {
        const client = new pg.Client({ connectionString: given })
        await client.connect()
        await client.query(`drop database if exists ${name} with (force)`)
        await client.end()
      },
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'devplatform-bench-'))
  const filename = join(dir, 'bench.db')
  return {
    location: { kind: 'sqlite', filename },
    url: `sqlite:${filename}`,
    label: 'sqlite (a temporary file)',
    async drop() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
