#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { type Command, type CommandCall, OPTIONS } from './command.js'
import { UsageError } from './usage-error.js'

/**
 * What devplatform does: each group of commands under the first word that names them, in the
 * order its usage lists them. A group's module is loaded only when its word is called or named by
 * `help GROUP` (help alone, --help, and a missing or unknown command load them all), so a command
 * starts without the other groups' dependencies. A new group is one line here.
 */
const GROUPS: Readonly<Record<string, () => Promise<readonly Command[]>>> = {
  apps: async () => (await import('./commands/apps.js')).APPS_COMMANDS,
  keys: async () => (await import('./commands/keys.js')).KEYS_COMMANDS,
  console: async () => (await import('./commands/console.js')).CONSOLE_COMMANDS,
  deliveries: async () => (await import('./commands/deliveries.js')).DELIVERIES_COMMANDS,
  ledger: async () => (await import('./commands/ledger.js')).LEDGER_COMMANDS,
  rates: async () => (await import('./commands/rates.js')).RATES_COMMANDS,
  chains: async () => (await import('./commands/chains.js')).CHAINS_COMMANDS,
  payouts: async () => (await import('./commands/payouts.js')).PAYOUTS_COMMANDS,
  held: async () => (await import('./commands/held.js')).HELD_COMMANDS,
  sandbox: async () => (await import('./commands/sandbox.js')).SANDBOX_COMMANDS,
  worker: async () => (await import('./commands/worker.js')).WORKER_COMMANDS,
}

/** Whether `command` is the one the words name: its words then its operand, or exactly its words. */
function names(command: Command, words: readonly string[]): boolean {
  return command.operand !== undefined ? command.name.split(' ').every((word, i) => words[i] === word) : command.name === words.join(' ')
}

/**
 * The commands to look the words up in: the group of their first word when it has the command,
 * else every group with help (whose usage, and whose errors for a missing or unknown command,
 * name every command).
 */
async function tableFor(words: readonly string[]): Promise<readonly Command[]> {
  const { withHelp } = await import('./commands/help.js')
  // `help GROUP …` needs only that group's usage.
  if (words[0] === 'help' && words.length > 1) {
    const topic = await groupOf(words[1])
    if (topic?.some((command) => names(command, words.slice(1))) === true || (words.length === 2 && topic !== undefined)) return withHelp(topic)
  }
  const group = await groupOf(words[0])
  if (group?.some((command) => names(command, words)) === true) return group
  return withHelp(await everyCommand())
}

/** The commands of the group a first word names, loaded; undefined for a word that names none. */
async function groupOf(word: string | undefined): Promise<readonly Command[] | undefined> {
  return word !== undefined && Object.hasOwn(GROUPS, word) ? await GROUPS[word]?.() : undefined
}

/** Every group's commands, in the usage's order. */
async function everyCommand(): Promise<readonly Command[]> {
  return (await Promise.all(Object.values(GROUPS).map((load) => load()))).flat()
}

/** The command argv names, and how it was called. */
async function parse(argv: string[]): Promise<{ command: Command; call: Omit<CommandCall, 'env'> }> {
  let parsed
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS })
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  const words = parsed.positionals
  const table = await tableFor(words)
  // A command with an operand is named by the first words; the rest is its operand.
  const command = table.find((candidate) => candidate.operand !== undefined && names(candidate, words)) ?? table.find((candidate) => candidate.operand === undefined && names(candidate, words))
  if (command === undefined) {
    const named = words.join(' ')
    throw new UsageError(named === '' ? `missing command (try: ${(await everyCommand()).map((known) => known.name).join(', ')})` : `unknown command: ${named}`)
  }
  const json = parsed.values.json === true
  const why = command.refusesJson?.why
  if (json && why !== undefined) throw new UsageError(`option --json does not apply to "${command.name}" (${why})`)
  const stray = Object.keys(parsed.values).find((name) => (name === 'json' ? json && command.refusesJson !== undefined : !command.options.some((option) => option === name)))
  if (stray !== undefined) throw new UsageError(`option --${stray} does not apply to "${command.name}"`)
  const operands = words.slice(command.name.split(' ').length)
  if (command.operand === 'FILE' && (operands.length !== 1 || operands[0] === '')) throw new UsageError(`"${command.name}" takes one FILE (got ${operands.length})`)
  return { command, call: { flags: { ...parsed.values, json }, operand: operands.join(' ') } }
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      const { usageOf, withHelp } = await import('./commands/help.js')
      process.stdout.write(usageOf(withHelp(await everyCommand())))
      return 0
    }
    const { command, call } = await parse(argv)
    return await command.run({ ...call, env })
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`devplatform: ${error.message}\n`)
      return 2
    }
    process.stderr.write(`devplatform: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code
})
