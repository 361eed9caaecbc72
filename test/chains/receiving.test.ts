import { pbkdf2Sync } from 'node:crypto'
import { HDKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainConfig } from '../../src/chains/config.js'
import { derivationPath, MAX_DERIVATION_INDEX, ReceivingKey } from '../../src/chains/derivation.js'
import { claimReceivingAddress, Receiving } from '../../src/chains/receiving.js'
import { startTestServer, type TestServer } from '../helper.js'
import { testXpub } from '../helpers/receiving-key.js'

/** anvil's mnemonic: its accounts are m/44'/60'/0'/0/i, published, so they are a known vector of the derivation. */
const ANVIL_XPUB = HDKey.fromMasterSeed(pbkdf2Sync('test test test test test test test test test test test junk', 'mnemonic', 2048, 64, 'sha512')).derive("m/44'/60'/0'").publicExtendedKey

const base: ChainConfig = { chain: 'base', chainId: 8453, rpcUrls: ['http://127.0.0.1:1'], tokens: { usdc: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913' }, confirmations: 3, pollIntervalMs: 2_000, maxBlockRange: 500, startBlock: undefined, rpcTimeoutMs: 5_000 }

describe('receiving addresses from an extended public key', () => {
  it("derive the BIP-44 addresses m/44'/60'/0'/0/i a wallet restored from the same seed shows", () => {
    const key = new ReceivingKey(ANVIL_XPUB)
    expect(key.addressAt(0)).toBe('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266')
    expect(key.addressAt(1)).toBe('0x70997970c51812dc3a010c7d01b50e0d17dc79c8')
    expect(key.addressAt(9)).toBe('0xa0ee7a142d267c1f36714e4a8f75612f20a79720')
    expect(derivationPath(9)).toBe("m/44'/60'/0'/0/9")
  })

  it('take every index from 0 to 2^31 - 1 and refuse one outside', () => {
    const key = new ReceivingKey(ANVIL_XPUB)
    expect(key.addressAt(MAX_DERIVATION_INDEX)).toMatch(/^0x[0-9a-f]{40}$/)
    expect(() => key.addressAt(MAX_DERIVATION_INDEX + 1)).toThrow(RangeError)
    expect(() => key.addressAt(-1)).toThrow(RangeError)
  })
})

describe('allocating receiving addresses', () => {
  let server: TestServer
  let appId: string
  const receiving = new Receiving({ file: 'test', receivingXpub: testXpub(), chains: [base] })
  beforeAll(async () => {
    server = await startTestServer()
    appId = (await server.createKey({ environment: 'production' })).appId
  })
  afterAll(async () => server?.close())

  it('gives 40 allocations made at once 40 different indexes, 0 to 39, and 40 different addresses', async () => {
    const addresses = await Promise.all(
      Array.from({ length: 40 }, () => server.app.transact((tx) => receiving.allocate(tx.db, 'base', { appId, ownerType: 'wallet', ownerId: 'w', currency: undefined }, Date.now()))),
    )
    expect(new Set(addresses).size).toBe(40)
    const rows = await server.app.db.selectFrom('chain_addresses').select(['derivation_index', 'address']).execute()
    expect(rows.map((row) => Number(row.derivation_index)).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i))
    const key = new ReceivingKey(testXpub())
    for (const row of rows) expect(row.address).toBe(key.addressAt(Number(row.derivation_index)))
  })

  it('gives an index back when its transaction rolls back, so none is skipped', async () => {
    await expect(
      server.app.transact(async (tx) => {
        await receiving.allocate(tx.db, 'base', { appId, ownerType: 'wallet', ownerId: 'w', currency: undefined }, Date.now())
        throw new Error('the object it was for was refused')
      }),
    ).rejects.toThrow('refused')
    await server.app.transact((tx) => receiving.allocate(tx.db, 'base', { appId, ownerType: 'wallet', ownerId: 'w', currency: undefined }, Date.now()))
    const max = await server.app.db.selectFrom('chain_addresses').select((eb) => eb.fn.max('derivation_index').as('max')).executeTakeFirstOrThrow()
    expect(Number(max.max)).toBe(40)
  })

  it('says why a chain or a token is off, and refuses to allocate there', async () => {
    expect(receiving.offReason('base', 'usdc')).toBeUndefined()
    expect(receiving.offReason('base', 'eurc')).toBe('live deposits of eurc on base are off: no eurc contract is configured for base')
    expect(receiving.offReason('polygon', 'usdc')).toBe('live deposits on polygon are off: this platform has no configuration for polygon (CHAINS_FILE, docs/chains.md)')
    expect(new Receiving(undefined).offReason('base', undefined)).toMatch(/live deposits on base are off/)
    await expect(server.app.transact((tx) => receiving.allocate(tx.db, 'polygon', { appId, ownerType: 'wallet', ownerId: 'w', currency: undefined }, Date.now()))).rejects.toThrow(/off/)
  })

  it("lets a liquidation address claim only the application's own unassigned address on its chain and currency, once", async () => {
    const address = await server.app.transact((tx) => receiving.allocate(tx.db, 'base', { appId, ownerType: 'unassigned', ownerId: null, currency: 'usdc' }, Date.now()))
    const other = (await server.createKey({ environment: 'production' })).appId
    const claim = (overrides: Partial<{ appId: string; chain: string; currency: string }>) =>
      server.app.transact((tx) => claimReceivingAddress(tx.db, address, { appId, chain: 'base', currency: 'usdc', liquidationAddressId: 'la-1', ...overrides }))
    expect(await claim({ appId: other })).toBe(false)
    expect(await claim({ chain: 'ethereum' })).toBe(false)
    expect(await claim({ currency: 'eurc' })).toBe(false)
    expect(await claim({})).toBe(true)
    expect(await claim({})).toBe(false)
    const row = await server.app.db.selectFrom('chain_addresses').selectAll().where('address', '=', address).executeTakeFirstOrThrow()
    expect(row).toMatchObject({ owner_type: 'liquidation_address', owner_id: 'la-1' })
  })
})
