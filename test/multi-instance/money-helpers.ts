import { expect } from 'vitest'
import type { FreshDatabase } from '../backend.js'
import { ownerOfClientPort } from '../fixtures/socket-owner.mjs'
import { CLI, exitWithin, launch, type Running } from '../processes.js'
import type { Instance } from './delivery-helpers.js'

// What the multi-instance money tests (drains, transfers) share: killing a process, reading the
// database beside it, and the operator's ledger check at the end.

/** A statement on the test's own connection to the database the processes share. */
export type Query = <T>(sqlText: string, ...params: unknown[]) => Promise<T[]>

export function postgresQuery(fresh: FreshDatabase): Query {
  return (sqlText, ...params) => fresh.query(sqlText, ...params)
}

export async function kill9(instance: Running): Promise<void> {
  instance.child.kill('SIGKILL')
  const exit = await exitWithin(instance, 10_000)
  expect(exit.signal).toBe('SIGKILL')
}

/** `devplatform ledger verify --environment sandbox`, as an operator runs it. */
export async function ledgerVerify(databaseUrl: string): Promise<void> {
  const running = launch(CLI, ['ledger', 'verify', '--environment', 'sandbox'], { DATABASE_URL: databaseUrl })
  const exit = await exitWithin(running, 20_000)
  expect({ code: exit.code, stdout: running.stdout(), stderr: running.stderr() }).toEqual({ code: 0, stdout: 'sandbox: ok\n', stderr: '' })
}

/** The pids among `candidates` of the database connections `where` picks in pg_stat_activity, one per connection. */
export async function ownersOfConnections(fresh: FreshDatabase, candidates: readonly Instance[], where: string): Promise<number[]> {
  const port = Number(new URL(fresh.url).port || 5432)
  const rows = await fresh.query<{ client_port: number | null }>(`select client_port from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and ${where}`)
  return rows.flatMap((row) => {
    const owner = row.client_port === null ? undefined : ownerOfClientPort(row.client_port, port, candidates.map((candidate) => candidate.pid))
    return owner === undefined ? [] : [owner]
  })
}

/** How many of each path of states ended, for a test's log line. */
export function describeEnds(ends: Map<string, number>): string {
  return [...ends].map(([path, count]) => `${count}× ${path}`).join('; ')
}
