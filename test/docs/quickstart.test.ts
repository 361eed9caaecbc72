// vitest: sqlite project only — the README's Quickstart runs the server on SQLite whatever the run.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { Socket } from 'node:net'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { cleanUp, freshDb, ROOT, serviceEnv, track, waitUntil } from '../processes.js'
import { startServerProcess } from '../helpers/server-process.js'
import { freePort } from '../helpers/private-postgres.js'
import { type Fence, fences, sectionOf } from './markdown.js'

/**
 * Runs the README's Quickstart from its own text, so the section cannot drift from what works:
 * its sh blocks are typed, one after the other, into one bash (so variables carry from step to
 * step), with the variables the section asks the reader to set taken from a real server.
 */

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
/** Where the reader is told to save the receiver, and the line that starts it. */
const RECEIVER_FILE = 'receiver.mjs'
/** The variables the section's prose asks the reader to set, e.g. `BASE=… KEY=… SECRET=… HOOK_PORT=4000`. */
const READER_VARIABLES = ['BASE', 'KEY', 'SECRET', 'HOOK_PORT']

let shell: ChildProcessWithoutNullStreams | undefined
let workDir: string | undefined

afterAll(() => {
  // bash runs in a process group of its own, with the receiver it started in the background.
  if (shell?.pid !== undefined) {
    try {
      process.kill(-shell.pid, 'SIGKILL')
    } catch {
      // the group is gone already
    }
  }
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true })
  cleanUp()
})

function accepts(port: number): Promise<true | undefined> {
  return new Promise((resolve) => {
    const socket = new Socket()
    socket.once('error', () => resolve(undefined))
    socket.connect(port, '127.0.0.1', () => {
      socket.destroy()
      resolve(true)
    })
  })
}

it('the README Quickstart, run as written, ends with the receiver printing a verified customer.created', async () => {
  const section = sectionOf(README, '## Quickstart\n')
  /** The README line the section's first line is on, for messages that point at a block. */
  const sectionLine = README.slice(0, README.indexOf(section)).split('\n').length
  const blocks = fences(section)
  const sh = blocks.filter((block) => block.info === 'sh')
  const js = blocks.filter((block) => block.info === 'js')
  expect(blocks.every((block) => block.info === 'sh' || block.info === 'js'), 'Quickstart blocks are ```sh or ```js').toBe(true)
  // The first block starts the server; the test starts what `npm start` runs instead, on a database of its own.
  expect(sh[0]?.text).toBe('npm start')
  const packageJson: unknown = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  expect(packageJson).toMatchObject({ scripts: { start: 'exec node dist/server.js' } })
  expect(js).toHaveLength(1)
  const receiverStart = sh.findIndex((block) => new RegExp(`\\bnode ${RECEIVER_FILE.replace('.', '\\.')} &$`).test(block.text))
  expect(receiverStart, `a sh block starts "node ${RECEIVER_FILE} &"`).toBeGreaterThan(0)
  const documented = [...section.matchAll(/`((?:[A-Z_]+=\S+\s*)+)`/g)].flatMap((match) => [...(match[1] ?? '').matchAll(/([A-Z_]+)=/g)].map((m) => m[1]))
  expect(documented, 'the prose names the variables the reader sets').toEqual(READER_VARIABLES)

  const started = performance.now()
  const { url } = freshDb('devplatform-quickstart-')
  const server = await startServerProcess({ DATABASE_URL: url, NODE_ENV: 'development', LOG_LEVEL: 'info' }, { expectDevKey: true })
  const key = server.devKey
  if (key === undefined) throw new Error('the server printed no development key')
  const hookPort = await freePort()

  // The reader's folder is the repository: a folder inside it (so receiver.mjs finds
  // node_modules), with dist/ linked in (so `node dist/cli/index.js` is the built CLI).
  mkdirSync(join(ROOT, '.scratch'), { recursive: true })
  workDir = mkdtempSync(join(ROOT, '.scratch', 'quickstart-'))
  symlinkSync(join(ROOT, 'dist'), join(workDir, 'dist'))
  writeFileSync(join(workDir, RECEIVER_FILE), `${js[0]?.text ?? ''}\n`)

  const env = serviceEnv({ DATABASE_URL: url, BASE: server.baseUrl, KEY: key['x-client-key'], SECRET: key['x-client-secret'], HOOK_PORT: String(hookPort) })
  const bash = track(spawn('bash', [], { cwd: workDir, env, detached: true }))
  shell = bash
  let out = ''
  let err = ''
  bash.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  bash.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
  const transcript = () => `stdout:\n${out}\nstderr:\n${err}`
  const watchers = new Set<() => void>()
  bash.stdout.on('data', () => watchers.forEach((watch) => watch()))
  bash.on('close', () => watchers.forEach((watch) => watch()))
  /** Resolves with the first stdout line `found` accepts; fails at once if bash exits first. */
  function outputLine<T>(what: string, found: (line: string) => T | undefined, timeoutMs = 30_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`no ${what} within ${timeoutMs} ms\n${transcript()}`)), timeoutMs)
      const finish = (error: Error | undefined, value?: T) => {
        clearTimeout(timer)
        watchers.delete(check)
        if (error !== undefined) reject(error)
        else if (value !== undefined) resolve(value)
      }
      const check = () => {
        for (const line of out.split('\n')) {
          const value = found(line)
          if (value !== undefined) return finish(undefined, value)
        }
        if (bash.exitCode !== null || bash.signalCode !== null) finish(new Error(`bash exited (${bash.exitCode ?? bash.signalCode}) before ${what}\n${transcript()}`))
      }
      watchers.add(check)
      check()
    })
  }
  // As a careful reader: any failing command, failing pipe or unset variable stops the run.
  bash.stdin.write('set -euo pipefail\n')

  /** Types one block into the shell (its commands read no input) and waits until it has run. */
  async function type(block: Fence, index: number): Promise<void> {
    const file = `step-${index}.sh`
    writeFileSync(join(workDir ?? ROOT, file), `${block.text}\n`)
    const done = `::step ${index} done`
    // On a line of its own: a block's output may end without a newline (curl prints the answer as is).
    bash.stdin.write(`. ./${file} </dev/null\nprintf '\\n%s\\n' '${done}'\n`)
    await outputLine(`the end of README.md's block at line ${sectionLine + block.line - 1}`, (line) => (line === done ? true : undefined))
  }

  for (const [index, block] of sh.entries()) {
    if (index === 0) continue
    await type(block, index)
    // As the reader would see it come up before going on.
    if (index === receiverStart) await waitUntil(`the receiver to listen on ${hookPort}\n${transcript()}`, () => accepts(hookPort), 10_000)
  }
  bash.stdin.write(`printf '\\n::customer %s\\n' "$CUSTOMER_ID"\n`)
  const firstCustomer = await outputLine('the first customer id', (line) => /^::customer (\S+)$/.exec(line)?.[1])

  const verified = await outputLine('a verified customer.created from the receiver', (line) =>
    line.startsWith('verified customer.created ') ? (JSON.parse(line.slice('verified customer.created '.length)) as { id: string; first_name: string }) : undefined,
  )
  console.log(`README Quickstart: ${Math.round(performance.now() - started)} ms from server start to the verified customer.created`)

  // The event is the second customer's: the first was created before the webhook existed.
  expect(verified.id).not.toBe(firstCustomer)
  const headers = { 'x-client-key': key['x-client-key'], 'x-client-secret': key['x-client-secret'] }
  const customer = await fetch(`${server.baseUrl}/api/v0/customers/${verified.id}`, { headers })
  expect(customer.status).toBe(200)
  expect(await customer.json()).toMatchObject({ id: verified.id, first_name: verified.first_name })
  // Step 3 made a liquidation address for the first customer, and step 1 a key with the higher limit.
  const addresses = await fetch(`${server.baseUrl}/api/v0/customers/${firstCustomer}/liquidation_addresses`, { headers })
  expect(addresses.status).toBe(200)
  expect(await addresses.json()).toEqual([expect.objectContaining({ customer_id: firstCustomer, chain: 'ethereum', state: 'active' })])
  expect(out).toMatch(/pk_test_\S+\s+sk_test_\S+\s+development\s+\S+\s+100000\s+true/)
  expect(out).not.toContain('refused:')

  // "verified" means something: the receiver refuses a request its secret did not sign.
  const forged = await fetch(`http://127.0.0.1:${hookPort}/hook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'webhook-id': 'msg_forged', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` },
    body: JSON.stringify({ id: 'forged', type: 'customer.created', data: {} }),
  })
  expect(forged.status).toBe(400)
  await waitUntil('the receiver to print the refusal', () => (out.includes('refused:') ? true : undefined))
  expect(out.split('\n').filter((l) => l.startsWith('verified customer.created '))).toHaveLength(1)
}, 120_000)
