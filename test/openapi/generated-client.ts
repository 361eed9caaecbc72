import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient as generateClient } from '@hey-api/openapi-ts'
import { afterAll, beforeAll, expect } from 'vitest'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { testChainsConfig } from '../helpers/chains.js'
import { type Receiver, startReceiver } from '../receiver.js'

/**
 * What every resource's generated-client cases share (test/openapi/generated-client.test.ts runs
 * them): one server, a TypeScript client generated from the document it serves, the key it is
 * configured with, and `call`, which drives one of its functions and records that it was driven.
 * The bindings below are set by the runner's beforeAll, for the tests to read.
 */

/** What the tests pass to a generated SDK function (hey-api's per-call options). */
export interface CallOptions {
  client?: GeneratedClient
  path?: Record<string, string>
  query?: Record<string, string | number | boolean>
  body?: unknown
  /** null removes a header the SDK would send (a multipart body's Content-Type is fetch's, with its boundary) */
  headers?: Record<string, string | null>
  /** how the body is encoded, when not as the SDK's first media type (the products' forms) */
  bodySerializer?: (body: unknown) => unknown
}

/** What a generated SDK function resolves to (hey-api's default "fields" response style). */
export interface CallResult {
  /** the parsed success body (after the response transformer: date-times are Dates) */
  data?: unknown
  /** the parsed error body */
  error?: unknown
  response: Response
}

type SdkFunction = (options: CallOptions) => Promise<CallResult>

export interface GeneratedClient {
  setConfig(config: { baseUrl: string; headers?: Record<string, string> }): unknown
}

interface GeneratedClientModule {
  createClient(config: unknown): GeneratedClient
  createConfig(config: { baseUrl: string; headers?: Record<string, string> }): unknown
}

/** The generated client's body serializers, for an operation whose body is not sent as JSON. */
export interface BodySerializers {
  urlSearchParamsBodySerializer: { bodySerializer: (body: unknown) => unknown }
  formDataBodySerializer: { bodySerializer: (body: unknown) => unknown }
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { operationId?: string }>>
}

export interface Fixture {
  id: string
}

const TSCONFIG = fileURLToPath(new URL('../../tsconfig.json', import.meta.url))
/** where this server stores product images */
const PRODUCT_IMAGES = join(tmpdir(), `devplatform-client-images-${process.pid}`)
export const A_VALID_DATE = expect.toSatisfy((value: unknown) => value instanceof Date && !Number.isNaN(value.getTime()), 'a valid Date')
export const A_UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)

export let server: TestServer
export let key: TestKey
/** where every webhook here points, so the dispatcher's deliveries end (and can be retried) */
export let receiver: Receiver
let directory: string
let sdk: Record<string, unknown>
/** a second client of the same generated code, configured with no key */
export let anonymous: GeneratedClient
let documentOperationIds: string[]
const driven = new Set<string>()

/** Calls the generated SDK function named operationId (through the client configured with the key, unless options.client). */
export async function call(operationId: string, options: CallOptions = {}): Promise<CallResult> {
  const operation = sdk[operationId]
  if (typeof operation !== 'function') throw new Error(`the generated client has no function ${operationId}`)
  driven.add(operationId)
  return (operation as SdkFunction)(options)
}

/** Fixtures are made with plain HTTP, so each block drives only its own operation through the client. */
export async function created(path: string, body: Record<string, unknown>): Promise<Fixture> {
  const res = await server.request<Fixture>('POST', path, { key, body })
  expect(res.status).toBe(201)
  return res.body
}

export const newCustomer = () =>
  created('/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100', email: `${crypto.randomUUID()}@example.com` })
export const newTax = () => created('/api/v0/taxes', { name: `VAT ${crypto.randomUUID()}`, percentage: 20 })
/** A receiving address of the platform (the key's are live: the server receives on ethereum and base, test/helpers/chains.ts). */
export const newReceivingAddress = (chain = 'ethereum', currency = 'usdc') => created('/api/v0/receiving-addresses', { chain, currency }) as Promise<Fixture & { address: string }>
/** A live liquidation address takes a receiving address (docs/chains.md). */
export const newLiquidationAddress = async (customerId: string) =>
  created(`/api/v0/customers/${customerId}/liquidation_addresses`, {
    chain: 'ethereum',
    currency: 'usdc',
    address: (await newReceivingAddress()).address,
    // Live payouts go to an address on a chain: fiat rails are refused in live (docs/chains.md#what-waits).
    destination_payment_rail: 'ethereum',
    destination_currency: 'usdc',
    destination_address: '0x5aeda56215b167893e80b4fe645ba6d5bab767de',
  })

const generatedClientModule = async () => (await import(join(directory, 'client', 'index.ts'))) as GeneratedClientModule & BodySerializers

/** Another client of the same generated code, configured with the key (sandbox money is a development key's). */
export async function clientWith(other: TestKey): Promise<GeneratedClient> {
  const clientModule = await generatedClientModule()
  return clientModule.createClient(clientModule.createConfig({ baseUrl: server.baseUrl, headers: other.headers }))
}

export const bodySerializers = async (): Promise<BodySerializers> => generatedClientModule()

/** The operationIds of the served document, and those the cases drove through the client. */
export function coverage(): { inDocument: string[]; driven: string[] } {
  return { inDocument: [...documentOperationIds], driven: [...driven] }
}

/** Starts the server and generates the client before the cases, and removes both after them. */
export function useGeneratedClient(): void {
  beforeAll(async () => {
    receiver = await startReceiver()
    // The dispatcher on, so deliveries end and the delivery routes have something to show and retry.
    server = await startTestServer({ webhooks: { dispatcher: true, timeoutMs: 1000, pollIntervalMs: 20 }, config: { productImagesDir: PRODUCT_IMAGES, chains: testChainsConfig() } })
    key = await server.createKey()
    directory = await mkdtemp(join(tmpdir(), 'devplatform-client-'))
    await generateClient({
      input: `${server.baseUrl}/api/v0/openapi.json`,
      output: { path: directory, tsConfigPath: TSCONFIG },
      logs: { level: 'silent', file: false },
      // Method names exactly as the operationIds (its default camelCases balanceControllerGetUSDCBalance to …Usdc…).
      plugins: ['@hey-api/client-fetch', { name: '@hey-api/sdk', transformer: true, operations: { methodName: { casing: 'preserve' } } }, { name: '@hey-api/transformers', dates: true }],
    })
    sdk = (await import(join(directory, 'sdk.gen.ts'))) as Record<string, unknown>
    // As a user would: the generated client's own configuration carries the base URL and the key headers.
    const { client } = (await import(join(directory, 'client.gen.ts'))) as { client: GeneratedClient }
    client.setConfig({ baseUrl: server.baseUrl, headers: key.headers })
    const clientModule = await generatedClientModule()
    anonymous = clientModule.createClient(clientModule.createConfig({ baseUrl: server.baseUrl }))

    const document = (await server.request<OpenApiDocument>('GET', '/api/v0/openapi.json')).body
    documentOperationIds = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId ?? '(unnamed)'))
  })

  afterAll(async () => {
    await server.close()
    await receiver.close()
    await rm(directory, { recursive: true, force: true })
    await rm(PRODUCT_IMAGES, { recursive: true, force: true })
  })
}
