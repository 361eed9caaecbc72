// vitest: sqlite project only — the README's reader runs the server on its SQLite default.
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { startServerProcess } from '../helpers/server-process.js'
import { cleanUp, freshDb, ROOT, serviceEnv, track } from '../processes.js'
import { fences, sectionOf } from './markdown.js'

/**
 * The README's Money quickstart, run as written: its block typed into bash after the Quickstart's
 * `json` helper, with the Quickstart's variables (BASE, KEY, SECRET and its CUSTOMER_ID) from a
 * real server started as `npm start` starts it. It ends with the balance left and the ledger
 * verified.
 */

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
let workDir: string | undefined

afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true })
  cleanUp()
})

it('the README stays under 15,000 bytes, and its Money quickstart at most 25 lines', () => {
  expect(Buffer.byteLength(README)).toBeLessThanOrEqual(15_000)
  const section = sectionOf(README, '## Money quickstart\n')
  expect(section.trimEnd().split('\n').length - 1).toBeLessThanOrEqual(25)
  // After the webhook one.
  expect(README.indexOf('## Money quickstart\n')).toBeGreaterThan(README.indexOf('## Quickstart\n'))
})

it('the Money quickstart, run as written, prints the balance left and a verified ledger', async () => {
  const blocks = fences(sectionOf(README, '## Money quickstart\n'))
  expect(blocks.map((block) => block.info)).toEqual(['sh'])
  const quickstart = fences(sectionOf(README, '## Quickstart\n'))
  const json = quickstart.flatMap((block) => block.text.split('\n')).find((line) => line.startsWith('json() {'))
  if (json === undefined) throw new Error("the Quickstart's json helper is missing")

  const { url } = freshDb('devplatform-money-quickstart-')
  const server = await startServerProcess({ DATABASE_URL: url, NODE_ENV: 'development', LOG_LEVEL: 'info' }, { expectDevKey: true })
  const key = server.devKey
  if (key === undefined) throw new Error('the server printed no development key')
  // The Quickstart's first customer.
  const customer = await fetch(`${server.baseUrl}/api/v0/customers`, {
    method: 'POST',
    headers: { ...key, 'content-type': 'application/json' },
    body: JSON.stringify({ first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }),
  })
  const { id: customerId } = (await customer.json()) as { id: string }

  // The reader's folder is the repository: dist/ linked in, so `node dist/cli/index.js` is the built CLI.
  mkdirSync(join(ROOT, '.scratch'), { recursive: true })
  workDir = mkdtempSync(join(ROOT, '.scratch', 'money-quickstart-'))
  symlinkSync(join(ROOT, 'dist'), join(workDir, 'dist'))
  const env = serviceEnv({ DATABASE_URL: url, BASE: server.baseUrl, KEY: key['x-client-key'], SECRET: key['x-client-secret'], CUSTOMER_ID: customerId })
  const script = `set -euo pipefail\n${json}\n${blocks[0]?.text ?? ''}\n`
  const { code, out, err } = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const bash = track(spawn('bash', ['-c', script], { cwd: workDir, env }))
    let out = ''
    let err = ''
    bash.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
    bash.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
    bash.on('close', (exit) => resolve({ code: exit, out, err }))
  })
  expect(code, `stdout:\n${out}\nstderr:\n${err}`).toBe(0)
  expect(out.split('\n').filter((line) => line !== '')).toEqual(['60.000000', 'sandbox: ok', 'live: ok'])
  server.child.kill('SIGTERM')
}, 120_000)
