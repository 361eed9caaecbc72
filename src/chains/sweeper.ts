import { encodeFunctionData, keccak256, parseSignature } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import type { Db } from '../db/database.js'
import { isoOf, newId } from '../db/time.js'
import type { Transact } from '../events/transact.js'
import { type ChainConfig, type ChainToken, PAYOUT_DEFAULTS } from './config.js'
import type { DepositKeys } from './keys.js'
import { PayoutsRepository } from './payouts.js'
import type { ChainRpc } from './rpc.js'
import { DEFAULT_PERMIT_LIFETIME_SECONDS, PERMIT_TYPES, SWEEP_TOKEN_ABI } from './sweep.js'
import type { ChainSweepsTable } from './tables.js'
import type { WatcherLog } from './watcher.js'
import type { Selectable } from 'kysely'

export type ChainSweepRow = Selectable<ChainSweepsTable>

/**
 * Sweeping (docs/chains.md#moving-deposits-on): the chain's sender, each round, moves the
 * confirmed deposits still on their receiving addresses to the hot wallet, by EIP-2612 (sweep.ts):
 * the address's key signs a permit for the hot wallet, which sends `permit` and `transferFrom`.
 * With the payouts' discipline: both transactions are signed with the hot wallet's next two
 * nonces and written, with the deposits they move, in one database transaction before either is
 * broadcast; each round settles the sweeps in flight from their receipts (a signed one never seen
 * on chain is broadcast again as the same bytes) before it signs another. A deposit belongs to one
 * sweep not failed, and the token's permit nonce of the address is a second guard: a permit
 * already used is refused by the token, and one live sweep per permit nonce by the database.
 */

/** Addresses swept per round, at most. */
export const SWEEP_BATCH = 16
/** Deposits read per round when looking for what to sweep. */
const DEPOSIT_SCAN = 512
/** Deposits that are final at their address: credited, or held for an operator (either way the platform's to keep safe). */
const SWEEPABLE = ['confirmed', 'held']
/** Gas limits: the permit's estimate +20 %, at most this; transferFrom (not estimable before its permit is mined) this. */
export const SWEEP_GAS_LIMIT = 150_000n

export interface SweeperOptions {
  db: Db
  transact: Transact
  log: WatcherLog
  now: () => number
}

export class Sweeper {
  constructor(
    private readonly config: ChainConfig,
    private readonly rpc: ChainRpc,
    private readonly hotWallet: LocalAccount,
    private readonly keys: DepositKeys,
    private readonly options: SweeperOptions,
  ) {}

  private get maxFeePerGas(): bigint {
    return this.config.maxFeePerGasWei ?? PAYOUT_DEFAULTS.maxFeePerGasWei
  }

  /** Settles the sweeps in flight from their receipts; returns how many it looked at. */
  async settle(): Promise<number> {
    const inFlight = await this.options.db.selectFrom('chain_sweeps').selectAll().where('chain', '=', this.config.chain).where('status', 'in', ['signed', 'submitted']).orderBy('created_at').limit(SWEEP_BATCH).execute()
    if (inFlight.length === 0) return 0
    const head = await this.rpc.head()
    const minedNonce = await this.rpc.nonceOf(this.hotWallet.address, 'latest')
    for (const sweep of inFlight) {
      const transfer = await this.rpc.receipt(sweep.transfer_tx_hash)
      if (transfer !== undefined) {
        if (head - transfer.blockNumber + 1 < this.config.confirmations) {
          if (sweep.status === 'signed') await this.move(sweep, 'submitted', null)
        } else if (transfer.status === 'success') {
          await this.move(sweep, 'confirmed', null)
        } else {
          await this.move(sweep, 'failed', `its transferFrom ${sweep.transfer_tx_hash} reverted${(await this.rpc.receipt(sweep.permit_tx_hash))?.status === 'reverted' ? ` after its permit ${sweep.permit_tx_hash} reverted` : ''}`)
        }
        continue
      }
      if (minedNonce > sweep.transfer_tx_nonce) {
        await this.move(sweep, 'failed', `nonce ${sweep.transfer_tx_nonce} of the hot wallet was used by a transaction this platform did not record; the sweep's transferFrom was not mined`)
        continue
      }
      // Signed and maybe never broadcast (a crash), or dropped by the node's pool: the same bytes again.
      if (minedNonce <= sweep.permit_tx_nonce) await this.rpc.sendRaw(sweep.permit_raw as `0x${string}`)
      await this.rpc.sendRaw(sweep.transfer_raw as `0x${string}`)
      if (sweep.status === 'signed') await this.move(sweep, 'submitted', null)
    }
    return inFlight.length
  }

  /**
   * Sweeps the addresses whose confirmed deposits not swept yet reach the chain's sweepMinimums
   * (any amount without one), oldest deposits first, at most SWEEP_BATCH addresses a round, none
   * with a sweep in flight. Returns how many it swept.
   */
  async sweepConfirmed(): Promise<number> {
    const db = this.options.db
    const deposits = await db
      .selectFrom('chain_deposits')
      .select(['id', 'to_address', 'token', 'currency', 'amount'])
      .where('chain', '=', this.config.chain)
      .where('environment', '=', 'live')
      .where('status', 'in', SWEEPABLE)
      .where('sweep_id', 'is', null)
      .orderBy('block_number')
      .orderBy('id')
      .limit(DEPOSIT_SCAN)
      .execute()
    if (deposits.length === 0) return 0
    const busy = new Set(
      (await db.selectFrom('chain_sweeps').select(['address', 'token']).where('chain', '=', this.config.chain).where('status', 'in', ['signed', 'submitted']).execute()).map((row) => `${row.address} ${row.token}`),
    )
    const due = new Map<string, { address: string; token: string; currency: ChainToken; amount: bigint; ids: string[] }>()
    for (const deposit of deposits) {
      const key = `${deposit.to_address} ${deposit.token}`
      if (busy.has(key)) continue
      const entry = due.get(key) ?? { address: deposit.to_address, token: deposit.token, currency: deposit.currency as ChainToken, amount: 0n, ids: [] }
      entry.amount += BigInt(deposit.amount)
      entry.ids.push(deposit.id)
      due.set(key, entry)
    }
    let swept = 0
    for (const entry of due.values()) {
      if (swept >= SWEEP_BATCH) break
      if (entry.amount < (this.config.sweepMinimums?.[entry.currency] ?? 1n)) continue
      if (await this.sweep(entry)) swept++
    }
    return swept
  }

  /** Signs, records, then broadcasts one address's sweep; true when it was sent. */
  private async sweep(entry: { address: string; token: string; currency: ChainToken; amount: bigint; ids: string[] }): Promise<boolean> {
    const what = `sweep of ${entry.amount} ${entry.currency} from ${entry.address}`
    const balance = await this.rpc.tokenBalance(entry.token, entry.address)
    if (balance < entry.amount) {
      // Funds left the address behind the platform's back: reconcile names the difference; nothing is moved.
      this.options.log.error({ chain: this.config.chain, address: entry.address }, `sweeper: ${what}: the address holds ${balance}, less than its confirmed deposits; not swept, for an operator (ledger reconcile)`)
      return false
    }
    const address = await this.options.db.selectFrom('chain_addresses').select('derivation_index').where('address', '=', entry.address).executeTakeFirst()
    if (address === undefined) return false
    const deposit = this.keys.accountAt(address.derivation_index)
    if (deposit.address.toLowerCase() !== entry.address) {
      this.options.log.error({ chain: this.config.chain, address: entry.address }, `sweeper: ${what}: the receiving key derives another address at index ${address.derivation_index}; not swept`)
      return false
    }
    const spender = this.hotWallet.address
    const terms = await this.rpc.permitTerms(entry.token, entry.address)
    const deadline = terms.headTime + DEFAULT_PERMIT_LIFETIME_SECONDS
    const signature = await deposit.signTypedData({
      domain: terms.domain,
      types: PERMIT_TYPES,
      primaryType: 'Permit',
      message: { owner: deposit.address, spender, value: entry.amount, nonce: terms.nonce, deadline },
    })
    const { v, r, s, yParity } = parseSignature(signature)
    const permitData = encodeFunctionData({ abi: SWEEP_TOKEN_ABI, functionName: 'permit', args: [deposit.address, spender, entry.amount, deadline, Number(v ?? BigInt(yParity + 27)), r, s] })
    const transferData = encodeFunctionData({ abi: SWEEP_TOKEN_ABI, functionName: 'transferFrom', args: [deposit.address, spender, entry.amount] })
    const estimate = await this.rpc.estimateGas({ account: spender, to: entry.token, data: permitData })
    if (typeof estimate !== 'bigint') {
      this.options.log.error({ chain: this.config.chain, address: entry.address }, `sweeper: ${what}: the token refuses the permit: ${estimate.reverted}; not swept`)
      return false
    }
    const fees = await this.rpc.fees()
    const maxFeePerGas = fees.maxFeePerGas < this.maxFeePerGas ? fees.maxFeePerGas : this.maxFeePerGas
    const priority = fees.maxPriorityFeePerGas < maxFeePerGas ? fees.maxPriorityFeePerGas : maxFeePerGas
    const permitGas = (estimate * 6n) / 5n < SWEEP_GAS_LIMIT ? (estimate * 6n) / 5n : SWEEP_GAS_LIMIT
    const pendingNonce = await this.rpc.nonceOf(spender, 'pending')
    const sign = async (nonce: number, data: `0x${string}`, gas: bigint) => {
      const raw = await this.hotWallet.signTransaction({ type: 'eip1559', chainId: this.config.chainId, nonce, to: entry.token as `0x${string}`, data, value: 0n, gas, maxFeePerGas, maxPriorityFeePerGas: priority })
      return { raw, hash: keccak256(raw).toLowerCase() }
    }
    const sweep = await this.options
      .transact(async (tx) => {
        const at = isoOf(this.options.now())
        const id = newId()
        // The deposits first: one another process swept meanwhile is not swept again.
        const claimed = await tx.db.updateTable('chain_deposits').set({ sweep_id: id }).where('id', 'in', entry.ids).where('sweep_id', 'is', null).where('status', 'in', SWEEPABLE).executeTakeFirst()
        if (claimed.numUpdatedRows !== BigInt(entry.ids.length)) throw new SweptElsewhere()
        const payouts = new PayoutsRepository(tx.db)
        const sender = spender.toLowerCase()
        const permitNonce = await payouts.takeNonce(this.config.chain, sender, pendingNonce)
        const transferNonce = await payouts.takeNonce(this.config.chain, sender, pendingNonce)
        const permit = await sign(permitNonce, permitData, permitGas)
        const transfer = await sign(transferNonce, transferData, SWEEP_GAS_LIMIT)
        const row: ChainSweepRow = {
          id,
          chain: this.config.chain,
          environment: 'live',
          address: entry.address,
          derivation_index: address.derivation_index,
          currency: entry.currency,
          token: entry.token,
          amount: entry.amount.toString(),
          permit_nonce: terms.nonce.toString(),
          sender,
          status: 'signed',
          permit_tx_hash: permit.hash,
          permit_tx_nonce: permitNonce,
          permit_raw: permit.raw,
          transfer_tx_hash: transfer.hash,
          transfer_tx_nonce: transferNonce,
          transfer_raw: transfer.raw,
          reason: null,
          created_at: at,
          updated_at: at,
        }
        await tx.db.insertInto('chain_sweeps').values(row).execute()
        return row
      })
      .catch((error: unknown) => {
        if (error instanceof SweptElsewhere) return undefined
        throw error
      })
    if (sweep === undefined) return false
    await this.rpc.sendRaw(sweep.permit_raw as `0x${string}`)
    await this.rpc.sendRaw(sweep.transfer_raw as `0x${string}`)
    await this.move(sweep, 'submitted', null)
    this.options.log.info({ chain: this.config.chain, address: entry.address, sweep: sweep.id, amount: sweep.amount, permitTx: sweep.permit_tx_hash, transferTx: sweep.transfer_tx_hash }, 'sweeper: confirmed deposits sent to the hot wallet')
    return true
  }

  /** Moves a sweep on from where it is; a failed one gives its deposits back, to be swept again. */
  private async move(sweep: ChainSweepRow, to: 'submitted' | 'confirmed' | 'failed', reason: string | null): Promise<void> {
    const at = isoOf(this.options.now())
    await this.options.transact(async (tx) => {
      const moved = await tx.db.updateTable('chain_sweeps').set({ status: to, reason, updated_at: at }).where('id', '=', sweep.id).where('status', '=', sweep.status).executeTakeFirst()
      if (moved.numUpdatedRows !== 1n) return
      if (to === 'failed') await tx.db.updateTable('chain_deposits').set({ sweep_id: null }).where('sweep_id', '=', sweep.id).execute()
    })
    sweep.status = to
    if (to === 'failed') this.options.log.error({ chain: this.config.chain, sweep: sweep.id, address: sweep.address }, `sweeper: a sweep failed: ${reason ?? ''}; its deposits stay on their address, to be swept again`)
  }
}

/** Another process swept the deposits first. */
class SweptElsewhere extends Error {}
