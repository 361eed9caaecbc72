// vitest: sqlite project only — the anvil harness's own tests: a chain and a token, no database.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type Address, createPublicClient, http, parseAbiItem } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Anvil, startAnvil } from '../helpers/anvil.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import { balanceOf, deployToken, mint, TEST_TOKEN_ABI, transfer, transferRequest } from '../helpers/test-token.js'
import { cleanUp, tempDir, waitUntil } from '../processes.js'

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)')

/** Whether the process runs (a zombie, dead but not yet reaped by whoever inherited it, does not). */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z'
  } catch {
    return false
  }
}

function account(anvil: Anvil, index: number) {
  const found = anvil.accounts[index]
  if (found === undefined) throw new Error(`no account ${index}`)
  return found
}

describe('the anvil harness', () => {
  let anvil: Anvil
  let usdc: Address
  let sender: ReturnType<typeof account>
  let receiver: Address

  beforeAll(async () => {
    anvil = await startAnvil()
    usdc = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
    sender = account(anvil, 1)
    receiver = account(anvil, 2).address
    await mint(anvil, usdc, sender.address, 1_000_000_000_000n)
  })
  afterAll(async () => {
    await anvil?.close()
  })

  it('starts a real node on 127.0.0.1 with funded accounts', async () => {
    expect(anvil.url).toBe(`http://127.0.0.1:${anvil.port}`)
    expect(await anvil.rpc('eth_chainId', [])).toBe('0x7a69')
    expect(anvil.accounts).toHaveLength(10)
    expect(anvil.accounts[0]?.address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')
    expect(await anvil.publicClient.getBalance({ address: account(anvil, 9).address })).toBe(10_000n * 10n ** 18n)
  })

  it('deploys an ERC-20 with 6 decimals, its name and symbol from the constructor', async () => {
    const eurc = await deployToken(anvil, { name: 'Euro Coin', symbol: 'EURC' })
    for (const [token, name, symbol] of [[usdc, 'USD Coin', 'USDC'], [eurc, 'Euro Coin', 'EURC']] as const) {
      expect(await anvil.publicClient.readContract({ address: token, abi: TEST_TOKEN_ABI, functionName: 'decimals' })).toBe(6)
      expect(await anvil.publicClient.readContract({ address: token, abi: TEST_TOKEN_ABI, functionName: 'name' })).toBe(name)
      expect(await anvil.publicClient.readContract({ address: token, abi: TEST_TOKEN_ABI, functionName: 'symbol' })).toBe(symbol)
    }
  })

  it('a transfer emits a Transfer log that eth_getLogs reads back, and balances move exactly', async () => {
    const [senderBefore, receiverBefore] = [await balanceOf(anvil, usdc, sender.address), await balanceOf(anvil, usdc, receiver)]
    const receipt = await transfer(anvil, usdc, sender, receiver, 123_456_789n)
    const logs = await anvil.publicClient.getLogs({ address: usdc, event: TRANSFER, fromBlock: receipt.blockNumber, toBlock: receipt.blockNumber })
    expect(logs).toHaveLength(1)
    expect(logs[0]?.args).toEqual({ from: sender.address, to: receiver, value: 123_456_789n })
    expect(logs[0]?.transactionHash).toBe(receipt.transactionHash)
    expect(logs[0]?.blockHash).toBe(receipt.blockHash)
    expect(await balanceOf(anvil, usdc, sender.address)).toBe(senderBefore - 123_456_789n)
    expect(await balanceOf(anvil, usdc, receiver)).toBe(receiverBefore + 123_456_789n)
  })

  it('a reorg removes a mined transfer: its log is gone, the block hash at its height changes, the balance is back', async () => {
    const before = await balanceOf(anvil, usdc, receiver)
    const receipt = await transfer(anvil, usdc, sender, receiver, 5_000_000n)
    await anvil.mine(2)
    const head = await anvil.publicClient.getBlockNumber()
    await anvil.reorg(3)
    expect(await anvil.publicClient.getBlockNumber()).toBe(head)
    expect((await anvil.publicClient.getBlock({ blockNumber: receipt.blockNumber })).hash).not.toBe(receipt.blockHash)
    expect(await anvil.publicClient.getLogs({ address: usdc, event: TRANSFER, fromBlock: receipt.blockNumber, toBlock: head })).toEqual([])
    expect(await anvil.rpc('eth_getTransactionReceipt', [receipt.transactionHash])).toBeNull()
    expect(await balanceOf(anvil, usdc, receiver)).toBe(before)
  })

  it('a reorg can put a transfer into a different block of the new branch', async () => {
    const before = await balanceOf(anvil, usdc, receiver)
    const receipt = await transfer(anvil, usdc, sender, receiver, 7_000_000n)
    await anvil.mine(2)
    // The common ancestor is the block before the transfer's; the new branch carries it one block later.
    await anvil.reorg(3, [{ transaction: transferRequest(usdc, sender.address, receiver, 7_000_000n), block: 1 }])
    const logs = await anvil.publicClient.getLogs({ address: usdc, event: TRANSFER, fromBlock: receipt.blockNumber, toBlock: receipt.blockNumber + 2n })
    expect(logs).toHaveLength(1)
    expect(logs[0]?.blockNumber).toBe(receipt.blockNumber + 1n)
    expect(logs[0]?.args.value).toBe(7_000_000n)
    expect(await balanceOf(anvil, usdc, receiver)).toBe(before + 7_000_000n)
  })

  it('snapshot and revert take the chain back, and the next block at that height is another one', async () => {
    const id = await anvil.snapshot()
    const height = await anvil.publicClient.getBlockNumber()
    const receipt = await transfer(anvil, usdc, sender, receiver, 1n)
    await anvil.revert(id)
    expect(await anvil.publicClient.getBlockNumber()).toBe(height)
    await anvil.mine()
    expect((await anvil.publicClient.getBlock({ blockNumber: receipt.blockNumber })).hash).not.toBe(receipt.blockHash)
    expect(await anvil.publicClient.getLogs({ address: usdc, event: TRANSFER, fromBlock: receipt.blockNumber, toBlock: receipt.blockNumber })).toEqual([])
  })

  it('a TcpProxy in front of the node cuts and restores its RPC', async () => {
    const proxy = await TcpProxy.start('127.0.0.1', anvil.port)
    try {
      const client = createPublicClient({ chain: anvil.chain, transport: http(proxy.urlFor(anvil.url), { retryCount: 0 }), cacheTime: 0 })
      const head = await anvil.publicClient.getBlockNumber()
      expect(await client.getBlockNumber()).toBe(head)
      proxy.setMode('refuse')
      await expect(client.getBlockNumber()).rejects.toThrow()
      proxy.setMode('pass')
      expect(await client.getBlockNumber()).toBe(head)
    } finally {
      await proxy.close()
    }
  })

  for (const how of ['stop', 'kill'] as const) {
    it(`${how === 'stop' ? 'SIGTERM' : 'kill -9'} then restart: the same port, blocks, logs and balances, and it goes on`, async () => {
      const receipt = await transfer(anvil, usdc, sender, receiver, 42n)
      const head = await anvil.publicClient.getBlock()
      const balance = await balanceOf(anvil, usdc, receiver)
      const pid = anvil.pid
      if (how === 'stop') await anvil.stop()
      else await anvil.kill()
      expect(alive(pid)).toBe(false)
      await expect(anvil.rpc('eth_blockNumber', [])).rejects.toThrow()
      await anvil.restart()
      expect(anvil.pid).not.toBe(pid)
      expect((await anvil.publicClient.getBlock()).hash).toBe(head.hash)
      const logs = await anvil.publicClient.getLogs({ address: usdc, event: TRANSFER, fromBlock: receipt.blockNumber, toBlock: receipt.blockNumber })
      expect(logs.map((log) => log.transactionHash)).toEqual([receipt.transactionHash])
      expect(await balanceOf(anvil, usdc, receiver)).toBe(balance)
      await transfer(anvil, usdc, sender, receiver, 1n)
      expect(await balanceOf(anvil, usdc, receiver)).toBe(balance + 1n)
    })
  }
})

describe('anvil options', () => {
  it('a chain id of its own and interval mining: blocks come without transactions, a transfer lands in the next one', async () => {
    const base = await startAnvil({ chainId: 8453, blockTime: 0.25 })
    try {
      expect(await base.rpc('eth_chainId', [])).toBe('0x2105')
      const start = await base.publicClient.getBlockNumber()
      await waitUntil('two interval blocks', async () => ((await base.publicClient.getBlockNumber()) >= start + 2n ? true : undefined), 10_000)
      const token = await deployToken(base, { name: 'USD Coin', symbol: 'USDC' })
      await mint(base, token, account(base, 1).address, 10n)
      const receipt = await transfer(base, token, account(base, 1), account(base, 2).address, 10n)
      expect(receipt.status).toBe('success')
      expect(await balanceOf(base, token, account(base, 2).address)).toBe(10n)
    } finally {
      const pid = base.pid
      await base.close()
      expect(alive(pid)).toBe(false)
    }
  })
})

describe('no node left behind', () => {
  const owner = fileURLToPath(new URL('../fixtures/chain/anvil-owner.ts', import.meta.url))
  // A SIGKILLed owner cannot remove the node's state directory: it is made in one of ours.
  afterAll(cleanUp)

  for (const end of ['killed with SIGKILL', 'exiting without close()'] as const) {
    it(`when the process that started it ends: ${end}`, async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', owner, ...(end === 'exiting without close()' ? ['exit'] : [])], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, TMPDIR: tempDir('devplatform-anvil-owner-') },
      })
      let out = ''
      let err = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      try {
        const pid = await waitUntil(`the owner to print the node's pid (stderr: ${err})`, () => (/^\d+\n/.test(out) ? Number(out.trim()) : undefined), 20_000)
        if (end === 'killed with SIGKILL') {
          expect(alive(pid)).toBe(true)
          child.kill('SIGKILL')
        }
        await exited
        await waitUntil('the node to be gone', () => (alive(pid) ? undefined : true), 5_000)
      } finally {
        child.kill('SIGKILL')
      }
    })
  }
})
