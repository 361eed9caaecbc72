import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeTransaction } from '../../../src/db/database.js'
import { LedgerRepository } from '../../../src/ledger/ledger.js'
import { TOKEN_CONTRACTS, WALLET_CHAINS, walletAccountKey, WalletsRepository } from '../../../src/resources/wallets/repository.js'
import type { WalletList } from '../../../src/resources/wallets/schemas.js'
import { isValidChainAddress } from '../../../src/validation/chain-address.js'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { deposit, storedWallet, withdraw } from './money.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => server.close())

async function walletsOf(key: TestKey): Promise<WalletList['data']> {
  const res = await server.request<WalletList>('GET', '/api/v0/wallets', { key })
  expect(res.status, res.text).toBe(200)
  return res.body.data
}

/** A new application with a production key and a development key. */
async function newApplication(): Promise<{ live: TestKey; sandbox: TestKey }> {
  const live = await server.createKey({ environment: 'production' })
  const sandbox = await server.createKey({ appId: live.appId, environment: 'development' })
  return { live, sandbox }
}

async function storedCount(environment: string, appId: string): Promise<number> {
  const row = await server.app.db
    .selectFrom('wallets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('environment', '=', environment)
    .where('app_id', '=', appId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

const balanceOf = (wallets: WalletList['data'], walletId: string, currency: 'usdc' | 'eurc') =>
  wallets.find((wallet) => wallet.id === walletId)?.balances.find((balance) => balance.currency === currency)?.balance

describe('GET /api/v0/wallets', () => {
  it("a new application's first read makes one wallet per chain, each holding zero USDC and EURC, in the platform docs' shape", async () => {
    const { sandbox } = await newApplication()
    expect(await storedCount('sandbox', sandbox.appId)).toBe(0)
    const res = await server.request<WalletList>('GET', '/api/v0/wallets', { key: sandbox })
    expect(res.status).toBe(200)
    expect(res.body.data.map((wallet) => wallet.chain)).toEqual(['base', 'ethereum', 'solana'])
    for (const wallet of res.body.data) {
      expect(wallet).toEqual({
        id: expect.stringMatching(UUID),
        bridge_id: wallet.id,
        address: expect.any(String),
        chain: wallet.chain,
        balances: [
          { balance: '0.000000', currency: 'usdc', chain: wallet.chain, contract_address: TOKEN_CONTRACTS[wallet.chain].usdc },
          { balance: '0.000000', currency: 'eurc', chain: wallet.chain, contract_address: TOKEN_CONTRACTS[wallet.chain].eurc },
        ],
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
        business: { id: sandbox.appId, name: 'test app' },
        app: { id: sandbox.appId, name: 'test app' },
      })
      expect(isValidChainAddress(wallet.chain, wallet.address ?? '')).toBe(true)
    }
    expect(await storedCount('sandbox', sandbox.appId)).toBe(3)
    // Reading made no ledger account: a missing account is a zero balance.
    const accounts = await server.app.db.selectFrom('ledger_accounts').select('id').where('app_id', '=', sandbox.appId).execute()
    expect(accounts).toEqual([])
  })

  it('a live wallet on a chain that is off shows no address, and says why (this server watches no chain)', async () => {
    const { live } = await newApplication()
    const wallets = await walletsOf(live)
    expect(wallets.map((wallet) => [wallet.chain, wallet.address, wallet.address_unavailable_reason])).toEqual([
      ['base', null, 'live deposits on base are off: this platform has no configuration for base (CHAINS_FILE, docs/chains.md)'],
      ['ethereum', null, 'live deposits on ethereum are off: this platform has no configuration for ethereum (CHAINS_FILE, docs/chains.md)'],
      ['solana', null, 'live deposits on solana are off: this platform receives live money on EVM chains only (docs/chains.md)'],
    ])
    expect(await storedCount('live', live.appId)).toBe(3)
    const stored = await server.app.db.selectFrom('wallets').select('address').where('environment', '=', 'live').where('app_id', '=', live.appId).execute()
    expect(stored.map((row) => row.address)).toEqual([null, null, null])
  })

  it('answers the same wallets, addresses and timestamps on every read', async () => {
    const { live } = await newApplication()
    const first = await walletsOf(live)
    expect(await walletsOf(live)).toEqual(first)
  })

  it("sandbox addresses are valid for their chain and never shared between wallets (live ones: test/chains/live-wallets.test.ts)", async () => {
    const addresses: string[] = []
    for (let i = 0; i < 10; i++) {
      const { sandbox } = await newApplication()
      for (const wallet of await walletsOf(sandbox)) {
        const address = wallet.address ?? ''
        expect(isValidChainAddress(wallet.chain, address), address).toBe(true)
        if (wallet.chain === 'solana') expect(address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
        else expect(address).toMatch(/^0x[0-9a-f]{40}$/)
        addresses.push(address)
      }
    }
    expect(addresses).toHaveLength(30)
    expect(new Set(addresses).size).toBe(30)
  })

  it("a wallet's balances are its available money: posted credits less posted and reserved debits; money on its way in is not counted", async () => {
    const { live } = await newApplication()
    const [base, ethereum] = await walletsOf(live)
    const baseRow = await storedWallet(server.app.db, 'live', live.appId, base?.id ?? '')
    const ethereumRow = await storedWallet(server.app.db, 'live', live.appId, ethereum?.id ?? '')
    await deposit(server.app.db, baseRow, 'usdc', '12.5')
    await deposit(server.app.db, baseRow, 'usdc', '0.000001')
    await deposit(server.app.db, baseRow, 'usdc', '100', 'pending')
    await withdraw(server.app.db, baseRow, 'usdc', '2.25', 'pending')
    await deposit(server.app.db, ethereumRow, 'eurc', '7.000003')
    const wallets = await walletsOf(live)
    expect(balanceOf(wallets, base?.id ?? '', 'usdc')).toBe('10.250001')
    expect(balanceOf(wallets, base?.id ?? '', 'eurc')).toBe('0.000000')
    expect(balanceOf(wallets, ethereum?.id ?? '', 'eurc')).toBe('7.000003')
    expect(balanceOf(wallets, ethereum?.id ?? '', 'usdc')).toBe('0.000000')
    expect(wallets[2]?.balances.map((balance) => balance.balance)).toEqual(['0.000000', '0.000000'])
  })

  it('amounts past 2^63 units are exact decimal strings', async () => {
    const { live } = await newApplication()
    const [base] = await walletsOf(live)
    const row = await storedWallet(server.app.db, 'live', live.appId, base?.id ?? '')
    await deposit(server.app.db, row, 'usdc', '9223372036854.775808')
    await deposit(server.app.db, row, 'usdc', '0.000001')
    expect(balanceOf(await walletsOf(live), base?.id ?? '', 'usdc')).toBe('9223372036854.775809')
  })

  it('a development key sees only sandbox wallets and money, a production key only live ones', async () => {
    const { live, sandbox } = await newApplication()
    const liveWallets = await walletsOf(live)
    const sandboxWallets = await walletsOf(sandbox)
    expect(sandboxWallets.map((wallet) => wallet.chain)).toEqual(['base', 'ethereum', 'solana'])
    const liveIds = liveWallets.map((wallet) => wallet.id)
    expect(sandboxWallets.filter((wallet) => liveIds.includes(wallet.id))).toEqual([])
    expect(await storedCount('live', live.appId)).toBe(3)
    expect(await storedCount('sandbox', live.appId)).toBe(3)

    // Sandbox money stays in the sandbox...
    await deposit(server.app.db, await storedWallet(server.app.db, 'sandbox', live.appId, sandboxWallets[0]?.id ?? ''), 'usdc', '5')
    expect(balanceOf(await walletsOf(sandbox), sandboxWallets[0]?.id ?? '', 'usdc')).toBe('5.000000')
    expect((await walletsOf(live)).flatMap((wallet) => wallet.balances.map((balance) => balance.balance))).toEqual(Array(6).fill('0.000000'))
    // ...and live money stays live.
    await deposit(server.app.db, await storedWallet(server.app.db, 'live', live.appId, liveWallets[1]?.id ?? ''), 'eurc', '3')
    expect(balanceOf(await walletsOf(live), liveWallets[1]?.id ?? '', 'eurc')).toBe('3.000000')
    expect((await walletsOf(sandbox)).map((wallet) => wallet.balances.map((balance) => balance.balance))).toEqual([
      ['5.000000', '0.000000'],
      ['0.000000', '0.000000'],
      ['0.000000', '0.000000'],
    ])
  })

  it("another application's wallets and money are never visible", async () => {
    const owner = await newApplication()
    const other = await newApplication()
    const ownerWallets = await walletsOf(owner.sandbox)
    await deposit(server.app.db, await storedWallet(server.app.db, 'sandbox', owner.live.appId, ownerWallets[0]?.id ?? ''), 'usdc', '1')
    const otherWallets = await walletsOf(other.sandbox)
    const ownerIds = ownerWallets.map((wallet) => wallet.id)
    const ownerAddresses = ownerWallets.map((wallet) => wallet.address)
    expect(otherWallets.filter((wallet) => ownerIds.includes(wallet.id) || ownerAddresses.includes(wallet.address))).toEqual([])
    expect(otherWallets.flatMap((wallet) => [wallet.app.id, wallet.business.id])).toEqual(Array(6).fill(other.live.appId))
    expect(otherWallets.flatMap((wallet) => wallet.balances.map((balance) => balance.balance))).toEqual(Array(6).fill('0.000000'))
  })

  it('concurrent first reads make exactly one wallet per chain, and all of them answer the same wallets', async () => {
    const { live, sandbox } = await newApplication()
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => server.request<WalletList>('GET', '/api/v0/wallets', { key: i % 2 === 0 ? live : sandbox })))
    expect(answers.map((answer) => answer.status)).toEqual(Array(24).fill(200))
    const idsOf = (i: number) => answers[i]?.body.data.map((wallet) => wallet.id)
    for (let i = 0; i < 24; i++) expect(idsOf(i)).toEqual(idsOf(i % 2))
    expect(idsOf(0)).not.toEqual(idsOf(1))
    expect(await storedCount('live', live.appId)).toBe(3)
    expect(await storedCount('sandbox', live.appId)).toBe(3)
  })

  it('403 without the wallet:read scope, and the scope alone is enough', async () => {
    const { live } = await newApplication()
    const without = await server.createKey({ appId: live.appId, scopes: ['balance:read'] })
    const res = await server.request('GET', '/api/v0/wallets', { key: without })
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ message: 'Missing required scope', details: 'This API key lacks the required scope: wallet:read' })
    const only = await server.createKey({ appId: live.appId, scopes: ['wallet:read'] })
    expect(await walletsOf(only)).toEqual(await walletsOf(live))
  })
})

describe('WalletsRepository', () => {
  it('ensure, run concurrently in separate write transactions, makes one wallet per chain and every call answers the same three', async () => {
    const appId = (await server.app.repos.apps.createApp('concurrent')).id
    const results = await Promise.all(
      Array.from({ length: 16 }, () => writeTransaction(server.app.db, (tx) => new WalletsRepository(tx).ensure('sandbox', appId))),
    )
    const ids = results.map((wallets) => wallets.map((wallet) => wallet.id))
    for (const each of ids) expect(each).toEqual(ids[0])
    expect(results[0]?.map((wallet) => wallet.chain)).toEqual([...WALLET_CHAINS])
    expect(await storedCount('sandbox', appId)).toBe(3)
    expect(await storedCount('live', appId)).toBe(0)
  })

  it("find: the application's wallet in its environment (any letter case), undefined for another application's, another environment's, an unknown or a malformed id", async () => {
    const appId = (await server.app.repos.apps.createApp('finder')).id
    const otherAppId = (await server.app.repos.apps.createApp('other')).id
    const [wallet] = await writeTransaction(server.app.db, (tx) => new WalletsRepository(tx).ensure('live', appId))
    const id = wallet?.id ?? ''
    const repository = new WalletsRepository(server.app.db)
    expect(await repository.find('live', appId, id)).toEqual(wallet)
    expect(await repository.find('live', appId, id.toUpperCase())).toEqual(wallet)
    expect(await repository.find('sandbox', appId, id)).toBeUndefined()
    expect(await repository.find('live', otherAppId, id)).toBeUndefined()
    expect(await repository.find('live', appId, MISSING_UUID)).toBeUndefined()
    expect(await repository.find('live', appId, 'ext_wallet_1')).toBeUndefined()
    expect(await repository.find('live', appId, '')).toBeUndefined()
  })

  it("walletAccountKey names the wallet's own ledger account per currency, in its environment", async () => {
    const appId = (await server.app.repos.apps.createApp('keys')).id
    const [wallet] = await writeTransaction(server.app.db, (tx) => new WalletsRepository(tx).ensure('sandbox', appId))
    if (wallet === undefined) throw new Error('no wallet')
    expect(walletAccountKey(wallet, 'eurc')).toEqual({ environment: 'sandbox', appId, kind: 'wallet', currency: 'eurc', reference: wallet.id })
    const usdc = await writeTransaction(server.app.db, (tx) => new LedgerRepository(tx).account(walletAccountKey(wallet, 'usdc')))
    const eurc = await writeTransaction(server.app.db, (tx) => new LedgerRepository(tx).account(walletAccountKey(wallet, 'eurc')))
    expect(usdc).not.toBe(eurc)
    expect(await writeTransaction(server.app.db, (tx) => new LedgerRepository(tx).account(walletAccountKey(wallet, 'usdc')))).toBe(usdc)
  })

  it('holdings reads zero for accounts never made, and the stored sums of those that exist', async () => {
    const appId = (await server.app.repos.apps.createApp('holdings')).id
    const wallets = await writeTransaction(server.app.db, (tx) => new WalletsRepository(tx).ensure('live', appId))
    const solana = wallets[2]
    if (solana === undefined) throw new Error('no wallet')
    await deposit(server.app.db, solana, 'eurc', '4', 'pending')
    await deposit(server.app.db, solana, 'eurc', '10')
    await withdraw(server.app.db, solana, 'eurc', '1.5', 'pending')
    const holdings = await new WalletsRepository(server.app.db).holdings([solana], ['usdc', 'eurc'])
    expect(holdings).toEqual([
      { wallet: solana, currency: 'usdc', available: 0n, pendingIncoming: 0n, pendingOutgoing: 0n },
      { wallet: solana, currency: 'eurc', available: 8_500_000n, pendingIncoming: 4_000_000n, pendingOutgoing: 1_500_000n },
    ])
    expect(await new WalletsRepository(server.app.db).holdings([], ['usdc'])).toEqual([])
  })
})

describe('token contracts', () => {
  it('each is a valid address of its chain (EIP-55 checksums included)', () => {
    for (const chain of WALLET_CHAINS) {
      for (const currency of ['usdc', 'eurc'] as const) expect(isValidChainAddress(chain, TOKEN_CONTRACTS[chain][currency]), `${chain} ${currency}`).toBe(true)
    }
  })
})
