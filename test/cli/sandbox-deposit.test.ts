import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Drain } from '../../src/resources/drains/schemas.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../helper.js'
import { CLI, serviceEnv } from '../processes.js'

/**
 * `devplatform sandbox deposit` goes through the same intake as simulate_deposit: the drain it
 * prints is the one the API then shows, moved on by the server's scheduler.
 */

const execute = promisify(execFile)

let server: TestServer
let key: TestKey
let base: string
let customerId: string
let addressId: string

beforeAll(async () => {
  server = await startTestServer({ config: { drains: { scheduler: true, fastDelayMs: 40, achDelayMs: 40, pollIntervalMs: 20, concurrency: 2 } } })
  key = await server.createKey({ environment: 'development' })
  const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: { first_name: 'Grace', last_name: 'Hopper', phone_number: '+14155550101' } })
  customerId = customer.body.id
  const address = await server.request<{ id: string }>('POST', `/api/v0/customers/${customerId}/liquidation_addresses`, {
    key,
    body: { chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_1' },
  })
  addressId = address.body.id
  base = `/api/v0/customers/${customerId}/liquidation_addresses/${addressId}`
})

afterAll(async () => server.close())

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execute(process.execPath, [CLI, ...args], { env: serviceEnv({ DATABASE_URL: server.database.url }), timeout: 20_000 })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

describe('devplatform sandbox deposit', () => {
  it('prints the drain as JSON; the server moves it to payment_processed and the API shows it', async () => {
    const result = await cli('sandbox', 'deposit', '--app', key.appId, '--customer', customerId, '--address', addressId, '--amount', '42.5', '--json')
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const drain = JSON.parse(result.stdout) as Drain
    expect(drain).toMatchObject({ state: 'funds_received', amount: '42.500000', currency: 'usdc', liquidation_address_id: addressId })
    const deadline = Date.now() + 15_000
    let read = drain
    while (read.state !== 'payment_processed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25))
      read = (await server.request<Drain>('GET', `${base}/drains/${drain.id}`, { key })).body
    }
    expect(read.state).toBe('payment_processed')
  })

  it('refuses what the API refuses, with its message, exit 2 and nothing written', async () => {
    const before = await server.database.count('select count(*) as n from drains')
    const tooPrecise = await cli('sandbox', 'deposit', '--app', key.appId, '--customer', customerId, '--address', addressId, '--amount', '1.0000001')
    expect(tooPrecise.code).toBe(2)
    expect(tooPrecise.stderr).toBe('devplatform: amount: "1.0000001" has more than 6 decimals, the most USDC has\n')
    const stranger = await server.createKey({ environment: 'development' })
    const othersAddress = await cli('sandbox', 'deposit', '--app', stranger.appId, '--customer', customerId, '--address', addressId, '--amount', '1')
    expect(othersAddress.code).toBe(2)
    expect(othersAddress.stderr).toBe(`devplatform: unknown customer of application ${stranger.appId}: ${customerId}\n`)
    const missing = await cli('sandbox', 'deposit', '--app', key.appId, '--customer', customerId, '--amount', '1')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe('devplatform: missing required option --address\n')
    expect(await server.database.count('select count(*) as n from drains')).toBe(before)
  })
})
