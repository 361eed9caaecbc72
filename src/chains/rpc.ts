import { createPublicClient, erc20Abi, http, parseAbiItem, type PublicClient, type TypedDataDomain } from 'viem'
import type { ChainConfig } from './config.js'
import { permitDomain, SWEEP_TOKEN_ABI } from './sweep.js'

/** The ERC-20 Transfer event, the one log the watcher reads. */
export const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)')

const DECIMALS_ABI = [{ type: 'function', name: 'decimals', stateMutability: 'view', inputs: [], outputs: [{ type: 'uint8' }] }] as const

/** A fault of every RPC URL of a chain: the last one's, with which URL it was. */
export class RpcUnavailable extends Error {}

/** One token transfer as the chain logged it. */
export interface TransferLog {
  token: string
  from: string
  to: string
  value: bigint
  blockNumber: number
  blockHash: string
  txHash: string
  logIndex: number
}

export interface BlockHeader {
  number: number
  hash: string
  parentHash: string
}

/** What one URL's fault says, without the URL's credentials (an API key in a path or query is common). */
function describeFault(url: string, error: unknown): string {
  const { origin } = new URL(url)
  const message = error instanceof Error ? (error.message.split('\n')[0] ?? error.name) : String(error)
  return `${origin}: ${message.replaceAll(url, origin).slice(0, 300)}`
}

/**
 * A chain's RPC endpoints: each call goes to the current URL, and on a fault (an error answer, a
 * timeout, a refused connection) to the next, in order; the URL that answered stays current. Each
 * call is bounded by the chain's rpcTimeoutMs, so nothing waits on a node that hangs.
 */
export class ChainRpc {
  private readonly clients: readonly PublicClient[]
  private current = 0
  /** the last fault seen, for `chains status` and /metrics; cleared by nothing: it has a time */
  lastFault: { message: string; at: number } | undefined

  constructor(private readonly config: ChainConfig) {
    this.clients = config.rpcUrls.map((url) => createPublicClient({ transport: http(url, { timeout: config.rpcTimeoutMs, retryCount: 0 }) }))
  }

  private async call<T>(what: (client: PublicClient) => Promise<T>): Promise<T> {
    let fault = ''
    for (let tried = 0; tried < this.clients.length; tried++) {
      const index = (this.current + tried) % this.clients.length
      try {
        const result = await what(this.clients[index] as PublicClient)
        this.current = index
        return result
      } catch (error) {
        fault = describeFault(this.config.rpcUrls[index] as string, error)
        this.lastFault = { message: fault, at: Date.now() }
      }
    }
    throw new RpcUnavailable(`${this.config.chain}: no RPC URL answered (${fault})`)
  }

  /** The URL calls go to now, without its credentials (for messages). */
  currentOrigin(): string {
    return new URL(this.config.rpcUrls[this.current] as string).origin
  }

  /**
   * Moves on to the next URL: the current one answers, but with a head that does not move (a node
   * that lags or is stuck syncing), which no single call can see.
   */
  moveOn(reason: string): void {
    this.lastFault = { message: `${this.currentOrigin()}: ${reason}`, at: Date.now() }
    this.current = (this.current + 1) % this.clients.length
  }

  chainId(): Promise<number> {
    return this.call((client) => client.getChainId())
  }

  async head(): Promise<number> {
    return Number(await this.call((client) => client.getBlockNumber({ cacheTime: 0 })))
  }

  /** The header of block `number`, or undefined when the node has no such block (yet, or any more). */
  async block(number: number): Promise<BlockHeader | undefined> {
    const block = await this.call((client) =>
      client.getBlock({ blockNumber: BigInt(number) }).catch((error: unknown) => {
        if (error instanceof Error && error.name === 'BlockNotFoundError') return undefined
        throw error
      }),
    )
    if (block === undefined || block.hash === null) return undefined
    return { number, hash: block.hash.toLowerCase(), parentHash: block.parentHash.toLowerCase() }
  }

  async decimals(token: string): Promise<number> {
    return Number(await this.call((client) => client.readContract({ address: token as `0x${string}`, abi: DECIMALS_ABI, functionName: 'decimals' })))
  }

  /** `owner`'s balance of the token, in its smallest unit. */
  tokenBalance(token: string, owner: string): Promise<bigint> {
    return this.call((client) => client.readContract({ address: token as `0x${string}`, abi: erc20Abi, functionName: 'balanceOf', args: [owner as `0x${string}`] }))
  }

  /** `address`'s balance of the chain's own coin (what pays gas), in wei. */
  gasBalance(address: string): Promise<bigint> {
    return this.call((client) => client.getBalance({ address: address as `0x${string}` }))
  }

  /** The number of transactions `address` has sent, mined only ('latest') or counting the node's pool ('pending'). */
  async nonceOf(address: string, blockTag: 'latest' | 'pending'): Promise<number> {
    return this.call((client) => client.getTransactionCount({ address: address as `0x${string}`, blockTag }))
  }

  /** The fees a transaction bids now (EIP-1559). */
  fees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    return this.call((client) => client.estimateFeesPerGas())
  }

  /** The gas the call takes, or why the contract refuses it (a revert is an answer, not a fault of the node). */
  estimateGas(request: { account: string; to: string; data: `0x${string}` }): Promise<bigint | { reverted: string }> {
    return this.call((client) =>
      client.estimateGas({ account: request.account as `0x${string}`, to: request.to as `0x${string}`, data: request.data }).catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error)
        if (/revert/i.test(message)) return { reverted: (message.split('\n').find((line) => /revert/i.test(line)) ?? 'execution reverted').replace(/[\u0000-\u001f]+/g, '').trim().slice(0, 300) }
        throw error
      }),
    )
  }

  /**
   * Broadcasts a signed transaction. A node that already has it, or has already mined its nonce,
   * is not a fault: whether it was ours is read from the receipts (src/chains/sender.ts).
   */
  async sendRaw(raw: `0x${string}`): Promise<void> {
    try {
      await this.call((client) => client.sendRawTransaction({ serializedTransaction: raw }))
    } catch (error) {
      if (error instanceof RpcUnavailable && /already known|known transaction|nonce too low|lower than the current nonce|already imported|underpriced/i.test(error.message)) return
      throw error
    }
  }

  /** What a permit of `owner` for `token` is signed with (sweep.ts): the token's EIP-712 domain, the owner's next permit nonce, and the head block's time. */
  permitTerms(token: string, owner: string): Promise<{ domain: TypedDataDomain; nonce: bigint; headTime: bigint }> {
    return this.call(async (client) => {
      const domain = await permitDomain(client, token as `0x${string}`)
      const nonce = await client.readContract({ address: token as `0x${string}`, abi: SWEEP_TOKEN_ABI, functionName: 'nonces', args: [owner as `0x${string}`] })
      const head = await client.getBlock({ blockTag: 'latest' })
      return { domain, nonce, headTime: head.timestamp }
    })
  }

  /** The receipt of `hash`, or undefined while it is not mined (or no longer is, after a reorg). */
  async receipt(hash: string): Promise<{ blockNumber: number; status: 'success' | 'reverted' } | undefined> {
    const receipt = await this.call((client) =>
      client.getTransactionReceipt({ hash: hash as `0x${string}` }).catch((error: unknown) => {
        if (error instanceof Error && error.name === 'TransactionReceiptNotFoundError') return undefined
        throw error
      }),
    )
    return receipt === undefined ? undefined : { blockNumber: Number(receipt.blockNumber), status: receipt.status }
  }

  /** Every Transfer log of `tokens` in blocks from..to (inclusive), in chain order. */
  async transfers(tokens: readonly string[], from: number, to: number): Promise<TransferLog[]> {
    const logs = await this.call((client) =>
      client.getLogs({ address: tokens.map((token) => token as `0x${string}`), event: TRANSFER_EVENT, fromBlock: BigInt(from), toBlock: BigInt(to), strict: true }),
    )
    return logs.flatMap((log) =>
      log.blockHash === null || log.transactionHash === null || log.logIndex === null || log.blockNumber === null
        ? []
        : [
            {
              token: log.address.toLowerCase(),
              from: log.args.from.toLowerCase(),
              to: log.args.to.toLowerCase(),
              value: log.args.value,
              blockNumber: Number(log.blockNumber),
              blockHash: log.blockHash.toLowerCase(),
              txHash: log.transactionHash.toLowerCase(),
              logIndex: log.logIndex,
            },
          ],
    )
  }
}
