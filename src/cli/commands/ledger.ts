import type { Db } from '../../db/database.js'
import { type LedgerEnvironment, verifyLedger } from '../../ledger/ledger.js'
import { answer, type Command } from '../command.js'
import { LEDGER_ENVIRONMENTS, parseLedgerEnvironment } from '../options.js'
import type { Printed, Row } from '../render.js'

const ledgerVerify: Command = {
  name: 'ledger verify',
  usage: `  ledger verify [--environment sandbox|live]
      recompute every ledger balance from its postings and check every entry balances, each
      environment on its own (both by default); exit 1 with the first difference`,
  options: ['environment'],
  run: answer((db, { flags }) => verifyLedgers(db, flags.environment === undefined ? LEDGER_ENVIRONMENTS : [parseLedgerEnvironment(flags.environment, 'ledger verify')])),
}

export const LEDGER_COMMANDS: readonly Command[] = [ledgerVerify]

/** `ledger verify`: each environment's first difference, or ok; exit 1 when any has one. */
async function verifyLedgers(db: Db, environments: readonly LedgerEnvironment[]): Promise<Printed> {
  const results: Row[] = []
  for (const environment of environments) {
    const difference = await verifyLedger(db, environment)
    // BigInts as decimal text: JSON has no integer past 2^53.
    const described = difference === undefined ? undefined : Object.fromEntries(Object.entries(difference).map(([name, value]) => [name, typeof value === 'bigint' ? value.toString() : value]))
    results.push({ environment, ok: difference === undefined, ...(described === undefined ? {} : { difference: described }) })
  }
  const text = results
    .map((result) => `${String(result.environment)}: ${result.ok === true ? 'ok' : `difference ${JSON.stringify(result.difference)}`}`)
    .join('\n')
  return { json: results, text: `${text}\n`, exitCode: results.every((result) => result.ok === true) ? 0 : 1 }
}
