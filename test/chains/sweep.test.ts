// vitest: sqlite project only — moving deposits on a chain and a token, no database.
import { readFileSync } from 'node:fs'
import solc from 'solc'
import { type Abi, type Address, bytesToHex, type Hex, type LocalAccount } from 'viem'
import { type HDAccount, HDKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ReceivingKey } from '../../src/chains/derivation.js'
import { depositAccountAt, signPermit, submitPermitSweep, SweepError, sweepByPermit, topUpAndTransfer } from '../../src/chains/sweep.js'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { balanceOf, deployToken, mint, TEST_TOKEN_ABI } from '../helpers/test-token.js'

/** The operator's account-level keys (m/44'/60'/0') of a fixed test seed. */
const accountKey = HDKey.fromMasterSeed(new Uint8Array(32).fill(9)).derive("m/44'/60'/0'")
const XPRV = accountKey.privateExtendedKey
const XPUB = accountKey.publicExtendedKey

type ImportAnswer = { contents: string } | { error: string }
const compile: (input: string, callbacks: { import: (path: string) => ImportAnswer }) => string = solc.compile

/** test/fixtures/chain/FiatStyleToken.sol compiled with solc-js (OpenZeppelin from node_modules). */
function compileFiatStyleToken(): { abi: Abi; bytecode: Hex } {
  const source = readFileSync(new URL('../fixtures/chain/FiatStyleToken.sol', import.meta.url), 'utf8')
  const input = {
    language: 'Solidity',
    sources: { 'FiatStyleToken.sol': { content: source } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  }
  const readImport = (path: string): ImportAnswer =>
    path.startsWith('@openzeppelin/contracts/') ? { contents: readFileSync(new URL(`../../node_modules/${path}`, import.meta.url), 'utf8') } : { error: `not importable: ${path}` }
  const output = JSON.parse(compile(JSON.stringify(input), { import: readImport })) as {
    errors?: { severity: string; formattedMessage: string }[]
    contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
  }
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error')
  if (errors.length > 0) throw new Error(errors.map((error) => error.formattedMessage).join('\n'))
  const contract = output.contracts?.['FiatStyleToken.sol']?.FiatStyleToken
  if (contract === undefined) throw new Error('solc produced no FiatStyleToken')
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }
}

/** The private key of receiving index `index`, derived here apart from the code under test, to look for it. */
function privateKeyHex(index: number): string {
  const key = accountKey.deriveChild(0).deriveChild(index).privateKey
  if (key === null) throw new Error('no private key')
  return bytesToHex(key).slice(2)
}

/** Everything an error carries that could end up in a log: messages, stacks and causes, all the way down. */
function errorText(error: unknown): string {
  const parts: string[] = []
  for (let current: unknown = error; current !== undefined && current !== null; ) {
    if (current instanceof Error) {
      parts.push(current.message, current.stack ?? '', JSON.stringify(current, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)))
      current = current.cause
    } else {
      parts.push(String(current))
      break
    }
  }
  return parts.join('\n').toLowerCase()
}

async function rejection(promise: Promise<unknown>): Promise<SweepError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  if (!(error instanceof SweepError)) throw new Error(`expected a SweepError, got ${String(error)}`)
  return error
}

describe('moving deposits on', () => {
  let anvil: Anvil
  let token: Address
  let hot: HDAccount
  let stranger: LocalAccount

  beforeAll(async () => {
    anvil = await startAnvil({ accounts: 3 })
    token = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
    const [, hotAccount, strangerAccount] = anvil.accounts
    if (hotAccount === undefined || strangerAccount === undefined) throw new Error('anvil has too few accounts')
    hot = hotAccount
    stranger = strangerAccount
  }, 60_000)

  afterAll(async () => {
    await anvil?.close()
  })

  const clients = () => ({ publicClient: anvil.publicClient, walletClient: anvil.walletClient })

  it('derives the receiving address of each index from the xprv behind the xpub', () => {
    const receiving = new ReceivingKey(XPUB)
    for (const index of [0, 1, 7, 1000]) expect(depositAccountAt(XPRV, index).address.toLowerCase()).toBe(receiving.addressAt(index))
    expect(() => depositAccountAt(XPUB, 0)).toThrow(/no private key/)
  })

  it('sweeps by permit: the deposit address ends with no tokens and no ETH, the hot wallet gains exactly the amount and pays the gas', async () => {
    const deposit = depositAccountAt(XPRV, 0)
    await mint(anvil, token, deposit.address, 1_234_567n)
    const hotBefore = await balanceOf(anvil, token, hot.address)
    const hotEthBefore = await anvil.publicClient.getBalance({ address: hot.address })

    const sweep = await sweepByPermit({ ...clients(), deposit, hotWallet: hot, token, amount: 1_234_567n })

    expect(await balanceOf(anvil, token, deposit.address)).toBe(0n)
    expect((await balanceOf(anvil, token, hot.address)) - hotBefore).toBe(1_234_567n)
    expect(await anvil.publicClient.getBalance({ address: deposit.address })).toBe(0n)
    expect(await anvil.publicClient.getBalance({ address: hot.address })).toBe(hotEthBefore - sweep.permit.fee - sweep.transferFrom.fee)
    for (const hash of [sweep.permit.hash, sweep.transferFrom.hash]) {
      const transaction = await anvil.publicClient.getTransaction({ hash })
      expect(transaction.from.toLowerCase()).toBe(hot.address.toLowerCase())
    }
    expect(sweep.gasUsed).toBe(sweep.permit.gasUsed + sweep.transferFrom.gasUsed)
    expect(sweep.permit.gasUsed).toBeGreaterThan(21_000n)
    expect(await anvil.publicClient.readContract({ address: token, abi: TEST_TOKEN_ABI, functionName: 'allowance', args: [deposit.address, hot.address] })).toBe(0n)
  })

  describe('a permit the token refuses', () => {
    const index = 1
    const deposit = depositAccountAt(XPRV, index)
    const errors: SweepError[] = []

    beforeAll(async () => {
      await mint(anvil, token, deposit.address, 500_000n)
    })

    async function expectNothingMoved(run: () => Promise<unknown>): Promise<SweepError> {
      const hotBefore = await balanceOf(anvil, token, hot.address)
      const hotNonce = await anvil.publicClient.getTransactionCount({ address: hot.address })
      const permitNonce = await anvil.publicClient.readContract({ address: token, abi: TEST_TOKEN_ABI, functionName: 'nonces', args: [deposit.address] })
      const error = await rejection(run())
      errors.push(error)
      expect(error.moved).toBe(false)
      expect(await balanceOf(anvil, token, deposit.address)).toBe(500_000n)
      expect(await balanceOf(anvil, token, hot.address)).toBe(hotBefore)
      // Nothing was sent: the hot wallet's nonce and the permit nonce are where they were.
      expect(await anvil.publicClient.getTransactionCount({ address: hot.address })).toBe(hotNonce)
      expect(await anvil.publicClient.readContract({ address: token, abi: TEST_TOKEN_ABI, functionName: 'nonces', args: [deposit.address] })).toBe(permitNonce)
      return error
    }

    it('one signed for another spender', async () => {
      const permit = await signPermit(anvil.publicClient, { owner: deposit, spender: stranger.address, token, value: 500_000n })
      const error = await expectNothingMoved(() => submitPermitSweep({ ...clients(), hotWallet: hot, token, permit }))
      expect(error.step).toBe('permit')
      expect(error.message).toMatch(new RegExp(`^sweep of 500000 from ${deposit.address}: the token refused the permit: ERC2612InvalidSigner\\(`))
    })

    it('one past its deadline', async () => {
      const now = (await anvil.publicClient.getBlock()).timestamp
      const error = await expectNothingMoved(() => sweepByPermit({ ...clients(), deposit, hotWallet: hot, token, amount: 500_000n, deadline: now - 1n }))
      expect(error.step).toBe('permit')
      expect(error.message).toBe(`sweep of 500000 from ${deposit.address}: the token refused the permit: ERC2612ExpiredSignature(${now - 1n})`)
    })

    it('more than the address holds is refused before anything is signed', async () => {
      const error = await expectNothingMoved(() => sweepByPermit({ ...clients(), deposit, hotWallet: hot, token, amount: 500_001n }))
      expect(error.step).toBe('check')
      expect(error.message).toBe(`sweep of 500001 from ${deposit.address}: the deposit address holds 500000, less than 500001`)
    })

    it('and no error carries the deposit key, the hot key or the xprv', () => {
      expect(errors).toHaveLength(3)
      const hotKey = hot.getHdKey().privateKey
      if (hotKey === null) throw new Error('the hot wallet has no private key')
      const secrets = [privateKeyHex(index), bytesToHex(hotKey).slice(2), XPRV.toLowerCase()]
      for (const error of errors) for (const secret of secrets) expect(errorText(error)).not.toContain(secret)
    })
  })

  it('tops up and transfers: the hot wallet gains the amount, the deposit address keeps what its transfer did not burn', async () => {
    const deposit = depositAccountAt(XPRV, 2)
    await mint(anvil, token, deposit.address, 777_000n)
    const hotBefore = await balanceOf(anvil, token, hot.address)

    const sweep = await topUpAndTransfer({ ...clients(), deposit, hotWallet: hot, token, amount: 777_000n })

    expect(await balanceOf(anvil, token, deposit.address)).toBe(0n)
    expect((await balanceOf(anvil, token, hot.address)) - hotBefore).toBe(777_000n)
    expect(sweep.topUp.gasUsed).toBe(21_000n)
    expect(sweep.toppedUp).toBeGreaterThan(0n)
    expect(sweep.stranded).toBe(sweep.toppedUp - sweep.transfer.fee)
    expect(await anvil.publicClient.getBalance({ address: deposit.address })).toBe(sweep.stranded)
  })

  describe("a token without EIP-5267, as Circle's FiatToken", () => {
    let fiat: { abi: Abi; bytecode: Hex }

    async function deployFiatStyle(signedVersion: string, announcedVersion: string): Promise<Address> {
      const hash = await anvil.walletClient.deployContract({ account: stranger, abi: fiat.abi, bytecode: fiat.bytecode, args: ['USD Coin', signedVersion, announcedVersion] })
      const receipt = await anvil.publicClient.waitForTransactionReceipt({ hash })
      if (receipt.contractAddress === null || receipt.contractAddress === undefined) throw new Error('not deployed')
      return receipt.contractAddress
    }

    beforeAll(() => {
      fiat = compileFiatStyleToken()
    }, 60_000)

    it('is swept with the domain version its version() announces', async () => {
      const usdc = await deployFiatStyle('2', '2')
      const deposit = depositAccountAt(XPRV, 3)
      await mint(anvil, usdc, deposit.address, 42_000_000n)
      const hotBefore = await balanceOf(anvil, usdc, hot.address)
      await sweepByPermit({ ...clients(), deposit, hotWallet: hot, token: usdc, amount: 42_000_000n })
      expect(await balanceOf(anvil, usdc, deposit.address)).toBe(0n)
      expect((await balanceOf(anvil, usdc, hot.address)) - hotBefore).toBe(42_000_000n)
    })

    it("refuses with the token's own reason", async () => {
      const usdc = await deployFiatStyle('2', '2')
      const deposit = depositAccountAt(XPRV, 4)
      await mint(anvil, usdc, deposit.address, 1_000n)
      const now = (await anvil.publicClient.getBlock()).timestamp
      const error = await rejection(sweepByPermit({ ...clients(), deposit, hotWallet: hot, token: usdc, amount: 1_000n, deadline: now - 1n }))
      expect(error.message).toBe(`sweep of 1000 from ${deposit.address}: the token refused the permit: FiatTokenV2: permit is expired`)
      expect(await balanceOf(anvil, usdc, deposit.address)).toBe(1_000n)
    })

    it('whose version() does not match its DOMAIN_SEPARATOR() is refused before signing', async () => {
      const odd = await deployFiatStyle('2', '3')
      const deposit = depositAccountAt(XPRV, 5)
      await mint(anvil, odd, deposit.address, 1_000n)
      const hotNonce = await anvil.publicClient.getTransactionCount({ address: hot.address })
      const error = await rejection(sweepByPermit({ ...clients(), deposit, hotWallet: hot, token: odd, amount: 1_000n }))
      expect(error.step).toBe('check')
      expect(error.message).toMatch(/DOMAIN_SEPARATOR\(\) is not the one of the domain read from it/)
      expect(await anvil.publicClient.getTransactionCount({ address: hot.address })).toBe(hotNonce)
      expect(await balanceOf(anvil, odd, deposit.address)).toBe(1_000n)
    })
  })
})
