/** Writes test/fixtures/chain/TestStablecoin.json from its Solidity source: `npx tsx scripts/build-test-token.ts`. */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ARTIFACT_FILE, artifactText, compileTestToken } from './test-token.js'

const root = fileURLToPath(new URL('..', import.meta.url))
writeFileSync(`${root}${ARTIFACT_FILE}`, artifactText(compileTestToken()))
process.stdout.write(`${ARTIFACT_FILE} written\n`)
