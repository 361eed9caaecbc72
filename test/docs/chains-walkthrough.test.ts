// vitest: sqlite project only — the walk-through runs the server on SQLite whatever the run.
import { spawn } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { afterAll, expect, it } from 'vitest'
import { cleanUp, ROOT, serviceEnv, tempDir, track, waitUntil } from '../processes.js'
import { freePort } from '../helpers/private-postgres.js'
import { fences, sectionOf } from './markdown.js'

/**
 * Runs docs/chains.md's walk-through from its own text: its sh blocks, one after the other in one
 * bash in the repository (variables carry over), with free ports for anvil and the server
 * instead of 8545 and 3000, and without `npm ci && npm run build` (the run has built dist/).
 */

const GUIDE = readFileSync(join(ROOT, 'docs', 'chains.md'), 'utf8')

let shellPid: number | undefined
let workDir: string | undefined

afterAll(() => {
  // bash runs in a process group of its own, with anvil and the server it started in the background.
  if (shellPid !== undefined) {
    try {
      process.kill(-shellPid, 'SIGKILL')
    } catch {
      // the group is gone already
    }
  }
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true })
  cleanUp()
})

it("docs/chains.md's walk-through, run as written, ends with the deposit drained to an outside address: paid out on chain once, processed, the recipient paid exactly, the ledger verified", async () => {
  const sh = fences(sectionOf(GUIDE, '### Walk-through')).filter((block) => block.info === 'sh')
  expect(sh.length).toBeGreaterThanOrEqual(6)
  const install = 'npm ci && npm run build\n'
  expect(sh[0]?.text.startsWith(install), 'the first block installs and builds').toBe(true)
  const anvilPort = String(await freePort())
  const serverPort = String(await freePort())
  const texts = sh.map((block, index) => (index === 0 ? block.text.slice(install.length) : block.text).replaceAll('8545', anvilPort).replaceAll('3000', serverPort))
  const anvilStart = texts[0] ?? ''
  expect(anvilStart).toContain('npx anvil ')
  texts[0] = anvilStart.replace('npx anvil ', `npx anvil --port ${anvilPort} `)

  const started = performance.now()
  // The reader is in the clone; the blocks' files go to the folder the first one makes ($W), the steps' to one of the test's.
  const steps = tempDir('chains-walkthrough-')
  const bash = track(spawn('bash', [], { cwd: ROOT, env: serviceEnv({ RPC_URL: `http://127.0.0.1:${anvilPort}` }), detached: true }))
  shellPid = bash.pid
  let out = ''
  let err = ''
  bash.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  bash.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
  const transcript = () => `stdout:\n${out}\nstderr:\n${err}\nserver.log:\n${workDir === undefined ? '' : readOr(join(workDir, 'server.log'))}`
  bash.stdin.write('set -euo pipefail\n')
  for (const [index, text] of texts.entries()) {
    const file = `step-${index}.sh`
    writeFileSync(join(steps, file), `${text}\n`)
    bash.stdin.write(`. ${join(steps, file)} </dev/null\nprintf '\\n::step ${index} done %s\\n' "$W"\n`)
    // A block's bound covers npx's first run on a fresh machine, which installs and builds the package.
    const ended = await waitUntil(`the end of block ${index + 1}\n${transcript()}`, () => (bash.exitCode !== null ? 'exited' : new RegExp(`::step ${index} done (\\S+)`).exec(out)?.[1]), 180_000, 50)
    if (ended === 'exited') throw new Error(`bash exited ${bash.exitCode} in block ${index + 1}\n${transcript()}`)
    workDir = ended
  }
  const seconds = (performance.now() - started) / 1000
  console.log(`docs/chains.md walk-through: ${seconds.toFixed(1)} s from anvil's start to the last status`)

  const db = new SQLite(join(workDir ?? '', 'live.db'), { readonly: true })
  try {
    const deposits = db.prepare('select status, amount, owner_type, credited_type from chain_deposits').all()
    expect(deposits).toEqual([{ status: 'confirmed', amount: '25500000', owner_type: 'liquidation_address', credited_type: 'drain' }])
    expect(db.prepare('select state, amount, outgoing_amount from drains').all()).toEqual([{ state: 'payment_processed', amount: '25500000', outgoing_amount: '25500000' }])
    const payouts = db.prepare('select status, amount, to_address, tx_hash from chain_payouts').all() as { tx_hash: string }[]
    expect(payouts).toEqual([{ status: 'confirmed', amount: '25500000', to_address: '0x00000000000000000000000000000000000a11ce', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) }])
    expect(out).toContain(`payment_processed ${payouts[0]?.tx_hash}\n25.5\n`)
  } finally {
    db.close()
  }
  const statuses = out.split('\n').filter((line) => line.startsWith('base: '))
  expect(statuses.every((line) => line === 'base: ok'), transcript()).toBe(true)
  expect(out).toContain('confirmed 1')
  expect(out).toContain('live: ok')
}, 480_000)

function readOr(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}
