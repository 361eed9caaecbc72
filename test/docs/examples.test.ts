import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  bodyExample,
  type Document,
  FILE_OF_TYPE,
  guideSections,
  type Operation,
  type OperationExample,
  operationExamples,
  type Schema,
  sectionIn,
} from '../../scripts/operation-examples.js'
import { ExchangeRates } from '../../src/ledger/rates.js'
import { advanceDrain } from '../../src/resources/drains/lifecycle.js'
import { advanceTransfer } from '../../src/resources/transfers/lifecycle.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../helper.js'
import { ROOT } from '../processes.js'
import { insertDeposit } from '../resources/deposits/fixtures.js'
import { deposit, storedWallet } from '../resources/wallets/money.js'

/**
 * Every operation of the served OpenAPI document has its example in its guide (docs/*.md), as
 * scripts/operation-examples.ts renders it from the document's own examples; each example runs
 * as written, in bash with curl, against a real server (its `…_ID` variables filled from a
 * fixture of objects made for it), and answers the documented status with the served schema's
 * fields.
 */

let server: TestServer
/** A development key, as the README's reader has: the sandbox's simulations take one. */
let key: TestKey
let document: Document
let examples: OperationExample[]
/** The reader's folder, with the files the upload examples send. */
let folder: string

beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey({ environment: 'development' })
  document = (await server.request<Document>('GET', '/api/v0/openapi.json')).body
  examples = operationExamples(document)
  folder = mkdtempSync(join(tmpdir(), 'devplatform-examples-'))
  for (const file of Object.values(FILE_OF_TYPE)) writeFileSync(join(folder, file), PNG)
})
afterAll(async () => {
  rmSync(folder, { recursive: true, force: true })
  await server.close()
})

function operationOf(example: OperationExample): Operation {
  const operation = document.paths[example.path]?.[example.method.toLowerCase()]
  if (operation === undefined) throw new Error(`no ${example.method} ${example.path}`)
  return operation
}

function resolve(schema: Schema): Schema {
  if (schema.$ref === undefined) return schema
  const target = document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]
  if (target === undefined) throw new Error(`unresolved ${schema.$ref}`)
  return target
}

/** The required properties `value` lacks, by JSON pointer, nested objects and array items included. */
function missingRequired(schema: Schema, value: unknown, at = ''): string[] {
  const resolved = resolve(schema)
  if (Array.isArray(value)) return resolved.items === undefined ? [] : value.flatMap((item, i) => missingRequired(resolved.items ?? {}, item, `${at}/${i}`))
  if (value === null || typeof value !== 'object') return []
  const fields = value as Record<string, unknown>
  return [
    ...(resolved.required ?? []).filter((name) => !(name in fields)).map((name) => `${at}/${name}`),
    ...Object.entries(resolved.properties ?? {}).flatMap(([name, property]) => (name in fields ? missingRequired(property, fields[name], `${at}/${name}`) : [])),
  ]
}

/** The fields of `value` its schema does not name, and the required ones it lacks (top level; each item of a list's data). */
function shapeProblems(schema: Schema, value: unknown): string[] {
  const resolved = resolve(schema)
  if (Array.isArray(value)) return resolved.items === undefined ? [] : value.slice(0, 3).flatMap((item) => shapeProblems(resolved.items ?? {}, item))
  if (value === null || typeof value !== 'object' || resolved.properties === undefined) return []
  const fields = Object.keys(value)
  const known = Object.keys(resolved.properties)
  const problems = [
    ...fields.filter((name) => !known.includes(name)).map((name) => `${name}: answered, not in the schema`),
    ...(resolved.required ?? []).filter((name) => !fields.includes(name)).map((name) => `${name}: required, not answered`),
  ]
  const data = (value as Record<string, unknown>).data
  if (Array.isArray(data) && resolved.properties.data !== undefined) problems.push(...shapeProblems(resolved.properties.data, data))
  return problems
}

describe('every operation has its example in its guide', () => {
  it('the served document has operations, and each guide holds the section the document renders', () => {
    expect(examples.length).toBeGreaterThanOrEqual(75)
    const stale: string[] = []
    for (const [guide, section] of guideSections(document)) {
      const text = readFileSync(join(ROOT, 'docs', guide), 'utf8')
      if (sectionIn(text) !== section) stale.push(guide)
    }
    expect(stale, 'guides whose examples are not what the served document renders: run npm run docs:examples').toEqual([])
  })

  it('each example body has every required property, nested ones included', () => {
    const incomplete = examples.flatMap((example) => {
      const schema = operationOf(example).requestBody?.content['application/json']?.schema
      return schema === undefined ? [] : missingRequired(schema, bodyExample(document, operationOf(example))).map((at) => `${example.operationId}: ${at}`)
    })
    expect(incomplete).toEqual([])
  })
})

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')

/** The operation whose answer's `id` a variable is (the fixture makes one with its example, or takes the example's own). */
const MADE_BY: Readonly<Record<string, { operationId: string }>> = {
  CUSTOMER_ID: { operationId: 'customerControllerCreate' },
  LIQUIDATION_ADDRESS_ID: { operationId: 'liquidationAddressControllerCreateLiquidationAddress' },
  DRAIN_ID: { operationId: 'drainControllerSimulateDeposit' },
  WEBHOOK_ID: { operationId: 'webhookControllerCreate' },
  TAX_ID: { operationId: 'taxControllerCreate' },
  TRANSFER_ID: { operationId: 'transferControllerCreateDirectBankTransfer' },
  PAYMENT_INTENT_ID: { operationId: 'paymentIntentControllerCreateBankPaymentIntent' },
  TEST_PAYMENT_ID: { operationId: 'testPaymentControllerCreatePaymentV0' },
  PRODUCT_ID: { operationId: 'productControllerCreate' },
  INVOICE_ID: { operationId: 'invoiceControllerCreate' },
  PAYMENT_LINK_ID: { operationId: 'paymentLinksControllerCreate' },
  RECEIVING_ADDRESS_ID: { operationId: 'receivingAddressControllerCreate' },
}

/** The fixture: each variable's value, made once (again for an operation that ends its object). */
const fixture = new Map<string, string>()

async function valueOf(variable: string): Promise<string> {
  const known = fixture.get(variable)
  if (known !== undefined) return known
  let value: string
  if (variable === 'WALLET_ID') {
    const wallets = (await server.request<{ data: { id: string; chain: string }[] }>('GET', '/api/v0/wallets', { key })).body.data
    const wallet = wallets.find((candidate) => candidate.chain === 'base')
    if (wallet === undefined) throw new Error('no sandbox wallet on base')
    // Enough for every example that spends from it.
    const row = await storedWallet(server.app.db, 'sandbox', key.appId, wallet.id)
    await deposit(server.app.db, row, 'usdc', '100000.000000')
    await deposit(server.app.db, row, 'eurc', '100000.000000')
    value = wallet.id
  } else if (variable === 'DEPOSIT_ID') {
    // A deposit is seen on chain (test/chains/ has the watcher record them from a real one): one as it records it.
    value = (await insertDeposit(server, key.appId, { environment: 'sandbox', owner_id: await valueOf('WALLET_ID') })).id
  } else if (variable === 'HELD_DRAIN_ID' || variable === 'HELD_TRANSFER_ID') {
    // Held money: the sandbox's 13.03 ends in error, moved on in-process with a clock an hour ahead.
    const later = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 1, achDelayMs: 1 }, now: () => Date.now() + 3_600_000 }
    if (variable === 'HELD_DRAIN_ID') {
      const made = await server.request<{ id: string }>('POST', `/api/v0/customers/${await valueOf('CUSTOMER_ID')}/liquidation_addresses/${await valueOf('LIQUIDATION_ADDRESS_ID')}/simulate_deposit`, { key, body: { amount: '13.03' } })
      await server.app.transact((tx) => advanceDrain(tx, later, made.body.id))
      value = made.body.id
    } else {
      const made = await server.request<{ id: string }>('POST', '/api/v0/transfers/direct-wallet', { key, body: { walletId: await valueOf('WALLET_ID'), network: 'base', stableCoinCurrency: 'usdc', amount: 13.03 } })
      await server.request('POST', `/api/v0/transfers/${made.body.id}/simulate_funds`, { key, body: {} })
      await server.app.transact((tx) => advanceTransfer(tx, later, made.body.id))
      value = made.body.id
    }
  } else if (variable === 'EVENT_ID') {
    // Every change emits one: the newest the key sees.
    value = (await server.request<{ data: { id: string }[] }>('GET', '/api/v0/events?take=1', { key })).body.data[0]?.id ?? 'no event'
  } else if (variable === 'IMAGE_ID') {
    // An uploaded image (the example adds images by URL): a PNG sent as multipart, as a browser form sends it.
    const form = new FormData()
    form.append('images', new Blob([PNG], { type: 'image/png' }), 'dot.png')
    const res = await fetch(`${server.baseUrl}/api/v0/products/${await valueOf('PRODUCT_ID')}/images`, { method: 'POST', headers: key.headers, body: form })
    const images = ((await res.json()) as { images?: string[] }).images ?? []
    value = /\/images\/([0-9a-f-]{36})$/.exec(images.find((url) => url.startsWith(server.baseUrl)) ?? '')?.[1] ?? `no uploaded image: ${res.status} ${JSON.stringify(images)}`
  } else if (variable === 'DELIVERY_ID') {
    // A delivery that has ended (a retry takes one): the test event's, failed as an unreachable receiver's would be.
    const sent = await server.request<{ id: string }>('POST', `/api/v0/webhooks/${await valueOf('WEBHOOK_ID')}/test`, { key })
    await server.app.db.updateTable('deliveries').set({ status: 'failed' }).where('id', '=', sent.body.id).execute()
    value = sent.body.id
  } else {
    const maker = MADE_BY[variable]
    if (maker === undefined) throw new Error(`no fixture for $${variable}: add it to MADE_BY`)
    const example = examples.find((candidate) => candidate.operationId === maker.operationId)
    if (example === undefined) throw new Error(`no example ${maker.operationId}`)
    const path = await filled(example)
    let body = await filledBody(example)
    // An email and an address are taken once: the fixture's own objects have others.
    if (body !== null && typeof body === 'object') {
      body = JSON.parse(JSON.stringify(body).replace(/"([^"@]+)@/g, `"fixture-${fixture.size}-$1@`))
      if (variable === 'LIQUIDATION_ADDRESS_ID') body = { ...(body as object), address: randomEvmAddress() }
      // A payment link's slug too.
      if (variable === 'PAYMENT_LINK_ID') body = { ...(body as object), url: `fixture-${fixture.size}` }
    }
    const res = await server.request<Record<string, unknown>>(example.method, path, { key, headers: { 'idempotency-key': `fixture-${variable}-${Date.now()}-${Math.random()}` }, ...(body === undefined ? {} : { body }) })
    if (res.status >= 300) throw new Error(`making $${variable} with ${maker.operationId}: ${res.status} ${JSON.stringify(res.body)}`)
    value = String(res.body.id)
  }
  fixture.set(variable, value)
  return value
}

/** The example's path with each `{name}` as its variable's value. */
async function filled(example: OperationExample): Promise<string> {
  let index = 0
  let result = example.path
  for (const match of example.path.matchAll(/\{(\w+)\}/g)) result = result.replace(match[0], await valueOf(example.pathVariables[index++] ?? ''))
  return result
}

async function filledBody(example: OperationExample): Promise<unknown> {
  if (example.body === undefined) return undefined
  let text = JSON.stringify(example.body)
  for (const variable of example.variables) if (text.includes(`$${variable}`)) text = text.replaceAll(`$${variable}`, await valueOf(variable))
  return JSON.parse(text)
}

/** Runs the sh block in bash as the reader would, with curl's status added after its output. */
function run(command: string, env: Record<string, string>): Promise<{ status: number; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const prelude = `set -euo pipefail\ncurl() { command curl -w '\\n::status %{http_code}\\n' "$@"; }\n`
    // No stdin: a body is in the command (a here-document at most); a piped stdin costs each run a second or two.
    const bash = spawn('bash', ['-c', `${prelude}${command}`], { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } })
    let out = ''
    let err = ''
    bash.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
    bash.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
    bash.on('error', reject)
    bash.on('close', (code) => {
      const match = /\n::status (\d{3})\n$/.exec(out)
      if (code !== 0 || match === null) reject(new Error(`bash exited ${String(code)}: ${out}\n${err}`))
      else resolvePromise({ status: Number(match[1]), output: out.slice(0, match.index) })
    })
  })
}

/** Operations that end or move on their object. */
function endsItsObject(example: OperationExample): boolean {
  return example.method === 'DELETE' || /\/(simulate_funds|refund|retry|release)$/.test(example.path)
}

describe('every example runs as written against a server and answers as documented', () => {
  it('each answers its documented status, with the fields of the served schema', async () => {
    const failures: string[] = []
    let ran = 0
    for (const example of examples) {
      // An operation that ends or moves on its object gets one of its own, and leaves none behind.
      const own = endsItsObject(example) ? example.pathVariables.at(-1) : undefined
      if (own !== undefined) fixture.delete(own)
      const env: Record<string, string> = { BASE: server.baseUrl, KEY: key.clientKey, SECRET: key.clientSecret }
      let answered: { status: number; output: string }
      try {
        for (const variable of example.variables) env[variable] = await valueOf(variable)
        answered = await run(example.command, env)
      } catch (error) {
        failures.push(`${example.operationId}: ${error instanceof Error ? error.message : String(error)}`)
        continue
      }
      const { status, output } = answered
      ran++
      if (own !== undefined) fixture.delete(own)
      // A create example's object is the one the next examples use (an update then changes the created object).
      const made = Object.entries(MADE_BY).find(([, maker]) => maker.operationId === example.operationId)?.[0]
      if (made !== undefined && status < 300) fixture.set(made, String((JSON.parse(output) as { id: string }).id))
      if (status !== example.status) {
        failures.push(`${example.operationId}: answered ${status}, documented ${example.status}: ${output.slice(0, 300)}`)
        continue
      }
      const media = operationOf(example).responses[String(status)]?.content?.['application/json']
      if (media?.schema !== undefined && example.answer !== undefined) {
        const answer: unknown = JSON.parse(output)
        const problems = [...shapeProblems(media.schema, answer).map((problem) => `answer ${problem}`), ...shapeProblems(media.schema, example.answer).map((problem) => `documented ${problem}`)]
        if (problems.length > 0) failures.push(`${example.operationId}: ${problems.join('; ')}`)
      }
    }
    expect(failures).toEqual([])
    expect(ran).toBe(examples.length)
  }, 300_000)
})
