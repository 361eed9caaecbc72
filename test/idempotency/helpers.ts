import { expect } from 'vitest'
import type { ApiResponse, TestKey, TestServer } from '../helper.js'

export const INVALID_KEY = 'Idempotency-Key must be 1 to 255 printable ASCII characters'
export const KEY_REUSED = 'Idempotency-Key was already used with a different request'
export const KEY_IN_PROGRESS = 'A request with this Idempotency-Key is still in progress'

export type AppTable = 'customers' | 'events' | 'deliveries' | 'taxes' | 'webhooks' | 'liquidation_addresses' | 'idempotency_keys'

/** Rows of one application in a table, read through the server's own database handle. */
export async function countRows(server: TestServer, table: AppTable, appId: string): Promise<number> {
  const row = await server.app.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('app_id', '=', appId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** A POST carrying an Idempotency-Key. */
export function postWithKey<T = unknown>(server: TestServer, caller: TestKey, path: string, idempotencyKey: string, body: unknown): Promise<ApiResponse<T>> {
  return server.request<T>('POST', path, { key: caller, body, headers: { 'Idempotency-Key': idempotencyKey } })
}

let sequence = 0
/** A key no other test uses. */
export function freshKey(label = 'key'): string {
  sequence += 1
  return `${label}-${sequence}-${Math.random().toString(36).slice(2, 10)}`
}

/** The second response replays the first: same status, bytes and content type, marked as a replay. */
export function expectReplay(first: ApiResponse, second: ApiResponse): void {
  expect(first.headers.get('idempotent-replayed')).toBeNull()
  expect(second.status).toBe(first.status)
  expect(second.text).toBe(first.text)
  expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'))
  expect(second.headers.get('idempotent-replayed')).toBe('true')
}

export function errorBody(statusCode: number, error: string, message: string) {
  return { statusCode, error, message }
}
