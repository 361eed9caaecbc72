/**
 * `npm run bench:webhooks`: the delivery benchmark (bench/webhooks.ts), then the isolation
 * benchmark (bench/isolation.ts), each in a process of its own so neither inherits the other's
 * heap. `--only delivery` or `--only isolation` runs one of them.
 *
 *   npm run bench:webhooks [-- --seconds 10] [--isolation-seconds 20] [--rss-seconds 60] [--only delivery|isolation]
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    seconds: { type: 'string' },
    'isolation-seconds': { type: 'string' },
    'rss-seconds': { type: 'string' },
  },
})
if (values.only !== undefined && values.only !== 'delivery' && values.only !== 'isolation') {
  console.error(`--only must be delivery or isolation (got ${JSON.stringify(values.only)})`)
  process.exit(2)
}

/** Runs a bench script under the same loader (tsx) as this one; resolves with its exit code. */
function run(script: string, args: string[]): Promise<number> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(new URL(script, import.meta.url)), ...args], { stdio: 'inherit' })
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)))
}

const option = (name: string, value: string | undefined) => (value === undefined ? [] : [name, value])

if (values.only !== 'isolation') {
  const code = await run('./webhooks.ts', option('--seconds', values.seconds))
  if (code !== 0) process.exit(code)
}
if (values.only !== 'delivery') {
  const code = await run('./isolation.ts', [...option('--seconds', values['isolation-seconds']), ...option('--rss-seconds', values['rss-seconds'])])
  if (code !== 0) process.exit(code)
}
