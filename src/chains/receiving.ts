import type { Db } from '../db/database.js'
import { isoOf } from '../db/time.js'
import type { ReceivingOwnerType } from '../events/domain-events.js'
import { chainConfigOf, EVM_CHAINS, type ChainConfig, type ChainsConfig, type ChainToken } from './config.js'
import { ReceivingKey } from './derivation.js'
import { ChainsRepository } from './repository.js'

/** Who a new receiving address is for; `unassigned`: allocated for a liquidation address not created yet. */
export interface ReceivingOwner {
  appId: string
  ownerType: ReceivingOwnerType | 'unassigned'
  ownerId: string | null
  /** the one token accepted there; undefined: every token of the chain (a wallet) */
  currency: ChainToken | undefined
}

/**
 * Live receiving addresses: what the resources ask for a live wallet, payment intent,
 * direct-wallet transfer, checkout or liquidation address (docs/chains.md). The sandbox never
 * asks: its addresses are made up.
 */
export class Receiving {
  private readonly key: ReceivingKey | undefined

  constructor(private readonly config: ChainsConfig | undefined) {
    this.key = config === undefined ? undefined : new ReceivingKey(config.receivingXpub)
  }

  /** The chain's configuration, or undefined when live deposits on it are off. */
  chain(chain: string): ChainConfig | undefined {
    return chainConfigOf(this.config, chain)
  }

  /** Why live money cannot arrive on `chain` in `currency`, in words for an answer; undefined when it can. */
  offReason(chain: string, currency: string | undefined): string | undefined {
    if (!(EVM_CHAINS as readonly string[]).includes(chain)) return `live deposits on ${chain} are off: this platform receives live money on EVM chains only (docs/chains.md)`
    const config = this.chain(chain)
    if (config === undefined) return `live deposits on ${chain} are off: this platform has no configuration for ${chain} (CHAINS_FILE, docs/chains.md)`
    if (currency !== undefined && config.tokens[currency as ChainToken] === undefined) return `live deposits of ${currency} on ${chain} are off: no ${currency} contract is configured for ${chain}`
    return undefined
  }

  /** The contract of `currency` on `chain` as configured (lower-case), or undefined when it is off. */
  tokenContract(chain: string, currency: ChainToken): string | undefined {
    return this.chain(chain)?.tokens[currency]
  }

  /**
   * Derives the next receiving address and records who it is for, in the caller's transaction
   * (so an object and its address are made together or not at all). Only for a chain that is on.
   */
  async allocate(db: Db, chain: string, owner: ReceivingOwner, now: number): Promise<string> {
    if (this.key === undefined || this.offReason(chain, owner.currency) !== undefined) throw new Error(`receiving on ${chain} is off`)
    const repository = new ChainsRepository(db)
    const index = await repository.takeDerivationIndex()
    const address = this.key.addressAt(index)
    await repository.insertAddress({
      address,
      derivation_index: index,
      chain,
      environment: 'live',
      app_id: owner.appId,
      owner_type: owner.ownerType,
      owner_id: owner.ownerId,
      currency: owner.currency ?? null,
      created_at: isoOf(now),
    })
    return address
  }
}

/**
 * Gives the application's unassigned live address on `chain` accepting `currency` to a liquidation
 * address, in the caller's transaction; false when it is not one (unknown, another application's,
 * another chain's or currency's, or already given).
 */
export async function claimReceivingAddress(db: Db, address: string, claim: { appId: string; chain: string; currency: string; liquidationAddressId: string }): Promise<boolean> {
  const repository = new ChainsRepository(db)
  const row = await repository.findAddress(address)
  if (row === undefined || row.app_id !== claim.appId || row.chain !== claim.chain || row.owner_type !== 'unassigned' || (row.currency !== null && row.currency !== claim.currency)) return false
  return repository.assign(address, 'live', claim.appId, claim.chain, 'liquidation_address', claim.liquidationAddressId)
}
