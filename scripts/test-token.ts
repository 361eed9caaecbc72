/**
 * Compiles the tests' stablecoin (test/fixtures/chain/TestStablecoin.sol, OpenZeppelin Contracts
 * from node_modules) with solc-js. The result is committed as TestStablecoin.json because
 * compiling takes seconds; scripts/build-test-token.ts writes it and
 * test/chains/test-token-artifact.test.ts checks the committed one is what this compiles.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import solc from 'solc'
import type { Abi, Hex } from 'viem'

const root = fileURLToPath(new URL('..', import.meta.url))
export const SOURCE_FILE = 'test/fixtures/chain/TestStablecoin.sol'
export const ARTIFACT_FILE = 'test/fixtures/chain/TestStablecoin.json'

export interface TokenArtifact {
  contractName: string
  compiler: string
  abi: Abi
  bytecode: Hex
}

interface CompilerOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[]
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
}

type ImportAnswer = { contents: string } | { error: string }
const compile: (input: string, callbacks: { import: (path: string) => ImportAnswer }) => string = solc.compile
const compilerVersion: () => string = solc.version

/** `@openzeppelin/contracts/...` imports read from node_modules; nothing else is importable. */
function readImport(path: string): ImportAnswer {
  if (!path.startsWith('@openzeppelin/contracts/')) return { error: `not importable: ${path}` }
  return { contents: readFileSync(`${root}node_modules/${path}`, 'utf8') }
}

export function compileTestToken(): TokenArtifact {
  const input = {
    language: 'Solidity',
    sources: { 'TestStablecoin.sol': { content: readFileSync(`${root}${SOURCE_FILE}`, 'utf8') } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      // Pinned rather than the compiler's default, so the bytecode runs on any current chain.
      evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  }
  const output = JSON.parse(compile(JSON.stringify(input), { import: readImport })) as CompilerOutput
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error')
  if (errors.length > 0) throw new Error(errors.map((error) => error.formattedMessage).join('\n'))
  const contract = output.contracts?.['TestStablecoin.sol']?.TestStablecoin
  if (contract === undefined) throw new Error('solc produced no TestStablecoin')
  return { contractName: 'TestStablecoin', compiler: compilerVersion(), abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }
}

/** The artifact as the committed file holds it. */
export function artifactText(artifact: TokenArtifact): string {
  return `${JSON.stringify(artifact, null, 2)}\n`
}
