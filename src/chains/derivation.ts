import { secp256k1 } from '@noble/curves/secp256k1'
import { HDKey, publicKeyToAddress } from 'viem/accounts'

/**
 * Receiving addresses, derived from the operator's account-level extended public key (BIP-32/44:
 * the key at m/44'/60'/0', exported as an xpub): the address of index i is the one at
 * m/44'/60'/0'/0/i, the external chain of BIP-44, so a wallet restored from the same seed sees
 * the funds. One index space for every EVM chain: an index is allocated once
 * (ReceivingAddresses.allocate), so no two objects share an address on any chain. Only the public
 * key is read; the private keys stay with the operator.
 */

/** The path of index `index` below the seed, as docs/chains.md writes it. */
export function derivationPath(index: number): string {
  return `m/44'/60'/0'/0/${index}`
}

/** The largest index of a non-hardened child (BIP-32). */
export const MAX_DERIVATION_INDEX = 0x7fffffff

export class ReceivingKey {
  private readonly external: HDKey

  constructor(xpub: string) {
    this.external = HDKey.fromExtendedKey(xpub).deriveChild(0)
  }

  /** The lower-case address of `index`. */
  addressAt(index: number): string {
    if (!Number.isSafeInteger(index) || index < 0 || index > MAX_DERIVATION_INDEX) throw new RangeError(`derivation index out of range: ${index}`)
    const publicKey = this.external.deriveChild(index).publicKey
    if (publicKey === null) throw new Error('the extended key has no public key')
    // BIP-32 keeps the compressed point; an address is the hash of the uncompressed one.
    const uncompressed = secp256k1.ProjectivePoint.fromHex(publicKey).toRawBytes(false)
    // Hex by hand: viem's root module, for this one encoding, would load most of viem wherever addresses are derived.
    return publicKeyToAddress(`0x${Buffer.from(uncompressed).toString('hex')}`).toLowerCase()
  }
}
