import { pbkdf2Sync } from 'node:crypto'
import { HDKey } from 'viem/accounts'

/** An operator's seed of its own (not anvil's, whose accounts pay in the tests), and its account-level xpub (m/44'/60'/0'): what CHAINS_FILE holds. */
export function testXpub(): string {
  const seed = pbkdf2Sync('legal winner thank year wave sausage worth useful legal winner thank yellow', 'mnemonic', 2048, 64, 'sha512')
  return HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'").publicExtendedKey
}
