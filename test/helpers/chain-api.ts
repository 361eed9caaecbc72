import type { Address } from 'viem'
import { expect } from 'vitest'
import type { TestKey, TestServer } from '../helper.js'
import { waitUntil } from '../processes.js'

/** What the chain tests do through the API while anvil mines: wait on the chain, make objects, set up a live payout. */

/** What a test waits for on chain: up to 20 s, looked at every 50 ms. */
export const waitOnChain = <T>(what: string, read: () => Promise<T | undefined>): Promise<T> => waitUntil(what, read, 20_000, 50)

/** POSTs `body` with `key`: what was made (201), or the test fails with the answer. */
export async function created<T>(server: TestServer, key: TestKey, path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const answer = await server.request<T>('POST', path, { key, body, headers })
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  return answer.body
}

/** A live liquidation address on base: one of the platform's receiving addresses, paying out what arrives to `recipient` on base. */
export interface LivePayoutAddress {
  customerId: string
  id: string
  address: Address
}

export async function livePayoutAddress(server: TestServer, key: TestKey, recipient: string, fields: Record<string, unknown> = {}): Promise<LivePayoutAddress> {
  const receiving = await created<{ address: Address }>(server, key, '/api/v0/receiving-addresses', { chain: 'base', currency: 'usdc' })
  const customer = await created<{ id: string }>(server, key, '/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' })
  const address = await created<{ id: string }>(server, key, `/api/v0/customers/${customer.id}/liquidation_addresses`, {
    chain: 'base',
    currency: 'usdc',
    address: receiving.address,
    destination_payment_rail: 'base',
    destination_currency: 'usdc',
    destination_address: recipient,
    ...fields,
  })
  return { customerId: customer.id, id: address.id, address: receiving.address }
}
