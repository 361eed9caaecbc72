#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { type Command, type CommandCall, OPTIONS } from './command.js'
import { APPS_COMMANDS } from './commands/apps.js'
import { CHAINS_COMMANDS } from './commands/chains.js'
import { PAYOUTS_COMMANDS } from './commands/payouts.js'
import { DELIVERIES_COMMANDS } from './commands/deliveries.js'
import { usageOf, withHelp } from './commands/help.js'
import { KEYS_COMMANDS } from './commands/keys.js'
import { LEDGER_COMMANDS } from './commands/ledger.js'
import { RATES_COMMANDS } from './commands/rates.js'
import { SANDBOX_COMMANDS } from './commands/sandbox.js'
import { WORKER_COMMANDS } from './commands/worker.js'
import { UsageError } from './usage-error.js'

/** What devplatform does, in the order its usage lists them. */
const COMMANDS: readonly Command[] = [...APPS_COMMANDS, ...KEYS_COMMANDS, ...DELIVERIES_COMMANDS, ...LEDGER_COMMANDS, ...RATES_COMMANDS, ...CHAINS_COMMANDS, ...PAYOUTS_COMMANDS, ...SANDBOX_COMMANDS, ...WORKER_COMMANDS]

const TABLE = withHelp(COMMANDS)

/** The command argv names, and how it was called. */
function parse(argv: string[]): { command: Command; call: Omit<CommandCall, 'env'> } {
  let parsed
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS })
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  const words = parsed.positionals
  // A command with an operand is named by the first words; the rest is its operand.
  const command =
    TABLE.find((candidate) => candidate.operand !== undefined && candidate.name.split(' ').every((word, i) => words[i] === word)) ??
    TABLE.find((candidate) => candidate.operand === undefined && candidate.name === words.join(' '))
  if (command === undefined) {
    const named = words.join(' ')
    throw new UsageError(named === '' ? `missing command (try: ${COMMANDS.map((known) => known.name).join(', ')})` : `unknown command: ${named}`)
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
      process.stdout.write(usageOf(TABLE))
      return 0
    }
    const { command, call } = parse(argv)
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
