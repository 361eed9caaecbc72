// vitest: sqlite project only — the anvil harness's own tests: a chain and a token, no database.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type AbiFunction, toFunctionSignature } from 'viem'
import { beforeAll, describe, expect, it } from 'vitest'
import { ARTIFACT_FILE, artifactText, compileTestToken, type TokenArtifact } from '../../scripts/test-token.js'
import { TEST_TOKEN_ABI } from '../helpers/test-token.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

describe('the test stablecoin artifact', () => {
  let compiled: TokenArtifact
  // solc-js takes seconds: the reason the artifact is committed.
  beforeAll(() => {
    compiled = compileTestToken()
  }, 60_000)

  it('is what its Solidity source compiles to (if not: npx tsx scripts/build-test-token.ts)', () => {
    expect(readFileSync(`${root}${ARTIFACT_FILE}`, 'utf8')).toBe(artifactText(compiled))
  })

  it('has every function and event the helpers call', () => {
    const signatures = new Set(compiled.abi.filter((item): item is AbiFunction => item.type === 'function').map((item) => toFunctionSignature(item)))
    for (const item of TEST_TOKEN_ABI) {
      if (item.type === 'function') expect(signatures, item.name).toContain(toFunctionSignature(item))
      else expect(compiled.abi.some((entry) => entry.type === item.type && entry.name === item.name), item.name).toBe(true)
    }
  })
})
