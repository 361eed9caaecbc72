import { pbkdf2Sync } from 'node:crypto'
import { HDKey } from 'viem/accounts'

/** The account-level key (m/44'/60'/0') of an operator's seed of its own (not anvil's, whose accounts pay in the tests). */
function testAccountKey(): HDKey {
  const seed = pbkdf2Sync('legal winner thank year wave sausage worth useful legal winner thank yellow', 'mnemonic', 2048, 64, 'sha512')
  return HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'")
}

/** Its account-level xpub: what CHAINS_FILE holds. */
export function testXpub(): string {
  return testAccountKey().publicExtendedKey
}

/** Its account-level xprv: what CHAINS_FILE's receivingXprv names, for the sweep. */
export function testXprv(): string {
  return testAccountKey().privateExtendedKey
}
