// vitest: sqlite project only — pure functions, no backend.
import { describe, it, expect } from 'vitest'
import { base32nopad, base58, createBase58check } from '@scure/base'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import {
  CHAINS,
  addressKey,
  describeAddressFormat,
  isChain,
  isValidChainAddress,
  type Chain,
} from '../../src/validation/chain-address.js'

const EVM: Chain[] = ['ethereum', 'polygon', 'avalanche_c_chain', 'base', 'arbitrum', 'optimism']
const NON_EVM: Chain[] = ['solana', 'stellar', 'tron']

const ETH = '0x4d0280da2f2fDA5103914bCc5aad114743152A9c'
const SOL = 'So11111111111111111111111111111111111111112'
const XLM = 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7'
const TRX = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'

const RANDOM_ROUNDS = 200

// ---- test-side encoders (written independently of the module under test) ----

function toEip55(bytes20: Uint8Array): string {
  const lower = bytesToHex(bytes20)
  const hash = bytesToHex(keccak_256(utf8ToBytes(lower)))
  const chars = [...lower].map((c, i) => (parseInt(hash[i] ?? '0', 16) >= 8 ? c.toUpperCase() : c))
  return '0x' + chars.join('')
}

/** Table-free CRC16-XModem, checked below against the standard "123456789" vector. */
function crc16(data: Uint8Array): number {
  let crc = 0
  for (const byte of data) {
    for (let bit = 7; bit >= 0; bit--) {
      const inBit = (byte >> bit) & 1
      const top = (crc >> 15) & 1
      crc = (crc << 1) & 0xffff
      if (top ^ inBit) crc ^= 0x1021
    }
  }
  return crc
}

function strkey(version: number, key32: Uint8Array): string {
  const body = Uint8Array.from([version, ...key32])
  const crc = crc16(body)
  return base32nopad.encode(Uint8Array.from([...body, crc & 0xff, crc >> 8]))
}

const b58c = createBase58check(sha256)
const tron = (bytes20: Uint8Array): string => b58c.encode(Uint8Array.from([0x41, ...bytes20]))

/** Flip the case of the character at index i. */
function flipCase(s: string, i: number): string {
  const c = s.charAt(i)
  const f = c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()
  return s.slice(0, i) + f + s.slice(i + 1)
}

/** Replace the char at index i with a different char from `alphabet`. */
function changeChar(s: string, i: number, alphabet: string): string {
  const c = s.charAt(i)
  const next = alphabet[(alphabet.indexOf(c) + 1) % alphabet.length] ?? ''
  return s.slice(0, i) + next + s.slice(i + 1)
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

// ---------------------------------------------------------------------------

describe('isChain', () => {
  it('accepts every listed chain', () => {
    for (const c of CHAINS) expect(isChain(c)).toBe(true)
    expect(CHAINS).toHaveLength(9)
  })
  it('rejects anything else', () => {
    for (const v of ['', 'Ethereum', 'bitcoin', 'avalanche', ' ethereum', 1, null, undefined, {}, ['solana']]) {
      expect(isChain(v)).toBe(false)
    }
  })
})

describe('EVM chains', () => {
  const body = ETH.slice(2)

  it('accepts the checksummed example on every EVM chain', () => {
    for (const c of EVM) expect(isValidChainAddress(c, ETH)).toBe(true)
  })

  it('does not accept the EVM example on solana/stellar/tron', () => {
    for (const c of NON_EVM) expect(isValidChainAddress(c, ETH)).toBe(false)
  })

  it('accepts all-lowercase and all-uppercase hex', () => {
    for (const c of EVM) {
      expect(isValidChainAddress(c, '0x' + body.toLowerCase())).toBe(true)
      expect(isValidChainAddress(c, '0x' + body.toUpperCase())).toBe(true)
    }
    // digits only (no letters) is trivially single-case
    expect(isValidChainAddress('ethereum', '0x' + '1234567890'.repeat(4))).toBe(true)
  })

  it('accepts the EIP-55 spec vectors', () => {
    for (const a of [
      '0x52908400098527886E0F7030069857D2E4169EE7',
      '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
      '0xde709f2102306220921060314715629080e2fb77',
      '0x27b1fdb04752bbc536007a920d24acb045561c26',
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    ]) {
      expect(isValidChainAddress('ethereum', a)).toBe(true)
    }
  })

  it('rejects a mixed-case address whose checksum is wrong (one letter case-flipped)', () => {
    const i = ETH.indexOf('D') // 0x4d0280da2f2f[D]A51...
    expect(i).toBeGreaterThan(1)
    const bad = flipCase(ETH, i)
    expect(bad).not.toBe(ETH)
    for (const c of EVM) expect(isValidChainAddress(c, bad)).toBe(false)
    // every single-letter case flip breaks it
    for (let j = 2; j < ETH.length; j++) {
      if (/[a-fA-F]/.test(ETH.charAt(j))) expect(isValidChainAddress('ethereum', flipCase(ETH, j))).toBe(false)
    }
  })

  it('rejects 39 and 41 hex digits', () => {
    expect(isValidChainAddress('ethereum', ETH.slice(0, -1))).toBe(false)
    expect(isValidChainAddress('ethereum', ETH + 'a')).toBe(false)
    expect(isValidChainAddress('ethereum', '0x' + 'a'.repeat(39))).toBe(false)
    expect(isValidChainAddress('ethereum', '0x' + 'a'.repeat(41))).toBe(false)
    expect(isValidChainAddress('ethereum', '0x' + 'a'.repeat(40))).toBe(true)
  })

  it('rejects non-hex characters', () => {
    expect(isValidChainAddress('ethereum', '0x' + 'g' + 'a'.repeat(39))).toBe(false)
    expect(isValidChainAddress('ethereum', '0x' + 'a'.repeat(39) + 'z')).toBe(false)
    expect(isValidChainAddress('ethereum', '0x' + ' ' + 'a'.repeat(39))).toBe(false)
    expect(isValidChainAddress('ethereum', '0x' + 'a'.repeat(39) + 'é')).toBe(false)
  })

  it('rejects a missing or uppercase 0X prefix and surrounding whitespace', () => {
    expect(isValidChainAddress('ethereum', body)).toBe(false)
    expect(isValidChainAddress('ethereum', body.toLowerCase())).toBe(false)
    expect(isValidChainAddress('ethereum', '0X' + body)).toBe(false)
    expect(isValidChainAddress('ethereum', '0X' + body.toLowerCase())).toBe(false)
    expect(isValidChainAddress('ethereum', 'x' + body)).toBe(false)
    expect(isValidChainAddress('ethereum', ' ' + ETH)).toBe(false)
    expect(isValidChainAddress('ethereum', ETH + '\n')).toBe(false)
  })

  it('round-trips random EIP-55 addresses; single case flips are rejected', () => {
    for (let n = 0; n < RANDOM_ROUNDS; n++) {
      const a = toEip55(randomBytes(20))
      for (const c of EVM) expect(isValidChainAddress(c, a)).toBe(true)
      expect(isValidChainAddress('ethereum', a.toLowerCase())).toBe(true)
      const letters = [...a.slice(2)].map((ch, i) => (/[a-fA-F]/.test(ch) ? i + 2 : -1)).filter((i) => i >= 0)
      const idx = letters[n % Math.max(letters.length, 1)]
      if (idx === undefined) continue
      const flipped = flipCase(a, idx)
      const b = flipped.slice(2)
      const singleCase = b === b.toLowerCase() || b === b.toUpperCase()
      expect(isValidChainAddress('ethereum', flipped)).toBe(singleCase)
    }
  })
})

describe('solana', () => {
  it('accepts the wrapped-SOL mint and the all-ones system program', () => {
    expect(isValidChainAddress('solana', SOL)).toBe(true)
    expect(isValidChainAddress('solana', '1'.repeat(32))).toBe(true)
  })

  it('rejects 31- and 33-byte decodes even when length is in 32..44', () => {
    const s31 = base58.encode(new Uint8Array(31).fill(255))
    const s33 = base58.encode(Uint8Array.from([1, ...new Array<number>(32).fill(0)]))
    const s33zeros = base58.encode(new Uint8Array(33)) // 33 x '1'
    for (const s of [s31, s33, s33zeros]) {
      expect(s.length).toBeGreaterThanOrEqual(32)
      expect(s.length).toBeLessThanOrEqual(44)
      expect(isValidChainAddress('solana', s)).toBe(false)
    }
    expect(s33zeros).toBe('1'.repeat(33))
  })

  it('rejects strings shorter than 32 or longer than 44 chars', () => {
    expect(isValidChainAddress('solana', '1'.repeat(31))).toBe(false)
    expect(isValidChainAddress('solana', SOL + '1')).toBe(false) // 44 chars, 33 bytes
    expect(isValidChainAddress('solana', SOL + '11')).toBe(false) // 45 chars
  })

  it('rejects the non-base58 characters 0, O, I, l', () => {
    for (const bad of ['0', 'O', 'I', 'l']) {
      const s = bad + SOL.slice(1)
      expect(s).toHaveLength(SOL.length)
      expect(isValidChainAddress('solana', s)).toBe(false)
    }
    expect(isValidChainAddress('solana', SOL.slice(0, -1) + '+')).toBe(false)
  })

  it('does not accept a Solana address on other chains', () => {
    for (const c of CHAINS.filter((c) => c !== 'solana')) expect(isValidChainAddress(c, SOL)).toBe(false)
  })

  it('round-trips random 32-byte keys', () => {
    for (let n = 0; n < RANDOM_ROUNDS; n++) {
      const key = randomBytes(32)
      if (n % 10 === 0) key.fill(0, 0, n % 7) // exercise leading-zero ('1') prefixes
      const a = base58.encode(key)
      expect(isValidChainAddress('solana', a)).toBe(true)
    }
  })
})

describe('stellar', () => {
  it('CRC16-XModem helper matches the standard check value', () => {
    expect(crc16(utf8ToBytes('123456789'))).toBe(0x31c3)
  })

  it('accepts the known G-address and one we re-encode ourselves', () => {
    expect(isValidChainAddress('stellar', XLM)).toBe(true)
    const key = base32nopad.decode(XLM).subarray(1, 33)
    expect(strkey(6 << 3, key)).toBe(XLM)
  })

  it('rejects a one-character change (CRC mismatch)', () => {
    for (const i of [1, 10, 30, 54, 55]) {
      const bad = changeChar(XLM, i, B32)
      expect(bad).toHaveLength(56)
      expect(isValidChainAddress('stellar', bad)).toBe(false)
    }
  })

  it('rejects 55 and 57 characters', () => {
    expect(isValidChainAddress('stellar', XLM.slice(0, 55))).toBe(false)
    expect(isValidChainAddress('stellar', XLM + 'A')).toBe(false)
  })

  it('rejects valid-CRC StrKeys with another version byte (S seed, M muxed-style, T pre-auth)', () => {
    const key = base32nopad.decode(XLM).subarray(1, 33)
    for (const [version, prefix] of [
      [18 << 3, 'S'],
      [12 << 3, 'M'],
      [19 << 3, 'T'],
      [23 << 3, 'X'],
    ] as const) {
      const s = strkey(version, key)
      expect(s).toHaveLength(56)
      expect(s[0]).toBe(prefix)
      expect(isValidChainAddress('stellar', s)).toBe(false)
    }
  })

  it('rejects lowercase and padded forms', () => {
    expect(isValidChainAddress('stellar', XLM.toLowerCase())).toBe(false)
    expect(flipCase(XLM, 3)).not.toBe(XLM)
    expect(isValidChainAddress('stellar', flipCase(XLM, 3))).toBe(false)
    expect(isValidChainAddress('stellar', XLM.slice(0, 55) + '=')).toBe(false)
  })

  it('does not accept a Stellar address on other chains', () => {
    for (const c of CHAINS.filter((c) => c !== 'stellar')) expect(isValidChainAddress(c, XLM)).toBe(false)
  })

  it('round-trips random ed25519 keys', () => {
    for (let n = 0; n < RANDOM_ROUNDS; n++) {
      const a = strkey(6 << 3, randomBytes(32))
      expect(a[0]).toBe('G')
      expect(isValidChainAddress('stellar', a)).toBe(true)
    }
  })
})

describe('tron', () => {
  it('accepts the USDT contract address and a re-encoded copy', () => {
    expect(isValidChainAddress('tron', TRX)).toBe(true)
    const payload = b58c.decode(TRX)
    expect(payload[0]).toBe(0x41)
    expect(tron(payload.subarray(1))).toBe(TRX)
  })

  it('rejects a checksum change', () => {
    for (const i of [1, 15, 33]) {
      const bad = changeChar(TRX, i, B58)
      expect(bad).toHaveLength(34)
      expect(isValidChainAddress('tron', bad)).toBe(false)
    }
  })

  it('rejects a valid base58check "T..." string with a version byte other than 0x41', () => {
    const a = b58c.encode(Uint8Array.from([0x42, ...new Array<number>(20).fill(0)]))
    const b = b58c.encode(Uint8Array.from([0x40, ...new Array<number>(20).fill(255)]))
    for (const s of [a, b]) {
      expect(s).toHaveLength(34)
      expect(s[0]).toBe('T')
      expect(isValidChainAddress('tron', s)).toBe(false)
    }
    // and a version-0x41 payload of the wrong length
    expect(isValidChainAddress('tron', b58c.encode(Uint8Array.from([0x41, ...randomBytes(21)])))).toBe(false)
  })

  it('rejects 33 and 35 characters and non-T prefixes', () => {
    expect(isValidChainAddress('tron', TRX.slice(0, 33))).toBe(false)
    expect(isValidChainAddress('tron', TRX + '1')).toBe(false)
    expect(isValidChainAddress('tron', 'A' + TRX.slice(1))).toBe(false)
    expect(isValidChainAddress('tron', '0' + TRX.slice(1))).toBe(false)
  })

  it('does not accept a Tron address on other chains', () => {
    for (const c of CHAINS.filter((c) => c !== 'tron')) expect(isValidChainAddress(c, TRX)).toBe(false)
  })

  it('round-trips random 20-byte accounts', () => {
    for (let n = 0; n < RANDOM_ROUNDS; n++) {
      const a = tron(randomBytes(20))
      expect(a).toHaveLength(34)
      expect(a[0]).toBe('T')
      expect(isValidChainAddress('tron', a)).toBe(true)
    }
  })
})

describe('robustness', () => {
  it('never throws and returns false for junk on every chain', () => {
    const junk = [
      '',
      ' ',
      '0x',
      'T',
      'G',
      '\u0000'.repeat(40),
      'é'.repeat(44),
      '😀'.repeat(20),
      'Ｔ' + TRX.slice(1), // full-width T
      '1'.repeat(1_000_000),
      'a'.repeat(1_000_000),
      '0x' + 'a'.repeat(1_000_000),
    ]
    for (const c of CHAINS) {
      for (const s of junk) expect(isValidChainAddress(c, s)).toBe(false)
    }
  })
})

describe('addressKey', () => {
  it('lowercases EVM addresses so checksummed and lowercase forms collide', () => {
    for (const c of EVM) {
      expect(addressKey(c, ETH)).toBe(ETH.toLowerCase())
      expect(addressKey(c, ETH)).toBe(addressKey(c, '0x' + ETH.slice(2).toUpperCase()))
    }
  })
  it('leaves case-sensitive encodings unchanged', () => {
    expect(addressKey('solana', SOL)).toBe(SOL)
    expect(addressKey('stellar', XLM)).toBe(XLM)
    expect(addressKey('tron', TRX)).toBe(TRX)
  })
})

describe('describeAddressFormat', () => {
  it('gives a non-empty description for every chain', () => {
    for (const c of CHAINS) expect(describeAddressFormat(c).length).toBeGreaterThan(10)
    for (const c of EVM) expect(describeAddressFormat(c)).toMatch(/0x.*40 hex.*EIP-55/)
    expect(describeAddressFormat('solana')).toMatch(/base58/)
    expect(describeAddressFormat('stellar')).toMatch(/56 .*G/)
    expect(describeAddressFormat('tron')).toMatch(/34 .*T/)
  })
})
