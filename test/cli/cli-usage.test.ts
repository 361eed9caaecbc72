// vitest: sqlite project only — each command here is answered or refused before a database is opened (the tests check none was made), and npx only finds the built CLI: the backend cannot change an outcome.
import { existsSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanUp, freshDb, ROOT, tempDir } from '../processes.js'
import { cli, cliWith, createApp, expectUsageError, NPX_TIMEOUT_MS, run } from './cli-run.js'

/** The CLI's usage, its usage errors and its configuration refusals, and `npx devplatform`: the parts of the CLI no backend takes part in. */

afterAll(() => cleanUp())

describe('npx devplatform', () => {
  it('works as `npx devplatform` from the repository root on the same DATABASE_URL', async () => {
    const { url } = freshDb('devplatform-npx-')
    const app = await createApp(url, 'Via npx')
    // A cache of its own: npx links the project into its cache, and a run killed half-way leaves
    // an entry that breaks every later npx of the same name (seen: ENOENT, exit 254).
    const result = await run('npx', ['devplatform', 'apps', 'list', '--json'], url, ROOT, { npm_config_cache: tempDir('devplatform-npx-cache-') }, NPX_TIMEOUT_MS)
    expect(result.code, `stderr: ${result.stderr}`).toBe(0)
    // npm itself may print warnings on stderr; stdout must be the one JSON document.
    expect(result.stdout.split('\n')).toHaveLength(2)
    expect(JSON.parse(result.stdout)).toEqual([app])
  }, 90_000)
})

describe('devplatform help', () => {
  const COMMANDS = ['apps create', 'apps list', 'keys create', 'keys list', 'keys deactivate', 'deliveries list', 'ledger verify', 'worker', 'help']

  /** The command each line of a usage part names: its leading lower-case words (lines indented by two spaces, not six). */
  function commandsIn(text: string): string[] {
    return text
      .split('\n')
      .filter((line) => /^ {2}\S/.test(line))
      .map((line) => /^ {2}([a-z]+(?: [a-z]+)*)(?= |$)/.exec(line)?.[1] ?? line)
  }

  it('help prints the same usage as --help, exit 0, and opens no database', async () => {
    const { url, file } = freshDb('devplatform-help-')
    const help = await cli(url, 'help')
    const dashed = await cli(url, '--help')
    expect(help.code).toBe(0)
    expect(help.stderr).toBe('')
    expect(help.stdout).toBe(dashed.stdout)
    expect(help.stdout).toMatch(/^usage: devplatform /)
    expect(commandsIn(help.stdout)).toEqual(expect.arrayContaining(COMMANDS))
    expect(existsSync(file)).toBe(false)
  })

  // One CLI start per command (25): its bound leaves room for a loaded machine.
  it('help COMMAND prints that command\'s part of the usage, exit 0, for each command the usage lists', async () => {
    const { url, file } = freshDb('devplatform-help-')
    const full = (await cli(url, 'help')).stdout
    for (const command of commandsIn(full)) {
      const result = await cli(url, 'help', ...command.split(' '))
      expect(result.code, command).toBe(0)
      expect(result.stderr, command).toBe('')
      expect(commandsIn(result.stdout), command).toEqual([command])
      expect(full, command).toContain(result.stdout)
    }
    expect(existsSync(file)).toBe(false)
  }, 120_000)

  it('help keys prints the part of each keys command', async () => {
    const { url } = freshDb('devplatform-help-')
    const result = await cli(url, 'help', 'keys')
    expect(result.code).toBe(0)
    expect(commandsIn(result.stdout)).toEqual(['keys create', 'keys list', 'keys deactivate', 'keys rotate', 'keys expire', 'keys scopes'])
  })

  it.each([['frobnicate'], ['apps destroy'], ['key']])('help %s: exit 2, one line naming it', async (topic) => {
    const { url } = freshDb('devplatform-help-')
    const result = await cli(url, 'help', ...topic.split(' '))
    expectUsageError(result)
    expect(result.stderr).toContain(`unknown command: ${topic}`)
  })

  it('help with an option is a usage error', async () => {
    const { url } = freshDb('devplatform-help-')
    expectUsageError(await cli(url, 'help', 'apps', '--json'))
  })
})

describe('devplatform usage errors: one line on stderr, exit code 2, nothing on stdout, no database opened', () => {
  const beforeDatabase: [string, string[]][] = [
    ['unknown flag', ['apps', 'list', '--bogus', '--json']],
    ['a flag of another command', ['apps', 'list', '--app', 'x', '--json']],
    ['--name without a value', ['apps', 'create', '--name']],
    ['unknown command', ['apps', 'destroy', '--json']],
    ['unknown top-level command', ['frobnicate']],
    ['no command at all', []],
    ['a flag of another command on deliveries list', ['deliveries', 'list', '--webhook', 'x', '--app', 'y']],
    ['--json on worker', ['worker', '--json']],
    ['a flag on worker', ['worker', '--limit', '5']],
  ]

  it.each(beforeDatabase)('%s', async (_label, args) => {
    const { url, file } = freshDb('devplatform-usage-')
    expectUsageError(await cli(url, ...args))
    expect(existsSync(file)).toBe(false)
  })
})

describe('devplatform worker refuses a bad configuration before opening the database', () => {
  const cases: [string, Record<string, string>][] = [
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['WEBHOOK_TIMEOUT_MS', { WEBHOOK_TIMEOUT_MS: '5' }],
    ['WEBHOOK_CONCURRENCY', { WEBHOOK_CONCURRENCY: 'many' }],
    ['WEBHOOK_POLL_MS', { WEBHOOK_POLL_MS: '0' }],
    // the worker ignores it, but a typo in the shared environment is still worth a refusal
    ['WEBHOOK_DISPATCHER', { WEBHOOK_DISPATCHER: 'maybe' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }],
  ]

  it.each(cases)('%s=%o: exit 2, one line naming the variable', async (name, vars) => {
    const { url, file } = freshDb('devplatform-cli-')
    const result = await cliWith(vars, url, 'worker')
    expectUsageError(result)
    expect(result.stderr).toContain(name)
    expect(existsSync(file)).toBe(false)
  })
})
