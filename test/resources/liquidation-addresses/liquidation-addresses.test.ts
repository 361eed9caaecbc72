import type { LiquidationAddress } from '../../../src/resources/liquidation-addresses/schemas.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { base32nopad, base58, createBase58check } from '@scure/base'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { MISSING_UUID, VALID, randomEvmAddress, startTestServer, type ApiResponse, type TestKey, type TestServer } from '../../helper.js'

// ---------------------------------------------------------------- the contract's values

const EVM_CHAINS = ['ethereum', 'polygon', 'avalanche_c_chain', 'base', 'arbitrum', 'optimism'] as const
const CHAINS = [...EVM_CHAINS, 'solana', 'stellar', 'tron'] as const
type ChainName = (typeof CHAINS)[number]
const CURRENCIES = ['usdc', 'eurc', 'dai', 'pyusd', 'usdt'] as const
const DESTINATION_CURRENCIES = ['usd', 'eur', 'mxn', 'usdc', 'eurc', 'dai', 'pyusd', 'usdt'] as const
const BANK_RAILS = ['ach', 'ach_push', 'ach_same_day', 'wire', 'sepa', 'swift', 'spei'] as const
const REQUEST_ONLY_FIELDS = [
  'destination_wire_message',
  'destination_sepa_reference',
  'destination_ach_reference',
  'destination_address',
  'destination_blockchain_memo',
  'return_address',
] as const

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const ISO_MS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

// ---------------------------------------------------------------- test-side address generators

/** EIP-55 checksummed form of a 20-byte account. */
function toEip55(bytes20: Uint8Array): string {
  const lower = bytesToHex(bytes20)
  const hash = bytesToHex(keccak_256(utf8ToBytes(lower)))
  return '0x' + [...lower].map((c, i) => (parseInt(hash.charAt(i), 16) >= 8 ? c.toUpperCase() : c)).join('')
}

const isMixedCase = (address: string): boolean => /[a-f]/.test(address.slice(2)) && /[A-F]/.test(address.slice(2))

/** A fresh address with a valid EIP-55 checksum and at least two letters of each case. */
function randomChecksummedEvmAddress(): string {
  for (;;) {
    const address = toEip55(randomBytes(20))
    const body = address.slice(2)
    if ((body.match(/[a-f]/g) ?? []).length >= 2 && (body.match(/[A-F]/g) ?? []).length >= 2) return address
  }
}

/** Flips the case of one hex letter of a checksummed address, keeping it mixed case: the checksum no longer holds. */
function breakChecksum(address: string): string {
  for (let i = 2; i < address.length; i++) {
    const c = address.charAt(i)
    if (!/[a-fA-F]/.test(c)) continue
    const flipped = address.slice(0, i) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + address.slice(i + 1)
    if (isMixedCase(flipped)) return flipped
  }
  throw new Error('no hex letter to flip')
}

function randomSolanaAddress(): string {
  return base58.encode(randomBytes(32))
}

/** CRC16-XModem, bit by bit. */
function crc16(data: Uint8Array): number {
  let crc = 0
  for (const byte of data) {
    for (let bit = 7; bit >= 0; bit--) {
      const top = (crc >> 15) & 1
      crc = (crc << 1) & 0xffff
      if (top ^ ((byte >> bit) & 1)) crc ^= 0x1021
    }
  }
  return crc
}

function randomStellarAddress(): string {
  const body = Uint8Array.from([6 << 3, ...randomBytes(32)])
  const crc = crc16(body)
  return base32nopad.encode(Uint8Array.from([...body, crc & 0xff, crc >> 8]))
}

const base58check = createBase58check(sha256)
function randomTronAddress(): string {
  return base58check.encode(Uint8Array.from([0x41, ...randomBytes(20)]))
}

function freshAddress(chain: ChainName): string {
  switch (chain) {
    case 'solana':
      return randomSolanaAddress()
    case 'stellar':
      return randomStellarAddress()
    case 'tron':
      return randomTronAddress()
    default:
      return randomEvmAddress()
  }
}

/** An address that is valid, but on a chain other than `chain` (never valid on `chain`). */
function otherChainAddress(chain: ChainName): string {
  switch (chain) {
    case 'solana':
      return randomEvmAddress()
    case 'stellar':
      return randomTronAddress()
    case 'tron':
      return randomStellarAddress()
    default:
      return randomSolanaAddress()
  }
}

const CORRUPTED = {
  // mixed case with a wrong EIP-55 checksum
  ethereum: breakChecksum(VALID.ethereum),
  // base58 of the right length range, but decodes to 31 bytes
  solana: 'So1111111111111111111111111111111111111111',
  // last character changed: the CRC16 no longer matches
  stellar: VALID.stellar.slice(0, -1) + (VALID.stellar.endsWith('7') ? '6' : '7'),
  // last character changed: the base58check checksum no longer matches
  tron: VALID.tron.slice(0, -1) + (VALID.tron.endsWith('t') ? 'u' : 't'),
} as const

// ---------------------------------------------------------------- server and helpers

type Body = Record<string, unknown>
interface ErrorBody {
  statusCode: number
  error: string
  message: string
}

let server: TestServer
let key: TestKey
let otherKey: TestKey
let customerId: string
let otherAppCustomerId: string

async function createCustomer(k: TestKey): Promise<string> {
  const res = await server.request<{ id: string }>('POST', '/api/v0/customers', {
    key: k,
    body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15551234567' },
  })
  expect(res.status).toBe(201)
  return res.body.id
}

function path(customer: string, id?: string): string {
  return `/api/v0/customers/${customer}/liquidation_addresses${id === undefined ? '' : `/${id}`}`
}

/** A valid minimal body: ethereum/usdc, a fresh address, and the external account the default ach rail needs. */
function body(overrides: Body = {}): Body {
  return { chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_acct_1', ...overrides }
}

/** The same body without some fields. */
function without(source: Body, ...fields: string[]): Body {
  const copy = { ...source }
  for (const field of fields) delete copy[field]
  return copy
}

async function create(payload: unknown, options: { customer?: string; k?: TestKey } = {}): Promise<ApiResponse<unknown>> {
  return server.request('POST', path(options.customer ?? customerId, undefined), { key: options.k ?? key, body: payload })
}

async function list(customer: string = customerId, k: TestKey = key): Promise<ApiResponse<LiquidationAddress[]>> {
  return server.request<LiquidationAddress[]>('GET', path(customer), { key: k })
}

async function getOne(customer: string, id: string, k: TestKey = key): Promise<ApiResponse<unknown>> {
  return server.request('GET', path(customer, id), { key: k })
}

function expectCreated(res: ApiResponse<unknown>): LiquidationAddress {
  if (res.status !== 201) throw new Error(`expected 201, got ${res.status}: ${res.text}`)
  const created = res.body as LiquidationAddress
  expect(created.id).toMatch(UUID_RE)
  expect(created.state).toBe('active')
  return created
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** 400 with exactly {statusCode, error, message}, the message naming every given field as a whole word. */
function expectBadRequest(res: ApiResponse<unknown>, ...fields: string[]): string {
  expect(res.status, res.text).toBe(400)
  expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.any(String) })
  const message = (res.body as ErrorBody).message
  for (const field of fields) {
    expect(message, `message should name ${field}`).toMatch(new RegExp(`(^|[^A-Za-z0-9_])${escapeRegExp(field)}($|[^A-Za-z0-9_])`))
  }
  return message
}

function expectError(res: ApiResponse<unknown>, statusCode: number, error: string, message: string): void {
  expect(res.status, res.text).toBe(statusCode)
  expect(res.body).toEqual({ statusCode, error, message })
}

const CONFLICT = { statusCode: 409, error: 'Conflict', message: 'Liquidation address already exists' }

beforeAll(async () => {
  server = await startTestServer()
  // The contract's rules, on sandbox keys: a live create also needs a receiving address of the
  // platform (test/resources/receiving-addresses/), which the sandbox does not.
  key = await server.createKey({ environment: 'development' })
  otherKey = await server.createKey({ environment: 'development' })
  customerId = await createCustomer(key)
  otherAppCustomerId = await createCustomer(otherKey)
})
afterAll(async () => server.close())

// ---------------------------------------------------------------- happy path

describe('POST /api/v0/customers/{customerId}/liquidation_addresses: success', () => {
  it('answers 201 with exactly the contract object, defaults present, and GET one / GET list return it', async () => {
    const customer = await createCustomer(key)
    const address = randomChecksummedEvmAddress()
    const res = await create({ chain: 'ethereum', currency: 'usdc', address, external_account_id: 'ext_123' }, { customer })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID_RE),
      state: 'active',
      customer_id: customer,
      chain: 'ethereum',
      currency: 'usdc',
      address,
      created_at: expect.stringMatching(ISO_MS_RE),
      updated_at: expect.stringMatching(ISO_MS_RE),
      external_account_id: 'ext_123',
      destination_payment_rail: 'ach',
      destination_currency: 'usd',
    })
    const created = res.body as LiquidationAddress
    expect(new Date(created.created_at).toISOString()).toBe(created.created_at)
    expect(new Date(created.updated_at).toISOString()).toBe(created.updated_at)
    expect(Math.abs(Date.now() - Date.parse(created.created_at))).toBeLessThan(60_000)

    const one = await getOne(customer, created.id)
    expect(one.status).toBe(200)
    expect(one.body).toEqual(created)

    const all = await list(customer)
    expect(all.status).toBe(200)
    expect(all.body).toEqual([created])
  })

  it('returns every optional response field that was set, and none of the request-only fields', async () => {
    const customer = await createCustomer(key)
    const address = randomEvmAddress()
    const request = {
      chain: 'polygon',
      currency: 'usdt',
      address,
      external_account_id: 'ext_full',
      prefunded_account_id: 'pre_full',
      bridge_wallet_id: 'bw_full',
      destination_payment_rail: 'solana',
      destination_currency: 'usdc',
      destination_wire_message: 'wire message',
      destination_sepa_reference: 'SEPA-REF-1',
      destination_ach_reference: 'ACHREF',
      destination_address: randomSolanaAddress(),
      destination_blockchain_memo: 'memo',
      return_address: randomEvmAddress(),
      custom_developer_fee_percent: '10.2',
    }
    const res = await create(request, { customer })
    expect(res.status, res.text).toBe(201)
    const expected = {
      id: expect.stringMatching(UUID_RE),
      state: 'active',
      customer_id: customer,
      chain: 'polygon',
      currency: 'usdt',
      address,
      created_at: expect.stringMatching(ISO_MS_RE),
      updated_at: expect.stringMatching(ISO_MS_RE),
      external_account_id: 'ext_full',
      prefunded_account_id: 'pre_full',
      bridge_wallet_id: 'bw_full',
      destination_payment_rail: 'solana',
      destination_currency: 'usdc',
      custom_developer_fee_percent: '10.2',
    }
    expect(res.body).toEqual(expected)
    for (const field of REQUEST_ONLY_FIELDS) expect(res.body).not.toHaveProperty(field)

    const created = res.body as LiquidationAddress
    const one = await getOne(customer, created.id)
    expect(one.status).toBe(200)
    expect(one.body).toEqual(created)
    for (const field of REQUEST_ONLY_FIELDS) expect(one.body).not.toHaveProperty(field)

    const all = await list(customer)
    expect(all.status).toBe(200)
    expect(all.body).toEqual([created])
  })

  it('omits optional response fields that were not set (prefunded_account_id alone)', async () => {
    const address = randomEvmAddress()
    const res = await create({ chain: 'base', currency: 'dai', address, external_account_id: 'e', prefunded_account_id: 'p' })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID_RE),
      state: 'active',
      customer_id: customerId,
      chain: 'base',
      currency: 'dai',
      address,
      created_at: expect.stringMatching(ISO_MS_RE),
      updated_at: expect.stringMatching(ISO_MS_RE),
      external_account_id: 'e',
      prefunded_account_id: 'p',
      destination_payment_rail: 'ach',
      destination_currency: 'usd',
    })
  })

  it('lists every address of the customer, and an empty array for a customer without any', async () => {
    const customer = await createCustomer(key)
    expect((await list(customer)).body).toEqual([])
    const a = expectCreated(await create(body(), { customer }))
    const b = expectCreated(await create(body({ chain: 'tron', address: randomTronAddress() }), { customer }))
    const all = await list(customer)
    expect(all.status).toBe(200)
    expect(all.body).toHaveLength(2)
    expect(all.body).toEqual(expect.arrayContaining([a, b]))
  })
})

// ---------------------------------------------------------------- enums

describe('enums', () => {
  it.each(CHAINS)('accepts chain %s with an address valid on it', async (chain) => {
    const address = freshAddress(chain)
    const created = expectCreated(await create(body({ chain, address })))
    expect(created.chain).toBe(chain)
    expect(created.address).toBe(address)
  })

  it.each(['bitcoin', 'Ethereum', 'ETHEREUM', ''])('rejects chain %j', async (chain) => {
    expectBadRequest(await create(body({ chain })), 'chain')
  })

  it.each(CURRENCIES)('accepts currency %s', async (currency) => {
    expect(expectCreated(await create(body({ currency }))).currency).toBe(currency)
  })

  it.each(['usd', 'USDC', 'btc'])('rejects currency %j', async (currency) => {
    expectBadRequest(await create(body({ currency })), 'currency')
  })

  it('accepts destination_payment_rail wire (a valid value) and echoes it', async () => {
    expect(expectCreated(await create(body({ destination_payment_rail: 'wire' }))).destination_payment_rail).toBe('wire')
  })

  it.each(['paypal', 'ACH', 'bitcoin'])('rejects destination_payment_rail %j', async (rail) => {
    expectBadRequest(await create(body({ destination_payment_rail: rail })), 'destination_payment_rail')
  })

  it.each(DESTINATION_CURRENCIES)('accepts destination_currency %s', async (destinationCurrency) => {
    expect(expectCreated(await create(body({ destination_currency: destinationCurrency }))).destination_currency).toBe(destinationCurrency)
  })

  it.each(['gbp', 'USD', 'btc'])('rejects destination_currency %j', async (destinationCurrency) => {
    expectBadRequest(await create(body({ destination_currency: destinationCurrency })), 'destination_currency')
  })
})

// ---------------------------------------------------------------- lengths

describe('lengths', () => {
  it.each(['external_account_id', 'prefunded_account_id', 'bridge_wallet_id'])('%s: 42 characters accepted, 43 rejected', async (field) => {
    const created = expectCreated(await create(body({ [field]: 'a'.repeat(42) })))
    expect(created).toHaveProperty(field, 'a'.repeat(42))
    expectBadRequest(await create(body({ [field]: 'a'.repeat(43) })), field)
  })

  it('destination_wire_message: 256 accepted, 257 rejected', async () => {
    expectCreated(await create(body({ destination_payment_rail: 'wire', destination_wire_message: 'w'.repeat(256) })))
    expectBadRequest(await create(body({ destination_payment_rail: 'wire', destination_wire_message: 'w'.repeat(257) })), 'destination_wire_message')
  })

  it('destination_sepa_reference: 5 rejected, 6 accepted, 140 accepted, 141 rejected', async () => {
    const sepa = (n: number): Body => body({ destination_payment_rail: 'sepa', destination_currency: 'eur', destination_sepa_reference: 's'.repeat(n) })
    expectBadRequest(await create(sepa(5)), 'destination_sepa_reference')
    expectCreated(await create(sepa(6)))
    expectCreated(await create(sepa(140)))
    expectBadRequest(await create(sepa(141)), 'destination_sepa_reference')
  })

  it('destination_ach_reference: 10 accepted, 11 rejected', async () => {
    expectCreated(await create(body({ destination_ach_reference: 'r'.repeat(10) })))
    expectBadRequest(await create(body({ destination_ach_reference: 'r'.repeat(11) })), 'destination_ach_reference')
  })

  it('destination_blockchain_memo: 256 accepted, 257 rejected', async () => {
    const memo = (n: number): Body =>
      body({ destination_payment_rail: 'ethereum', destination_address: randomEvmAddress(), destination_blockchain_memo: 'm'.repeat(n) })
    expectCreated(await create(memo(256)))
    expectBadRequest(await create(memo(257)), 'destination_blockchain_memo')
  })
})

// ---------------------------------------------------------------- custom_developer_fee_percent

describe('custom_developer_fee_percent', () => {
  it.each(['10.2', '0', '99.99999', '0.00001', '5', '99'])('accepts %j and echoes it as sent', async (fee) => {
    expect(expectCreated(await create(body({ custom_developer_fee_percent: fee }))).custom_developer_fee_percent).toBe(fee)
  })

  it.each<[string, unknown]>([
    ['a JSON number', 10.2],
    ['an integer number', 10],
    ['not a number', 'abc'],
    ['100', '100'],
    ['negative', '-1'],
    ['6 decimals', '99.999999'],
    ['empty', ''],
    ['exponent notation', '1e2'],
    ['a leading zero', '01'],
  ])('rejects %s', async (_label, fee) => {
    expectBadRequest(await create(body({ custom_developer_fee_percent: fee })), 'custom_developer_fee_percent')
  })
})

// ---------------------------------------------------------------- shape of the body

describe('body shape', () => {
  it('rejects an unknown body field', async () => {
    const message = expectBadRequest(await create(body({ foo: 'bar' })), 'foo')
    expect(message).toContain('property foo should not exist')
  })

  it.each(['chain', 'currency', 'address'])('rejects a body without %s', async (field) => {
    expectBadRequest(await create(without(body(), field)), field)
  })

  it.each<[string, string]>([
    ['an array', '[]'],
    ['a string', '"text"'],
    ['a number', '42'],
    ['a boolean', 'true'],
    ['null', 'null'],
  ])('rejects %s as body', async (_label, raw) => {
    expectBadRequest(await create(raw))
  })

  it('rejects an empty body sent as application/json', async () => {
    const res = await server.request('POST', path(customerId), { key, headers: { 'content-type': 'application/json' } })
    expectBadRequest(res)
  })

  it('rejects a request without any body', async () => {
    expectBadRequest(await server.request('POST', path(customerId), { key }))
  })

  it('rejects an empty JSON object, naming chain, currency and address', async () => {
    expectBadRequest(await create({}), 'chain', 'currency', 'address')
  })

  it.each<[string, unknown]>([
    ['chain', 1],
    ['currency', true],
    ['address', 123],
    ['external_account_id', 5],
    ['prefunded_account_id', {}],
    ['bridge_wallet_id', ['bw']],
    ['destination_payment_rail', 1],
    ['destination_currency', false],
    ['destination_wire_message', []],
    ['destination_sepa_reference', 123456],
    ['destination_ach_reference', 1],
    ['destination_address', 1],
    ['destination_blockchain_memo', {}],
    ['return_address', 0],
  ])('rejects %s of a wrong type (%j)', async (field, value) => {
    expectBadRequest(await create(body({ [field]: value })), field)
  })
})

// ---------------------------------------------------------------- addresses per chain

describe('address validity per chain', () => {
  it.each(EVM_CHAINS)('%s: lower case, upper case and a valid EIP-55 checksum accepted; a bad checksum rejected', async (chain) => {
    const lower = randomEvmAddress()
    expect(expectCreated(await create(body({ chain, address: lower }))).address).toBe(lower)
    const upper = `0x${randomEvmAddress().slice(2).toUpperCase()}`
    expect(expectCreated(await create(body({ chain, address: upper }))).address).toBe(upper)
    const checksummed = randomChecksummedEvmAddress()
    expect(expectCreated(await create(body({ chain, address: checksummed }))).address).toBe(checksummed)
    expectBadRequest(await create(body({ chain, address: breakChecksum(randomChecksummedEvmAddress()) })), 'address')
  })

  it.each<[string, string]>([
    ['the contract example with a flipped letter case', CORRUPTED.ethereum],
    ['too short', '0x4d0280da2f2fda5103914bcc5aad114743152a9'],
    ['too long', '0x4d0280da2f2fda5103914bcc5aad114743152a9c0'],
    ['no 0x prefix', '4d0280da2f2fda5103914bcc5aad114743152a9c'],
    ['a non-hex digit', '0x4d0280da2f2fda5103914bcc5aad114743152a9g'],
    ['empty', ''],
  ])('ethereum: rejects an address that is %s', async (_label, address) => {
    expectBadRequest(await create(body({ address })), 'address')
  })

  it('solana: a valid address accepted, a corrupted one rejected', async () => {
    const address = randomSolanaAddress()
    expect(expectCreated(await create(body({ chain: 'solana', address }))).address).toBe(address)
    expectBadRequest(await create(body({ chain: 'solana', address: CORRUPTED.solana })), 'address')
    expectBadRequest(await create(body({ chain: 'solana', address: `${VALID.solana.slice(0, -1)}0` })), 'address')
    expectBadRequest(await create(body({ chain: 'solana', address: randomEvmAddress() })), 'address')
  })

  it('stellar: a valid address accepted, a corrupted one rejected', async () => {
    const address = randomStellarAddress()
    expect(expectCreated(await create(body({ chain: 'stellar', address }))).address).toBe(address)
    expectBadRequest(await create(body({ chain: 'stellar', address: CORRUPTED.stellar })), 'address')
    expectBadRequest(await create(body({ chain: 'stellar', address: VALID.stellar.toLowerCase() })), 'address')
    expectBadRequest(await create(body({ chain: 'stellar', address: randomTronAddress() })), 'address')
  })

  it('tron: a valid address accepted, a corrupted one rejected', async () => {
    const address = randomTronAddress()
    expect(expectCreated(await create(body({ chain: 'tron', address }))).address).toBe(address)
    expectBadRequest(await create(body({ chain: 'tron', address: CORRUPTED.tron })), 'address')
    expectBadRequest(await create(body({ chain: 'tron', address: randomSolanaAddress() })), 'address')
  })

  it('accepts the contract examples of solana, stellar and tron', async () => {
    for (const chain of ['solana', 'stellar', 'tron'] as const) {
      expect(expectCreated(await create(body({ chain, address: VALID[chain] }))).address).toBe(VALID[chain])
    }
  })
})

// ---------------------------------------------------------------- return_address

describe('return_address', () => {
  it.each(['ethereum', 'arbitrum', 'solana', 'tron'] as const)('%s: valid on the same chain accepted, not returned', async (chain) => {
    const created = expectCreated(await create(body({ chain, address: freshAddress(chain), return_address: freshAddress(chain) })))
    expect(created).not.toHaveProperty('return_address')
  })

  it.each(['ethereum', 'optimism', 'solana', 'tron'] as const)('%s: an address of another chain rejected', async (chain) => {
    expectBadRequest(await create(body({ chain, address: freshAddress(chain), return_address: otherChainAddress(chain) })), 'return_address')
  })

  it('ethereum: a bad checksum rejected', async () => {
    expectBadRequest(await create(body({ return_address: CORRUPTED.ethereum })), 'return_address')
  })

  it('tron: a corrupted address rejected', async () => {
    expectBadRequest(await create(body({ chain: 'tron', address: randomTronAddress(), return_address: CORRUPTED.tron })), 'return_address')
  })

  it('stellar: rejected even when it is a valid stellar address', async () => {
    expectBadRequest(
      await create(body({ chain: 'stellar', address: randomStellarAddress(), return_address: randomStellarAddress() })),
      'return_address',
    )
  })
})

// ---------------------------------------------------------------- destinations

describe('destination rules', () => {
  it('the default rail (ach) needs external_account_id', async () => {
    expectBadRequest(await create(without(body(), 'external_account_id')), 'external_account_id')
    expectBadRequest(await create(without(body({ prefunded_account_id: 'pre' }), 'external_account_id')), 'external_account_id')
  })

  it.each(BANK_RAILS)('%s: without external_account_id rejected, with it created', async (rail) => {
    expectBadRequest(await create(without(body({ destination_payment_rail: rail }), 'external_account_id')), 'external_account_id')
    const created = expectCreated(await create(body({ destination_payment_rail: rail })))
    expect(created.destination_payment_rail).toBe(rail)
    expect(created.external_account_id).toBe('ext_acct_1')
  })

  it.each(BANK_RAILS)('%s: destination_address rejected', async (rail) => {
    expectBadRequest(await create(body({ destination_payment_rail: rail, destination_address: randomEvmAddress() })), 'destination_address')
  })

  it.each(CHAINS)('crypto rail %s: needs destination_address valid on the %s chain', async (rail) => {
    const base = without(body({ destination_payment_rail: rail }), 'external_account_id')
    expectBadRequest(await create(base), 'destination_address')
    const created = expectCreated(await create({ ...base, address: randomEvmAddress(), destination_address: freshAddress(rail) }))
    expect(created.destination_payment_rail).toBe(rail)
    expect(created).not.toHaveProperty('destination_address')
    expectBadRequest(await create({ ...base, address: randomEvmAddress(), destination_address: otherChainAddress(rail) }), 'destination_address')
  })

  it('crypto rail: a corrupted destination_address rejected', async () => {
    expectBadRequest(await create(body({ destination_payment_rail: 'ethereum', destination_address: CORRUPTED.ethereum })), 'destination_address')
    expectBadRequest(await create(body({ destination_payment_rail: 'stellar', destination_address: CORRUPTED.stellar })), 'destination_address')
    expectBadRequest(await create(body({ destination_payment_rail: 'tron', destination_address: CORRUPTED.tron })), 'destination_address')
    expectBadRequest(await create(body({ destination_payment_rail: 'solana', destination_address: CORRUPTED.solana })), 'destination_address')
  })

  it('bridge_wallet: without bridge_wallet_id rejected, with it created', async () => {
    const base = without(body({ destination_payment_rail: 'bridge_wallet' }), 'external_account_id')
    expectBadRequest(await create(base), 'bridge_wallet_id')
    const created = expectCreated(await create({ ...base, address: randomEvmAddress(), bridge_wallet_id: 'bw_1' }))
    expect(created.destination_payment_rail).toBe('bridge_wallet')
    expect(created.bridge_wallet_id).toBe('bw_1')
    expect(created).not.toHaveProperty('external_account_id')
  })
})

// ---------------------------------------------------------------- several failures, no side effects

describe('several failures at once', () => {
  it('answers one 400 naming every failed field and rule', async () => {
    const res = await create({
      chain: 'ethereum',
      currency: 'usd',
      address: CORRUPTED.ethereum,
      foo: 1,
      custom_developer_fee_percent: '100',
      destination_ach_reference: 'r'.repeat(11),
    })
    const message = expectBadRequest(res, 'currency', 'address', 'foo', 'custom_developer_fee_percent', 'destination_ach_reference', 'external_account_id')
    expect(message).toContain('property foo should not exist')
  })

  it('names a schema failure and a cross-field rule failure together', async () => {
    const res = await create({
      chain: 'stellar',
      currency: 'usdc',
      address: randomStellarAddress(),
      return_address: randomStellarAddress(),
      destination_payment_rail: 'solana',
      destination_currency: 'gbp',
    })
    expectBadRequest(res, 'return_address', 'destination_address', 'destination_currency')
  })

  it('a rejected request changes nothing', async () => {
    const customer = await createCustomer(key)
    const existing = expectCreated(await create(body(), { customer }))
    const before = await list(customer)
    expect(before.body).toEqual([existing])

    const address = randomEvmAddress()
    expectBadRequest(await create(body({ address, currency: 'usd' }), { customer }), 'currency')
    expectBadRequest(await create(without(body({ address }), 'external_account_id'), { customer }), 'external_account_id')
    expectBadRequest(await create(body({ address, foo: 'bar' }), { customer }), 'foo')
    expect((await create(body({ address: existing.address }), { customer })).status).toBe(409)

    const after = await list(customer)
    expect(after.status).toBe(200)
    expect(after.body).toEqual(before.body)
    // the address of the rejected requests is still free
    expectCreated(await create(body({ address }), { customer }))
  })
})

// ---------------------------------------------------------------- uniqueness

describe('duplicate (chain, address)', () => {
  it('the same chain and address twice → 409', async () => {
    const address = randomEvmAddress()
    expectCreated(await create(body({ address })))
    const res = await create(body({ address, currency: 'dai' }))
    expect(res.status).toBe(409)
    expect(res.body).toEqual(CONFLICT)
  })

  it('409 when another application’s customer holds it', async () => {
    const address = randomEvmAddress()
    expectCreated(await create(body({ address }), { customer: otherAppCustomerId, k: otherKey }))
    const res = await create(body({ address }))
    expect(res.status).toBe(409)
    expect(res.body).toEqual(CONFLICT)
  })

  it('409 when another customer of the same application holds it', async () => {
    const address = randomEvmAddress()
    const customer = await createCustomer(key)
    expectCreated(await create(body({ address }), { customer }))
    const res = await create(body({ address }))
    expect(res.status).toBe(409)
    expect(res.body).toEqual(CONFLICT)
  })

  it('409 when the EVM address differs only in letter case', async () => {
    const checksummed = randomChecksummedEvmAddress()
    expectCreated(await create(body({ address: checksummed.toLowerCase() })))
    for (const variant of [checksummed, `0x${checksummed.slice(2).toUpperCase()}`]) {
      const res = await create(body({ address: variant }))
      expect(res.status).toBe(409)
      expect(res.body).toEqual(CONFLICT)
    }
  })

  it('409 for a non-EVM address twice', async () => {
    const address = randomTronAddress()
    expectCreated(await create(body({ chain: 'tron', address })))
    const res = await create(body({ chain: 'tron', address }))
    expect(res.status).toBe(409)
    expect(res.body).toEqual(CONFLICT)
  })

  it('the same address on another EVM chain is fine', async () => {
    const address = randomChecksummedEvmAddress()
    for (const chain of EVM_CHAINS) {
      expect(expectCreated(await create(body({ chain, address }))).chain).toBe(chain)
    }
  })
})

// ---------------------------------------------------------------- customers, ids and ownership

describe('customer and id checks', () => {
  it('a customer of another application → 404 on create, list and get', async () => {
    const foreign = expectCreated(await create(body(), { customer: otherAppCustomerId, k: otherKey }))
    const before = await list(otherAppCustomerId, otherKey)

    expectError(await create(body(), { customer: otherAppCustomerId }), 404, 'Not Found', 'Customer not found')
    expectError(await list(otherAppCustomerId), 404, 'Not Found', 'Customer not found')
    expectError(await getOne(otherAppCustomerId, foreign.id), 404, 'Not Found', 'Customer not found')

    // nothing was created for the foreign customer
    expect((await list(otherAppCustomerId, otherKey)).body).toEqual(before.body)
  })

  it('another application’s address under one’s own customer → 404 Liquidation address not found', async () => {
    const foreign = expectCreated(await create(body(), { customer: otherAppCustomerId, k: otherKey }))
    expectError(await getOne(customerId, foreign.id), 404, 'Not Found', 'Liquidation address not found')
  })

  it('an address of another customer of the same application → 404 Liquidation address not found', async () => {
    const customer = await createCustomer(key)
    const created = expectCreated(await create(body(), { customer }))
    expectError(await getOne(customerId, created.id), 404, 'Not Found', 'Liquidation address not found')
    expect((await getOne(customer, created.id)).status).toBe(200)
  })

  it('a missing customer → 404 on create, list and get', async () => {
    expectError(await create(body(), { customer: MISSING_UUID }), 404, 'Not Found', 'Customer not found')
    expectError(await list(MISSING_UUID), 404, 'Not Found', 'Customer not found')
    expectError(await getOne(MISSING_UUID, MISSING_UUID), 404, 'Not Found', 'Customer not found')
  })

  it.each(['not-a-uuid', '123', '00000000-0000-4000-8000-00000000000'])('a malformed customerId %j → 400 on create, list and get', async (bad) => {
    expectError(await create(body(), { customer: bad }), 400, 'Bad Request', 'Invalid customer ID format')
    expectError(await list(bad), 400, 'Bad Request', 'Invalid customer ID format')
    expectError(await getOne(bad, MISSING_UUID), 400, 'Bad Request', 'Invalid customer ID format')
  })

  it('a malformed liquidationAddressId → 400', async () => {
    expectError(await getOne(customerId, 'not-a-uuid'), 400, 'Bad Request', 'Invalid liquidation address ID format')
  })

  it('an unknown liquidationAddressId → 404 Liquidation address not found', async () => {
    expectError(await getOne(customerId, MISSING_UUID), 404, 'Not Found', 'Liquidation address not found')
  })
})
