import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bytesToHex } from 'viem'
import { HDKey, privateKeyToAccount } from 'viem/accounts'
import { ReceivingKey } from '../../../src/chains/derivation.js'
import { MISSING_UUID, randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { TEST_RECEIVING_XPUB, testChainsConfig } from '../../helpers/chains.js'

interface ReceivingAddress {
  id: string
  address: string
  chain: string
  currency: string
  livemode: boolean
  liquidation_address_id: string | null
  created_at: string
}

let server: TestServer
let live: TestKey
let sandbox: TestKey
let other: TestKey

beforeAll(async () => {
  server = await startTestServer({ config: { chains: testChainsConfig() } })
  live = await server.createKey()
  sandbox = await server.createKey({ appId: live.appId, environment: 'development' })
  other = await server.createKey()
})

afterAll(async () => {
  await server.close()
})

const create = (key: TestKey, body: unknown) => server.request<ReceivingAddress>('POST', '/api/v0/receiving-addresses', { key, body })

async function newCustomer(key: TestKey): Promise<string> {
  const res = await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100', email: `ada-${crypto.randomUUID()}@example.com` } })
  expect(res.status).toBe(201)
  return res.body.id
}

/** Paid out to an address on base: live money is never paid out on a fiat rail. */
const liquidationAddress = (key: TestKey, customerId: string, body: Record<string, unknown>) =>
  server.request<{ id: string; address: string }>('POST', `/api/v0/customers/${customerId}/liquidation_addresses`, {
    key,
    body: { destination_payment_rail: 'base', destination_currency: 'usdc', destination_address: '0x5aeda56215b167893e80b4fe645ba6d5bab767de', ...body },
  })

const ownerOf = (address: string) => server.app.db.selectFrom('chain_addresses').selectAll().where('address', '=', address).executeTakeFirst()

describe('POST /receiving-addresses', () => {
  it("derives from the public key the address a wallet holding the seed signs for (m/44'/60'/0'/0/i)", () => {
    const seed = HDKey.fromMasterSeed(new Uint8Array(32).fill(7))
    for (const index of [0, 1, 41]) {
      const privateKey = seed.derive(`m/44'/60'/0'/0/${index}`).privateKey
      if (privateKey === null) throw new Error('no private key')
      expect(new ReceivingKey(TEST_RECEIVING_XPUB).addressAt(index)).toBe(privateKeyToAccount(bytesToHex(privateKey)).address.toLowerCase())
    }
  })

  it('live: derives the next address from the operator key and records it unassigned for that chain and currency', async () => {
    const res = await create(live, { chain: 'ethereum', currency: 'usdc' })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ id: expect.any(String), address: expect.stringMatching(/^0x[0-9a-f]{40}$/), chain: 'ethereum', currency: 'usdc', livemode: true, liquidation_address_id: null, created_at: expect.any(String) })
    const row = await ownerOf(res.body.address)
    expect(row).toMatchObject({ chain: 'ethereum', environment: 'live', app_id: live.appId, owner_type: 'unassigned', owner_id: null, currency: 'usdc' })
    expect(res.body.address).toBe(new ReceivingKey(TEST_RECEIVING_XPUB).addressAt(Number(row?.derivation_index)))
  })

  it('live: two requests get two addresses', async () => {
    const [a, b] = await Promise.all([create(live, { chain: 'base', currency: 'usdc' }), create(live, { chain: 'base', currency: 'usdc' })])
    expect([a?.status, b?.status]).toEqual([201, 201])
    expect(a?.body.address).not.toBe(b?.body.address)
  })

  it('live: refuses a chain the platform does not receive on, saying why, and allocates nothing', async () => {
    const before = await server.app.db.selectFrom('chain_addresses').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    const res = await create(live, { chain: 'polygon', currency: 'usdc' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'live deposits on polygon are off: this platform has no configuration for polygon (CHAINS_FILE, docs/chains.md)' })
    const after = await server.app.db.selectFrom('chain_addresses').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    expect(Number(after.n)).toBe(Number(before.n))
  })

  it('live: refuses a currency without a contract on the chain', async () => {
    const res = await create(live, { chain: 'base', currency: 'eurc' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'live deposits of eurc on base are off: no eurc contract is configured for base' })
  })

  it('sandbox: a made-up address on any EVM chain, nothing derived', async () => {
    const res = await create(sandbox, { chain: 'polygon', currency: 'eurc' })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ chain: 'polygon', currency: 'eurc', livemode: false, liquidation_address_id: null, address: expect.stringMatching(/^0x[0-9a-f]{40}$/) })
    expect(await ownerOf(res.body.address)).toBeUndefined()
  })

  it('refuses a chain that is not EVM and a currency it does not know', async () => {
    expect((await create(sandbox, { chain: 'solana', currency: 'usdc' })).status).toBe(400)
    expect((await create(live, { chain: 'solana', currency: 'usdc' })).status).toBe(400)
    expect((await create(sandbox, { chain: 'base', currency: 'usdt' })).status).toBe(400)
    expect((await create(sandbox, { chain: 'base' })).status).toBe(400)
  })
})

describe('GET /receiving-addresses', () => {
  it("lists the key's environment's addresses newest first, with paging", async () => {
    const server2Key = await server.createKey()
    const sandbox2 = await server.createKey({ appId: server2Key.appId, environment: 'development' })
    const made: string[] = []
    for (let i = 0; i < 3; i++) made.push((await create(server2Key, { chain: 'ethereum', currency: 'eurc' })).body.id)
    await create(sandbox2, { chain: 'ethereum', currency: 'eurc' })
    const page = await server.request<{ data: ReceivingAddress[]; total: number; skip: number; take: number }>('GET', '/api/v0/receiving-addresses?skip=1&take=1', { key: server2Key })
    expect(page.status).toBe(200)
    expect(page.body).toMatchObject({ total: 3, skip: 1, take: 1 })
    expect(page.body.data.map((row) => row.id)).toEqual([made[1]])
    const sandboxList = await server.request<{ data: ReceivingAddress[]; total: number }>('GET', '/api/v0/receiving-addresses', { key: sandbox2 })
    expect(sandboxList.body.total).toBe(1)
    expect(sandboxList.body.data[0]?.livemode).toBe(false)
  })

  it("gets one; another application's or environment's is not found", async () => {
    const made = (await create(live, { chain: 'ethereum', currency: 'usdc' })).body
    const res = await server.request<ReceivingAddress>('GET', `/api/v0/receiving-addresses/${made.id}`, { key: live })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(made)
    for (const key of [other, sandbox]) {
      const missing = await server.request('GET', `/api/v0/receiving-addresses/${made.id}`, { key })
      expect(missing.status).toBe(404)
      expect(missing.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Receiving address not found' })
    }
    expect((await server.request('GET', `/api/v0/receiving-addresses/${MISSING_UUID}`, { key: live })).status).toBe(404)
  })
})

describe('live liquidation addresses take a receiving address', () => {
  it('refuses an address the platform does not receive on, saying how to get one', async () => {
    const customer = await newCustomer(live)
    const res = await liquidationAddress(live, customer, { chain: 'ethereum', currency: 'usdc', address: randomEvmAddress() })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message:
        'A live liquidation address must be a receiving address of this application for ethereum usdc that no liquidation address has taken yet: get one with POST /api/v0/receiving-addresses, docs/chains.md',
    })
    const list = await server.request<unknown[]>('GET', `/api/v0/customers/${customer}/liquidation_addresses`, { key: live })
    expect(list.body).toEqual([])
  })

  it('refuses a chain that is off with the reason, solana included', async () => {
    const customer = await newCustomer(live)
    const polygon = await liquidationAddress(live, customer, { chain: 'polygon', currency: 'usdc', address: randomEvmAddress() })
    expect(polygon.status).toBe(400)
    expect(polygon.body).toMatchObject({ message: 'live deposits on polygon are off: this platform has no configuration for polygon (CHAINS_FILE, docs/chains.md)' })
    const solana = await liquidationAddress(live, customer, { chain: 'solana', currency: 'usdc', address: 'So11111111111111111111111111111111111111112' })
    expect(solana.status).toBe(400)
    expect(solana.body).toMatchObject({ message: expect.stringContaining('live deposits on solana are off') })
  })

  it('takes its receiving address: the address becomes the liquidation address’s, once', async () => {
    const customer = await newCustomer(live)
    const receiving = (await create(live, { chain: 'ethereum', currency: 'usdc' })).body
    const res = await liquidationAddress(live, customer, { chain: 'ethereum', currency: 'usdc', address: receiving.address })
    expect(res.status).toBe(201)
    const read = await server.request<ReceivingAddress>('GET', `/api/v0/receiving-addresses/${receiving.id}`, { key: live })
    expect(read.body.liquidation_address_id).toBe(res.body.id)
    expect(await ownerOf(receiving.address)).toMatchObject({ owner_type: 'liquidation_address', owner_id: res.body.id })
    const again = await liquidationAddress(live, await newCustomer(live), { chain: 'ethereum', currency: 'usdc', address: receiving.address })
    expect(again.status).toBe(409)
  })

  it("refuses another currency's, another chain's, another application's and a sandbox receiving address", async () => {
    const customer = await newCustomer(live)
    const eurc = (await create(live, { chain: 'ethereum', currency: 'eurc' })).body
    const base = (await create(live, { chain: 'base', currency: 'usdc' })).body
    const others = (await create(other, { chain: 'ethereum', currency: 'usdc' })).body
    const sandboxOne = (await create(sandbox, { chain: 'ethereum', currency: 'usdc' })).body
    for (const address of [eurc.address, base.address, others.address, sandboxOne.address]) {
      const res = await liquidationAddress(live, customer, { chain: 'ethereum', currency: 'usdc', address })
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ message: expect.stringContaining('get one with POST /api/v0/receiving-addresses') })
    }
    expect((await ownerOf(eurc.address))?.owner_type).toBe('unassigned')
    expect((await ownerOf(others.address))?.owner_type).toBe('unassigned')
  })

  it('sandbox: any valid address, and a sandbox receiving address is marked taken', async () => {
    const customer = await newCustomer(sandbox)
    expect((await liquidationAddress(sandbox, customer, { chain: 'polygon', currency: 'usdc', address: randomEvmAddress() })).status).toBe(201)
    const receiving = (await create(sandbox, { chain: 'base', currency: 'eurc' })).body
    const res = await liquidationAddress(sandbox, customer, { chain: 'base', currency: 'eurc', address: receiving.address })
    expect(res.status).toBe(201)
    const read = await server.request<ReceivingAddress>('GET', `/api/v0/receiving-addresses/${receiving.id}`, { key: sandbox })
    expect(read.body.liquidation_address_id).toBe(res.body.id)
  })
})
