import { STATUS_CODES } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiResponse, startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * No input may produce a 5xx or a hang: hostile bodies, paths and query strings on every route.
 * Every refusal is in the contract's body, with its status's name and an x-request-id.
 */
let server: TestServer
let key: TestKey
let customerId: string
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
  const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: { first_name: 'A', last_name: 'B', phone_number: '1' } })
  customerId = customer.body.id
})
afterAll(async () => server.close())

const CONTRACT_FIELDS = new Set(['statusCode', 'error', 'message', 'details'])

function expectContractAnswer(res: ApiResponse, label: string): void {
  expect(res.status, label).toBeLessThan(500)
  expect(res.headers.get('x-request-id'), label).toBeTruthy()
  if (res.status < 400) return
  const body = res.body as Record<string, unknown>
  expect(Object.keys(body).filter((field) => !CONTRACT_FIELDS.has(field)), label).toEqual([])
  expect(body.statusCode, label).toBe(res.status)
  expect(body.error, label).toBe(STATUS_CODES[res.status])
  expect(typeof body.message, label).toBe('string')
}

const WRITE_ROUTES = () => [
  ['POST', '/api/v0/webhooks'],
  ['PATCH', '/api/v0/webhooks/00000000-0000-4000-8000-000000000000'],
  ['POST', '/api/v0/customers'],
  ['PATCH', `/api/v0/customers/${customerId}`],
  ['POST', `/api/v0/customers/${customerId}/liquidation_addresses`],
  ['POST', '/api/v0/taxes'],
  ['PUT', '/api/v0/taxes/00000000-0000-4000-8000-000000000000'],
] as const

const HOSTILE_BODIES = [
  '[' .repeat(100_000),
  `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`,
  JSON.stringify({ name: 'x'.repeat(900_000) }),
  '{"percentage": 1e400, "name": "x"}',
  '{"percentage": -0, "name": "x"}',
  '{"chain": "ethereum", "currency": "usdc", "address": "0x' + 'f'.repeat(100_000) + '"}',
  '{"chain": "solana", "currency": "usdc", "address": "' + '1'.repeat(200_000) + '", "external_account_id": "e"}',
  '{"chain": "tron", "currency": "usdc", "address": "T' + 'z'.repeat(50_000) + '", "external_account_id": "e"}',
  '{"url": "https://' + 'a'.repeat(5000) + '.com", "name": "x"}',
  '{"email": "' + 'a@'.repeat(1000) + '", "first_name": "a", "last_name": "b", "phone_number": "1"}',
  '{"name": "\\ud800", "percentage": 1}',
  '{"constructor": {"prototype": {"polluted": true}}}',
  '{"__proto__": null}',
  '"just a string"',
  'null',
  '0',
  '{"appIds": [' + Array.from({ length: 10_000 }, () => '"x"').join(',') + '], "name": "x", "percentage": 1}',
]

describe('hostile input never produces a 5xx', () => {
  it('bodies', async () => {
    for (const [method, path] of WRITE_ROUTES()) {
      for (const body of HOSTILE_BODIES) {
        const res = await server.request(method, path, { key, body })
        expectContractAnswer(res, `${method} ${path} ${body.slice(0, 40)}`)
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('paths and query strings', async () => {
    const paths = [
      '/api/v0/webhooks/%',
      '/api/v0/webhooks/%00',
      `/api/v0/webhooks/${'a'.repeat(5000)}`,
      '/api/v0/webhooks/..%2F..%2Fetc%2Fpasswd',
      '/api/v0/customers?take=1&take=2',
      '/api/v0/customers?skip=1e400',
      '/api/v0/webhooks?skip=100000000000000000000',
      '/api/v0/taxes?skip=100000000000000000000',
      '/api/v0/customers?name=%25%25%25&email=%00',
      `/api/v0/customers?name=${'x'.repeat(5000)}`,
      '/api/v0/taxes?active=maybe',
      '/api/v0/taxes?name=%5C',
      `/api/v0/customers/${customerId}/liquidation_addresses/%20`,
      '/api/v0/%E0%A4%A',
      '/api/v0/webhooks/%zz',
      `/api/v0/customers/${'%C3%A9'.repeat(101)}/liquidation_addresses`,
    ]
    for (const path of paths) {
      for (const method of ['GET', 'DELETE', 'PATCH']) {
        const res = await server.request(method, path, { key })
        expectContractAnswer(res, `${method} ${path.slice(0, 60)}`)
      }
    }
  })
})
