import { testChainsConfig } from '../helpers/chains.js'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyLedger } from '../../src/ledger/ledger.js'
import type { Transfer } from '../../src/resources/transfers/schemas.js'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../helper.js'
import { CLI, serviceEnv } from '../processes.js'
import { available, baseWallet, settled, type Wallet } from '../resources/transfers/fixtures.js'

/**
 * `devplatform sandbox funds` goes through the same intake as simulate_funds: the transfer (or
 * payment intent) it prints is the one the API then shows, moved on by the server's scheduler;
 * what simulate_funds refuses it refuses with the same message, exit 2 and nothing written.
 */

const execute = promisify(execFile)

let server: TestServer
let key: TestKey
let wallet: Wallet

beforeAll(async () => {
  server = await startTestServer({ config: { chains: testChainsConfig(), drains: { scheduler: true, fastDelayMs: 40, achDelayMs: 40, pollIntervalMs: 20, concurrency: 2 } } })
  key = await server.createKey({ environment: 'development' })
  wallet = await baseWallet(server, key)
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

let intents = 0
async function directWallet(amount: string, as: TestKey = key, walletId = wallet.id): Promise<Transfer> {
  const created = await server.request<Transfer>('POST', '/api/v0/transfers/direct-wallet', { key: as, body: { walletId, network: 'base', stableCoinCurrency: 'usdc', amount } })
  expect(created.status, created.text).toBe(201)
  return created.body
}

async function intent(amount: string | undefined): Promise<Transfer> {
  const body = { sourceCurrency: 'usdc', sourceNetwork: 'ethereum', destinationNetwork: 'base', ...(amount === undefined ? {} : { amount }) }
  const created = await server.request<Transfer>('POST', '/api/v0/payment-intents/stablecoin', { key, body, headers: { 'idempotency-key': `cli-funds-${++intents}-${Date.now()}` } })
  expect(created.status, created.text).toBe(201)
  return created.body
}

/** What a refusal must leave untouched. */
async function written(): Promise<number[]> {
  return Promise.all(['ledger_entries', 'events', 'transfers'].map((table) => server.database.count(`select count(*) as n from ${table}`)))
}

const units = (text: string) => BigInt(text.replace('.', ''))

describe('devplatform sandbox funds', () => {
  it('the funds of a direct-wallet transfer arrive: prints it as JSON, the server takes it to payment_processed and the wallet is credited', async () => {
    const transfer = await directWallet('42.5')
    const before = await available(server, key, wallet.id)
    const result = await cli('sandbox', 'funds', '--app', key.appId, '--transfer', transfer.id, '--json')
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const printed = JSON.parse(result.stdout) as Transfer
    expect(printed).toMatchObject({ id: transfer.id, state: 'funds_received', amount: '42.500000', currency: 'usdc' })
    expect((await settled(server, key, transfer.id)).state).toBe('payment_processed')
    expect(units(await available(server, key, wallet.id)) - units(before)).toBe(42_500_000n)
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it('prints a table without --json; --amount equal to the amount awaited is taken, in any spelling', async () => {
    const transfer = await directWallet('3')
    const result = await cli('sandbox', 'funds', '--app', key.appId, '--transfer', transfer.id.toUpperCase(), '--amount', '3.00')
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const [header = '', line = ''] = result.stdout.split('\n')
    expect(header).toMatch(/^id +type +state +amount +currency/)
    expect(line).toContain(transfer.id)
    expect(line).toContain('funds_received')
    expect(line).toContain('base usdc')
    expect((await settled(server, key, transfer.id)).state).toBe('payment_processed')
  })

  it('a payment intent: a flexible one takes --amount and settles that amount; without --amount it is refused', async () => {
    const flexible = await intent(undefined)
    const before = await written()
    const missing = await cli('sandbox', 'funds', '--app', key.appId, '--transfer', flexible.id)
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe('devplatform: amount is required: this one has a flexible amount\n')
    expect(await written()).toEqual(before)
    const paid = await cli('sandbox', 'funds', '--app', key.appId, '--transfer', flexible.id, '--amount', '7.25', '--json')
    expect(paid.stderr).toBe('')
    expect(paid.code).toBe(0)
    expect(JSON.parse(paid.stdout) as Transfer).toMatchObject({ id: flexible.id, type: 'payment_intent_stablecoin', state: 'funds_received', amount: '7.250000' })
    const done = await settled(server, key, flexible.id, '/api/v0/payment-intents')
    expect(done).toMatchObject({ state: 'payment_processed', amount: '7.250000' })
    // The intent's own events, as through the API.
    const types = await server.database.query<{ type: string }>(`select type from events where type like 'payment_intent.%' and payload like '%${flexible.id}%' order by id`)
    expect(types.map((row) => row.type)).toEqual(['payment_intent.created', 'payment_intent.updated', 'payment_intent.updated', 'payment_intent.updated'])
  })

  it('a fixed amount: another --amount, too many decimals, zero or too much is refused with the API\'s message', async () => {
    const fixed = await intent('10')
    const before = await written()
    const cases: [string, string][] = [
      ['11', 'amount must be 10.000000, the amount awaited'],
      ['9.999999', 'amount must be 10.000000, the amount awaited'],
      ['10.0000001', 'amount: "10.0000001" has more than 6 decimals, the most USDC has'],
      ['0', 'amount must be greater than 0'],
      ['1000000000.000001', 'amount must be at most 1000000000'],
    ]
    for (const [amount, message] of cases) {
      const refused = await cli('sandbox', 'funds', '--app', key.appId, '--transfer', fixed.id, '--amount', amount)
      expect(refused.code, amount).toBe(2)
      expect(refused.stderr, amount).toBe(`devplatform: ${message}\n`)
    }
    expect(await written()).toEqual(before)
    const exact = await cli('sandbox', 'funds', '--app', key.appId, '--transfer', fixed.id, '--amount', '10.000000')
    expect(exact.code, exact.stderr).toBe(0)
  })

  it('only while awaiting funds: funds arriving twice, or after a cancel, are refused and change nothing', async () => {
    const transfer = await directWallet('5')
    expect((await cli('sandbox', 'funds', '--app', key.appId, '--transfer', transfer.id)).code).toBe(0)
    const canceled = await directWallet('6')
    expect((await server.request('DELETE', `/api/v0/transfers/${canceled.id}`, { key })).status).toBe(200)
    await settled(server, key, transfer.id)
    const before = await written()
    const twice = await cli('sandbox', 'funds', '--app', key.appId, '--transfer', transfer.id)
    expect(twice.code).toBe(2)
    expect(twice.stderr).toBe('devplatform: Funds can only arrive while awaiting funds; this one is payment_processed\n')
    const afterCancel = await cli('sandbox', 'funds', '--app', key.appId, '--transfer', canceled.id)
    expect(afterCancel.code).toBe(2)
    expect(afterCancel.stderr).toBe('devplatform: Funds can only arrive while awaiting funds; this one is canceled\n')
    expect(await written()).toEqual(before)
  })

  it('an unknown application, an unknown id, another application\'s transfer or a live one are refused, nothing written', async () => {
    const transfer = await directWallet('8')
    const stranger = await server.createKey({ environment: 'development' })
    const liveKey = await server.createKey({ appId: key.appId, environment: 'production' })
    const liveWallet = await baseWallet(server, liveKey)
    const live = await directWallet('8', liveKey, liveWallet.id)
    const before = await written()
    const unknownApp = await cli('sandbox', 'funds', '--app', MISSING_UUID, '--transfer', transfer.id)
    expect(unknownApp.code).toBe(2)
    expect(unknownApp.stderr).toBe(`devplatform: unknown application: ${MISSING_UUID}\n`)
    const unknownId = await cli('sandbox', 'funds', '--app', key.appId, '--transfer', MISSING_UUID)
    expect(unknownId.code).toBe(2)
    expect(unknownId.stderr).toBe(`devplatform: unknown sandbox transfer or payment intent of application ${key.appId}: ${MISSING_UUID}\n`)
    const others = await cli('sandbox', 'funds', '--app', stranger.appId, '--transfer', transfer.id)
    expect(others.code).toBe(2)
    expect(others.stderr).toBe(`devplatform: unknown sandbox transfer or payment intent of application ${stranger.appId}: ${transfer.id}\n`)
    const liveMoney = await cli('sandbox', 'funds', '--app', key.appId, '--transfer', live.id)
    expect(liveMoney.code).toBe(2)
    expect(liveMoney.stderr).toBe(`devplatform: unknown sandbox transfer or payment intent of application ${key.appId}: ${live.id}\n`)
    expect(await written()).toEqual(before)
    expect((await server.request<Transfer>('GET', `/api/v0/transfers/${transfer.id}`, { key })).body.state).toBe('awaiting_funds')
  })

  it('usage: --app and --transfer are required, an empty --amount and a foreign option are refused; help names the command', async () => {
    const noTransfer = await cli('sandbox', 'funds', '--app', key.appId)
    expect(noTransfer.code).toBe(2)
    expect(noTransfer.stderr).toBe('devplatform: missing required option --transfer\n')
    const noApp = await cli('sandbox', 'funds', '--transfer', MISSING_UUID)
    expect(noApp.code).toBe(2)
    expect(noApp.stderr).toBe('devplatform: missing required option --app\n')
    const emptyAmount = await cli('sandbox', 'funds', '--app', key.appId, '--transfer', MISSING_UUID, '--amount', ' ')
    expect(emptyAmount.code).toBe(2)
    expect(emptyAmount.stderr).toBe('devplatform: --amount needs a decimal amount\n')
    const foreign = await cli('sandbox', 'funds', '--app', key.appId, '--transfer', MISSING_UUID, '--customer', 'x')
    expect(foreign.code).toBe(2)
    expect(foreign.stderr).toBe('devplatform: option --customer does not apply to "sandbox funds"\n')
    const help = await cli('help', 'sandbox', 'funds')
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^ {2}sandbox funds --app APP_ID --transfer TRANSFER_ID \[--amount DECIMAL\]\n/)
    const both = await cli('help', 'sandbox')
    expect(both.stdout).toContain('sandbox deposit --app')
    expect(both.stdout).toContain('sandbox funds --app')
  })
})
