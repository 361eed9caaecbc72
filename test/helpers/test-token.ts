import { readFileSync } from 'node:fs'
import { type Account, type Address, encodeFunctionData, erc20Abi, type Hash, parseAbi, type TransactionReceipt, type TransactionRequest } from 'viem'
import type { TokenArtifact } from '../../scripts/test-token.js'
import type { Anvil } from './anvil.js'

/** The committed build of test/fixtures/chain/TestStablecoin.sol (scripts/build-test-token.ts writes it). */
const artifact = JSON.parse(readFileSync(new URL('../fixtures/chain/TestStablecoin.json', import.meta.url), 'utf8')) as TokenArtifact

/**
 * What the tests call on the token, typed: ERC-20, the test mint and EIP-2612's permit
 * (test/chains/anvil-token-artifact.test.ts checks each entry is in the compiled ABI).
 */
export const TEST_TOKEN_ABI = [
  ...erc20Abi,
  ...parseAbi([
    'function mint(address to, uint256 amount)',
    'function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)',
    'function nonces(address owner) view returns (uint256)',
    'function DOMAIN_SEPARATOR() view returns (bytes32)',
  ]),
] as const

/** Waits for the transaction's receipt and fails if it reverted. */
async function mined(anvil: Anvil, hash: Hash): Promise<TransactionReceipt> {
  const receipt = await anvil.publicClient.waitForTransactionReceipt({ hash, timeout: 30_000 })
  if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`)
  return receipt
}

/** Deploys a TestStablecoin (6 decimals, EIP-2612) from `from` (default: the first account); resolves to its address once mined. */
export async function deployToken(anvil: Anvil, options: { name: string; symbol: string; from?: Account }): Promise<Address> {
  const account = options.from ?? anvil.accounts[0]
  if (account === undefined) throw new Error('anvil has no accounts')
  const hash = await anvil.walletClient.deployContract({ account, abi: artifact.abi, bytecode: artifact.bytecode, args: [options.name, options.symbol] })
  const receipt = await mined(anvil, hash)
  if (receipt.contractAddress === null || receipt.contractAddress === undefined) throw new Error(`deployment ${hash} created no contract`)
  return receipt.contractAddress
}

/** Mints `amount` (in the token's smallest unit) to `to`; the first account pays the gas. */
export async function mint(anvil: Anvil, token: Address, to: Address, amount: bigint): Promise<TransactionReceipt> {
  const account = anvil.accounts[0]
  if (account === undefined) throw new Error('anvil has no accounts')
  return mined(anvil, await anvil.walletClient.writeContract({ account, address: token, abi: TEST_TOKEN_ABI, functionName: 'mint', args: [to, amount] }))
}

/** An ERC-20 transfer of `amount` from `from` to `to`, mined. */
export async function transfer(anvil: Anvil, token: Address, from: Account, to: Address, amount: bigint): Promise<TransactionReceipt> {
  return mined(anvil, await anvil.walletClient.writeContract({ account: from, address: token, abi: TEST_TOKEN_ABI, functionName: 'transfer', args: [to, amount] }))
}

/** The same transfer as a request anvil signs itself, for the new blocks of Anvil.reorg(). */
export function transferRequest(token: Address, from: Address, to: Address, amount: bigint): TransactionRequest {
  return { from, to: token, data: encodeFunctionData({ abi: TEST_TOKEN_ABI, functionName: 'transfer', args: [to, amount] }) }
}

export async function balanceOf(anvil: Anvil, token: Address, owner: Address): Promise<bigint> {
  return anvil.publicClient.readContract({ address: token, abi: TEST_TOKEN_ABI, functionName: 'balanceOf', args: [owner] })
}
