import {
  type Address,
  BaseError,
  type Chain,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  erc20Abi,
  type Hash,
  domainSeparator,
  type Hex,
  type LocalAccount,
  parseAbi,
  parseSignature,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
  type TypedDataDomain,
  type WalletClient,
} from 'viem'
import { HDKey, privateKeyToAccount } from 'viem/accounts'
import { MAX_DERIVATION_INDEX } from './derivation.js'

/**
 * Moving a deposit from its receiving address to the hot wallet (docs/chains.md, "Moving deposits
 * on"). The chosen way is EIP-2612: the deposit key signs a permit for the hot wallet, which
 * submits `permit` and `transferFrom` and pays their gas, so no ETH ever sits on a receiving
 * address. `topUpAndTransfer` is the other way (gas sent to the deposit address, which then
 * transfers), kept for bench:sweep's comparison.
 *
 * Keys come in as viem LocalAccounts and are only ever asked to sign: nothing here reads, logs or
 * returns key material, and errors are built from the token's answer, not from viem's request dumps.
 */

/** What the sweep calls on the token: ERC-20, EIP-2612, EIP-5267 and the errors that name a refusal. */
export const SWEEP_TOKEN_ABI = [
  ...erc20Abi,
  ...parseAbi([
    'function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)',
    'function nonces(address owner) view returns (uint256)',
    'function DOMAIN_SEPARATOR() view returns (bytes32)',
    'function version() view returns (string)',
    'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
    'error ERC2612ExpiredSignature(uint256 deadline)',
    'error ERC2612InvalidSigner(address signer, address owner)',
    'error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)',
    'error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)',
  ]),
] as const

/** EIP-2612's typed data. */
export const PERMIT_TYPES = {
  Permit: [
    { name: 'owner', type: 'address' },
    { name: 'spender', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const

/** How long a permit the sweep signs stays valid, from the head block's time. */
export const DEFAULT_PERMIT_LIFETIME_SECONDS = 600n

export interface ChainClients {
  publicClient: PublicClient<Transport, Chain>
  walletClient: WalletClient<Transport, Chain>
}

export interface SweepRequest extends ChainClients {
  /** The receiving address's key (derived by the caller from the operator's xprv). */
  deposit: LocalAccount
  /** The account that receives the tokens and pays the gas. */
  hotWallet: LocalAccount
  token: Address
  /** In the token's smallest unit. */
  amount: bigint
  /** Waiting for each receipt, at most (default 60 s). */
  receiptTimeoutMs?: number
}

/** A signed EIP-2612 permit, what the deposit key gives the hot wallet. */
export interface SignedPermit {
  owner: Address
  spender: Address
  value: bigint
  nonce: bigint
  deadline: bigint
  signature: Hex
}

export interface TransactionCost {
  hash: Hash
  gasUsed: bigint
  /** Wei paid: gas used × effective gas price. */
  fee: bigint
}

export interface PermitSweep {
  permit: TransactionCost
  transferFrom: TransactionCost
  /** Both transactions' gas, all paid by the hot wallet. */
  gasUsed: bigint
}

export interface TopUpSweep {
  /** Hash '0x' and no gas when the address already held enough. */
  topUp: TransactionCost
  transfer: TransactionCost
  /** The ETH the hot wallet sent (0 when the address already held enough). */
  toppedUp: bigint
  /** Wei left on the deposit address after its transfer: top-up not burnt as gas. */
  stranded: bigint
  gasUsed: bigint
}

export type SweepStep = 'check' | 'permit' | 'transferFrom' | 'top_up' | 'transfer'

/** A sweep that did not happen, or stopped after `step`'s transaction; `moved` says whether the tokens left the deposit address. */
export class SweepError extends Error {
  constructor(
    message: string,
    readonly step: SweepStep,
    readonly moved: boolean,
  ) {
    super(message)
    this.name = 'SweepError'
  }
}

/**
 * The account of receiving index `index`, from the operator's account-level extended private key
 * (m/44'/60'/0', the xprv behind CHAINS_FILE's receivingXpub): the key at m/44'/60'/0'/0/index.
 */
export function depositAccountAt(accountXprv: string, index: number): LocalAccount {
  if (!Number.isSafeInteger(index) || index < 0 || index > MAX_DERIVATION_INDEX) throw new RangeError(`derivation index out of range: ${index}`)
  let root: HDKey
  try {
    root = HDKey.fromExtendedKey(accountXprv)
  } catch {
    // The parser's message can quote its input.
    throw new Error('the account-level extended private key is not a valid xprv')
  }
  const privateKey = root.deriveChild(0).deriveChild(index).privateKey
  if (privateKey === null) throw new Error('the account-level extended key holds no private key (an xpub was given)')
  return privateKeyToAccount(`0x${Buffer.from(privateKey).toString('hex')}`)
}

/** The reason a call or transaction was refused, from the node's answer only (never the request, which carries signatures). */
function refusal(error: unknown): string {
  if (error instanceof BaseError) {
    const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError)
    if (reverted instanceof ContractFunctionRevertedError) {
      // Error(string), FiatToken's way, is told by its reason alone.
      if (reverted.data !== undefined && reverted.data.errorName !== 'Error') {
        const args = (reverted.data.args ?? []).map((arg) => String(arg)).join(', ')
        return `${reverted.data.errorName}(${args})`
      }
      if (reverted.reason !== undefined) return reverted.reason
      return 'reverted without a reason'
    }
    return error.shortMessage
  }
  return error instanceof Error ? error.name : 'unknown error'
}

/** A view that the token may not have: undefined when the call reverts or returns nothing; an RPC fault still throws. */
async function optionalRead<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read()
  } catch (error) {
    if (error instanceof ContractFunctionExecutionError) return undefined
    throw error
  }
}

/**
 * The token's EIP-712 domain: EIP-5267's eip712Domain() where the token has it; otherwise name()
 * and version() (Circle's USDC and EURC answer "2"), or "1" when there is no version(). Checked
 * against DOMAIN_SEPARATOR() when the token has it, so a wrong guess fails here and not on chain.
 */
export async function permitDomain(publicClient: PublicClient, token: Address): Promise<TypedDataDomain> {
  const chainId = await publicClient.getChainId()
  const view = { address: token, abi: SWEEP_TOKEN_ABI } as const
  let domain: TypedDataDomain
  const announced = await optionalRead(() => publicClient.readContract({ ...view, functionName: 'eip712Domain' }))
  if (announced !== undefined) {
    const [fields, name, version, announcedChainId, verifyingContract, salt] = announced
    const bits = Number.parseInt(fields, 16)
    domain = {}
    if (bits & 0x01) domain.name = name
    if (bits & 0x02) domain.version = version
    if (bits & 0x04) domain.chainId = Number(announcedChainId)
    if (bits & 0x08) domain.verifyingContract = verifyingContract
    if (bits & 0x10) domain.salt = salt
  } else {
    const name = await optionalRead(() => publicClient.readContract({ ...view, functionName: 'name' }))
    if (name === undefined) throw new SweepError(`the token ${token} has no name(): its EIP-712 domain is unknown`, 'check', false)
    const version = (await optionalRead(() => publicClient.readContract({ ...view, functionName: 'version' }))) ?? '1'
    domain = { name, version, chainId, verifyingContract: token }
  }
  if (domain.chainId !== undefined && domain.chainId !== chainId) {
    throw new SweepError(`the token ${token} signs for chain ${domain.chainId}, the node is on chain ${chainId}`, 'check', false)
  }
  const separator = await optionalRead(() => publicClient.readContract({ ...view, functionName: 'DOMAIN_SEPARATOR' }))
  if (separator !== undefined && domainSeparator({ domain }) !== separator) {
    throw new SweepError(`the token ${token}'s DOMAIN_SEPARATOR() is not the one of the domain read from it: permits would be refused`, 'check', false)
  }
  return domain
}

/** The deposit key signs a permit of `value` to `spender`, with the owner's next nonce; valid until `deadline` (seconds; default the head's time + 10 min). */
export async function signPermit(
  publicClient: PublicClient<Transport, Chain>,
  options: { owner: LocalAccount; spender: Address; token: Address; value: bigint; deadline?: bigint },
): Promise<SignedPermit> {
  const { owner, spender, token, value } = options
  const domain = await permitDomain(publicClient, token)
  const nonce = await publicClient.readContract({ address: token, abi: SWEEP_TOKEN_ABI, functionName: 'nonces', args: [owner.address] })
  const deadline = options.deadline ?? (await publicClient.getBlock()).timestamp + DEFAULT_PERMIT_LIFETIME_SECONDS
  const message = { owner: owner.address, spender, value, nonce, deadline }
  const signature = await owner.signTypedData({ domain, types: PERMIT_TYPES, primaryType: 'Permit', message })
  return { ...message, signature }
}

async function costOf(publicClient: PublicClient<Transport, Chain>, hash: Hash, timeout: number, step: SweepStep, moved: boolean, what: string): Promise<TransactionCost> {
  let receipt: TransactionReceipt
  try {
    receipt = await publicClient.waitForTransactionReceipt({ hash, timeout })
  } catch (error) {
    throw new SweepError(`${what}: transaction ${hash} not mined: ${refusal(error)}`, step, moved)
  }
  if (receipt.status !== 'success') throw new SweepError(`${what}: transaction ${hash} reverted`, step, moved)
  return { hash, gasUsed: receipt.gasUsed, fee: receipt.gasUsed * receipt.effectiveGasPrice }
}

async function requireBalance(publicClient: PublicClient<Transport, Chain>, token: Address, owner: Address, amount: bigint, what: string): Promise<void> {
  if (amount <= 0n) throw new SweepError(`${what}: the amount must be positive`, 'check', false)
  const balance = await publicClient.readContract({ address: token, abi: SWEEP_TOKEN_ABI, functionName: 'balanceOf', args: [owner] })
  if (balance < amount) throw new SweepError(`${what}: the deposit address holds ${balance}, less than ${amount}`, 'check', false)
}

/**
 * The hot wallet submits a signed permit (its spender must be the hot wallet) and then
 * `transferFrom(owner, hot wallet, value)`, paying both. The permit is simulated first: a permit
 * the token refuses (another spender, expired, already used) throws before anything is sent.
 */
export async function submitPermitSweep(
  clients: ChainClients & { hotWallet: LocalAccount; token: Address; permit: SignedPermit; receiptTimeoutMs?: number },
): Promise<PermitSweep> {
  const { publicClient, walletClient, hotWallet, token, permit } = clients
  const timeout = clients.receiptTimeoutMs ?? 60_000
  const what = `sweep of ${permit.value} from ${permit.owner}`
  await requireBalance(publicClient, token, permit.owner, permit.value, what)
  const { v, r, s, yParity } = parseSignature(permit.signature)
  const permitArgs = [permit.owner, hotWallet.address, permit.value, permit.deadline, Number(v ?? BigInt(yParity + 27)), r, s] as const
  let permitHash: Hash
  try {
    const { request } = await publicClient.simulateContract({ account: hotWallet, address: token, abi: SWEEP_TOKEN_ABI, functionName: 'permit', args: permitArgs })
    permitHash = await walletClient.writeContract(request)
  } catch (error) {
    throw new SweepError(`${what}: the token refused the permit: ${refusal(error)}`, 'permit', false)
  }
  const permitCost = await costOf(publicClient, permitHash, timeout, 'permit', false, `${what}: permit`)
  let transferHash: Hash
  try {
    const { request } = await publicClient.simulateContract({
      account: hotWallet,
      address: token,
      abi: SWEEP_TOKEN_ABI,
      functionName: 'transferFrom',
      args: [permit.owner, hotWallet.address, permit.value],
    })
    transferHash = await walletClient.writeContract(request)
  } catch (error) {
    // The allowance stays: a later transferFrom by the hot wallet can still use it.
    throw new SweepError(`${what}: permit ${permitHash} mined, the token refused transferFrom: ${refusal(error)}`, 'transferFrom', false)
  }
  const transferCost = await costOf(publicClient, transferHash, timeout, 'transferFrom', false, `${what}: transferFrom`)
  return { permit: permitCost, transferFrom: transferCost, gasUsed: permitCost.gasUsed + transferCost.gasUsed }
}

/** Moves `amount` from the deposit address to the hot wallet by EIP-2612 (see submitPermitSweep); the deposit address needs no ETH. */
export async function sweepByPermit(request: SweepRequest & { deadline?: bigint }): Promise<PermitSweep> {
  const { publicClient, deposit, hotWallet, token, amount } = request
  await requireBalance(publicClient, token, deposit.address, amount, `sweep of ${amount} from ${deposit.address}`)
  const permit = await signPermit(publicClient, { owner: deposit, spender: hotWallet.address, token, value: amount, deadline: request.deadline })
  return submitPermitSweep({ ...request, permit })
}

/**
 * The other way, for comparison: the hot wallet sends the deposit address the ETH one token
 * transfer costs at the current fees (gas estimate × max fee per gas, less what it already holds),
 * then the deposit key sends the transfer. What the transfer does not burn stays on the address.
 */
export async function topUpAndTransfer(request: SweepRequest): Promise<TopUpSweep> {
  const { publicClient, walletClient, deposit, hotWallet, token, amount } = request
  const timeout = request.receiptTimeoutMs ?? 60_000
  const what = `sweep of ${amount} from ${deposit.address}`
  await requireBalance(publicClient, token, deposit.address, amount, what)
  let gas: bigint
  let maxFeePerGas: bigint
  let maxPriorityFeePerGas: bigint
  try {
    gas = await publicClient.estimateContractGas({ account: deposit.address, address: token, abi: SWEEP_TOKEN_ABI, functionName: 'transfer', args: [hotWallet.address, amount] })
    ;({ maxFeePerGas, maxPriorityFeePerGas } = await publicClient.estimateFeesPerGas())
  } catch (error) {
    throw new SweepError(`${what}: the transfer cannot be estimated: ${refusal(error)}`, 'check', false)
  }
  const needed = gas * maxFeePerGas
  const held = await publicClient.getBalance({ address: deposit.address })
  const toppedUp = needed > held ? needed - held : 0n
  let topUp: TransactionCost = { hash: '0x', gasUsed: 0n, fee: 0n }
  if (toppedUp > 0n) {
    let topUpHash: Hash
    try {
      topUpHash = await walletClient.sendTransaction({ account: hotWallet, to: deposit.address, value: toppedUp })
    } catch (error) {
      throw new SweepError(`${what}: the gas top-up was refused: ${refusal(error)}`, 'top_up', false)
    }
    topUp = await costOf(publicClient, topUpHash, timeout, 'top_up', false, `${what}: top-up`)
  }
  let transferHash: Hash
  try {
    transferHash = await walletClient.writeContract({
      account: deposit,
      address: token,
      abi: SWEEP_TOKEN_ABI,
      functionName: 'transfer',
      args: [hotWallet.address, amount],
      gas,
      maxFeePerGas,
      maxPriorityFeePerGas,
    })
  } catch (error) {
    throw new SweepError(`${what}: the token transfer was refused: ${refusal(error)}`, 'transfer', false)
  }
  const transfer = await costOf(publicClient, transferHash, timeout, 'transfer', false, `${what}: transfer`)
  const stranded = await publicClient.getBalance({ address: deposit.address })
  return { topUp, transfer, toppedUp, stranded, gasUsed: topUp.gasUsed + transfer.gasUsed }
}
