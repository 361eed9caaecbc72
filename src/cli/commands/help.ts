import { DEFAULT_DATABASE_URL } from '../../config.js'
import type { Command } from '../command.js'
import { UsageError } from '../usage-error.js'

/** The full usage: every command's part, in the table's order. */
export function usageOf(table: readonly Command[]): string {
  return `usage: devplatform <command> [--json]
${table.map((command) => command.usage).join('\n')}
The database is DATABASE_URL (default ${DEFAULT_DATABASE_URL}).
`
}

/**
 * What `help TOPIC` prints: the full usage without a topic, else the parts of the commands the
 * topic names, a whole command (`keys create`) or its first word (`keys`, for all three).
 */
function helpText(table: readonly Command[], topic: string): string {
  if (topic === '') return usageOf(table)
  const parts = table.filter((command) => command.name === topic || command.name.startsWith(`${topic} `))
  if (parts.length === 0) throw new UsageError(`unknown command: ${topic} (try: devplatform help)`)
  return `${parts.map((command) => command.usage).join('\n')}\n`
}

/** The table: the commands given, then `help`, which prints their usage and its own. */
export function withHelp(commands: readonly Command[]): readonly Command[] {
  const help: Command = {
    name: 'help',
    usage: `  help [COMMAND]
      this usage, or one command's part of it (also --help or -h anywhere)`,
    options: [],
    operand: 'TOPIC',
    // help opens no database and takes no option, so a stray one is a mistake worth naming.
    refusesJson: {},
    run: async ({ operand }) => {
      process.stdout.write(helpText(table, operand))
      return 0
    },
  }
  const table = [...commands, help]
  return table
}
