// vitest: sqlite project only — reads files and the environment, no database
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { HDKey, privateKeyToAccount } from 'viem/accounts'
import { ChainsConfigError, loadChainsConfig, parseChainsConfig } from '../../src/chains/config.js'
import { ReceivingKey } from '../../src/chains/derivation.js'
import { loadDepositKeys, loadHotWallet, SigningKeyError } from '../../src/chains/keys.js'
import { testXprv, testXpub } from '../helpers/receiving-key.js'
import { tempDir } from '../processes.js'

const KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'

function keyFile(content: string, mode: number): string {
  const file = join(tempDir('hot-key-'), 'hot.key')
  writeFileSync(file, content)
  chmodSync(file, mode)
  return file
}

function refusal(load: () => unknown): string {
  try {
    load()
  } catch (error) {
    expect(error).toBeInstanceOf(SigningKeyError)
    return (error as Error).message
  }
  throw new Error('not refused')
}

describe('the hot wallet key', () => {
  it('is read from a file only its owner may read (600 and 400), trailing newline allowed', () => {
    for (const mode of [0o600, 0o400]) expect(loadHotWallet({ file: keyFile(`${KEY}\n`, mode) }, {}).address).toBe(privateKeyToAccount(KEY).address)
  })

  it('refuses a file others may read (640, 604, 644), saying how to fix it, never what it holds', () => {
    for (const mode of [0o640, 0o604, 0o644]) {
      const file = keyFile(KEY, mode)
      const message = refusal(() => loadHotWallet({ file }, {}))
      expect(message).toBe(`hotWalletKey: ${file} may be read by others (mode ${mode.toString(8)}); make it 600 (chmod 600 ${file})`)
      expect(message).not.toContain(KEY.slice(2))
    }
  })

  it('refuses a missing file, a missing variable, and content that is not one key, without echoing it', () => {
    expect(refusal(() => loadHotWallet({ file: '/nonexistent/hot.key' }, {}))).toBe('hotWalletKey: cannot read /nonexistent/hot.key')
    expect(refusal(() => loadHotWallet({ env: 'HOT_KEY' }, {}))).toBe('hotWalletKey: the environment variable HOT_KEY is not set')
    const short = KEY.slice(0, 65)
    const message = refusal(() => loadHotWallet({ env: 'HOT_KEY' }, { HOT_KEY: short }))
    expect(message).toBe('hotWalletKey: $HOT_KEY must hold one private key: 0x and 64 hex digits')
    expect(message).not.toContain(short.slice(2, 20))
  })

  it('is read from the environment; the account it makes carries no readable key', () => {
    const account = loadHotWallet({ env: 'HOT_KEY' }, { HOT_KEY: KEY })
    expect(account.address).toBe(privateKeyToAccount(KEY).address)
    expect(JSON.stringify(account)).not.toContain(KEY.slice(2))
    expect(Object.values(account).filter((value) => typeof value === 'string' && value.includes(KEY.slice(2)))).toEqual([])
  })
})

describe('the receiving xprv (the sweep signs with its addresses’ keys)', () => {
  const xpub = testXpub()
  const xprv = testXprv()
  const secret = xprv.slice(4, 60)

  it('is read from a 600 file or the environment, checked against receivingXpub; it derives the receiving addresses and shows no key', () => {
    const fromFile = loadDepositKeys({ file: keyFile(`${xprv}\n`, 0o600) }, {}, xpub)
    const fromEnv = loadDepositKeys({ env: 'RECEIVING_XPRV' }, { RECEIVING_XPRV: xprv }, xpub)
    const receiving = new ReceivingKey(xpub)
    for (const index of [0, 1, 7]) {
      expect(fromFile.accountAt(index).address.toLowerCase()).toBe(receiving.addressAt(index))
      expect(fromEnv.accountAt(index).address.toLowerCase()).toBe(receiving.addressAt(index))
    }
    expect(JSON.stringify(fromFile)).toBe('{}')
    expect(JSON.stringify(fromEnv.accountAt(3))).not.toContain(secret)
  })

  it('refuses a file others may read, a missing variable, a key that is not an xprv, an xpub, and the xprv of another seed or depth, never echoing either key', () => {
    const readable = keyFile(xprv, 0o644)
    const other = HDKey.fromMasterSeed(new Uint8Array(32).fill(9)).derive("m/44'/60'/0'").privateExtendedKey
    const deeper = HDKey.fromExtendedKey(xprv).deriveChild(0).privateExtendedKey
    const cases: [() => unknown, string][] = [
      [() => loadDepositKeys({ file: readable }, {}, xpub), `receivingXprv: ${readable} may be read by others (mode 644); make it 600 (chmod 600 ${readable})`],
      [() => loadDepositKeys({ env: 'RECEIVING_XPRV' }, {}, xpub), 'receivingXprv: the environment variable RECEIVING_XPRV is not set'],
      [() => loadDepositKeys({ env: 'RECEIVING_XPRV' }, { RECEIVING_XPRV: xprv.slice(0, 100) }, xpub), 'receivingXprv: $RECEIVING_XPRV must hold one extended private key (xprv…)'],
      [() => loadDepositKeys({ env: 'RECEIVING_XPRV' }, { RECEIVING_XPRV: xpub }, xpub), 'receivingXprv: $RECEIVING_XPRV holds an extended public key; the sweep needs the private one (xprv…) behind receivingXpub'],
      ...[other, deeper].map((key): [() => unknown, string] => [
        () => loadDepositKeys({ env: 'RECEIVING_XPRV' }, { RECEIVING_XPRV: key }, xpub),
        "receivingXprv: $RECEIVING_XPRV is not the extended private key of receivingXpub (their public keys differ): give the xprv at m/44'/60'/0' of the seed receivingXpub was exported from",
      ]),
    ]
    for (const [load, expected] of cases) {
      const message = refusal(load)
      expect(message).toBe(expected)
      for (const key of [xprv, other, deeper, xpub]) expect(message).not.toContain(key.slice(4, 60))
    }
  })

  it('needs hotWalletKey in the chains file, and is never the key itself there', () => {
    const document = (changes: Record<string, unknown>) => JSON.stringify({ receivingXpub: xpub, chains: {}, ...changes })
    expect(() => parseChainsConfig(document({ receivingXprv: { env: 'RECEIVING_XPRV' } }), 'CHAINS_FILE')).toThrow('CHAINS_FILE.receivingXprv needs hotWalletKey: the hot wallet receives what is swept and pays its gas')
    let message = ''
    try {
      parseChainsConfig(document({ receivingXprv: xprv, hotWalletKey: { env: 'HOT_KEY' } }), 'CHAINS_FILE')
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toBe('CHAINS_FILE.receivingXprv must be {"file": PATH} or {"env": NAME}: the key itself never goes in this file')
    expect(parseChainsConfig(document({ receivingXprv: { env: 'RECEIVING_XPRV' }, hotWalletKey: { env: 'HOT_KEY' } }), 'CHAINS_FILE').receivingXprv).toEqual({ env: 'RECEIVING_XPRV' })
  })
})

describe('CHAINS_FILE with receivingXprv, as the server and worker load it at start', () => {
  const hotKey = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'
  const chainsFile = (document: Record<string, unknown>) => {
    const file = join(tempDir('chains-keys-'), 'chains.json')
    writeFileSync(file, JSON.stringify({ receivingXpub: testXpub(), chains: {}, hotWalletKey: { env: 'HOT_KEY' }, receivingXprv: { env: 'RECEIVING_XPRV' }, ...document }))
    return file
  }

  it('loads both keys; refuses an xprv that is not receivingXpub’s as a configuration error naming the source, not the key', () => {
    const file = chainsFile({})
    const loaded = loadChainsConfig({ CHAINS_FILE: file, HOT_KEY: hotKey, RECEIVING_XPRV: testXprv() })
    expect(loaded?.hotWallet?.address).toBe(privateKeyToAccount(hotKey).address)
    expect(loaded?.depositKeys?.accountAt(0).address.toLowerCase()).toBe(new ReceivingKey(testXpub()).addressAt(0))
    const other = HDKey.fromMasterSeed(new Uint8Array(32).fill(9)).derive("m/44'/60'/0'").privateExtendedKey
    let message = ''
    try {
      loadChainsConfig({ CHAINS_FILE: file, HOT_KEY: hotKey, RECEIVING_XPRV: other })
    } catch (error) {
      expect(error).toBeInstanceOf(ChainsConfigError)
      message = (error as Error).message
    }
    expect(message).toMatch(/^CHAINS_FILE: receivingXprv: \$RECEIVING_XPRV is not the extended private key of receivingXpub/)
    for (const key of [other, testXprv(), testXpub()]) expect(message).not.toContain(key.slice(4, 60))
    expect(loadChainsConfig({ CHAINS_FILE: chainsFile({ receivingXprv: undefined }), HOT_KEY: hotKey })?.depositKeys).toBeUndefined()
  })
})
