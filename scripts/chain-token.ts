/**
 * A 6-decimal test stablecoin on a local node (anvil), for trying live receiving
 * (docs/chains.md#walk-through): the committed build test/fixtures/chain/TestStablecoin.json,
 * deployed and minted from anvil's first published account (a well-known key: local nodes only).
 *
 *   npx tsx scripts/chain-token.ts deploy                 # prints the contract's address
 *   npx tsx scripts/chain-token.ts send TOKEN TO AMOUNT   # mints AMOUNT (decimal, e.g. 25.50) to TO
 *   npx tsx scripts/chain-token.ts balance TOKEN OWNER    # prints OWNER's balanceOf, as a decimal
 *
 * RPC_URL: the node (default http://127.0.0.1:8545).
 */
import { readFileSync } from 'node:fs'
import { type Address, createPublicClient, createWalletClient, formatUnits, http, isAddress, parseAbi, parseUnits } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { foundry } from 'viem/chains'
import type { TokenArtifact } from './test-token.js'

/** anvil's first account: its key is published with anvil, so this never touches a real chain's funds. */
const ANVIL_FIRST_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'

async function main(args: string[]): Promise<void> {
  const transport = http(process.env.RPC_URL ?? 'http://127.0.0.1:8545')
  const account = privateKeyToAccount(ANVIL_FIRST_KEY)
  const publicClient = createPublicClient({ chain: foundry, transport })
  const chainId = await publicClient.getChainId()
  if (chainId !== foundry.id) throw new Error(`the node answers chain id ${chainId}: this script is for a local anvil (${foundry.id}) only`)
  const wallet = createWalletClient({ account, chain: foundry, transport })
  const [command, ...rest] = args
  if (command === 'deploy' && rest.length === 0) {
    const artifact = JSON.parse(readFileSync(new URL('../test/fixtures/chain/TestStablecoin.json', import.meta.url), 'utf8')) as TokenArtifact
    const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args: ['USD Coin (test)', 'USDC'] })
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    if (receipt.contractAddress === null || receipt.contractAddress === undefined) throw new Error(`deployment ${hash} created no contract`)
    process.stdout.write(`${receipt.contractAddress.toLowerCase()}\n`)
    return
  }
  const [token, to, amount] = rest
  if (command === 'balance' && token !== undefined && to !== undefined && rest.length === 2 && isAddress(token) && isAddress(to)) {
    const units = await publicClient.readContract({ address: token as Address, abi: parseAbi(['function balanceOf(address owner) view returns (uint256)']), functionName: 'balanceOf', args: [to as Address] })
    process.stdout.write(`${formatUnits(units, 6)}\n`)
    return
  }
  if (command === 'send' && token !== undefined && to !== undefined && amount !== undefined && rest.length === 3 && isAddress(token) && isAddress(to) && /^\d+(\.\d{1,6})?$/.test(amount)) {
    const hash = await wallet.writeContract({ address: token as Address, abi: parseAbi(['function mint(address to, uint256 amount)']), functionName: 'mint', args: [to as Address, parseUnits(amount, 6)] })
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`)
    process.stdout.write(`${hash} in block ${receipt.blockNumber}\n`)
    return
  }
  throw new Error('usage: chain-token.ts deploy | chain-token.ts send TOKEN_ADDRESS TO_ADDRESS AMOUNT (up to 6 decimals) | chain-token.ts balance TOKEN_ADDRESS OWNER')
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`chain-token: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
