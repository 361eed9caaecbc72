// vitest: sqlite project only — reads files and the environment, no database
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { privateKeyToAccount } from 'viem/accounts'
import { loadHotWallet, SigningKeyError } from '../../src/chains/keys.js'
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
