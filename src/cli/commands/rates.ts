import type { Db } from '../../db/database.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { listRates, RatesDocumentError, saveRates } from '../../ledger/rates.js'
import { RatesFileError, readRatesFile } from '../../ledger/rates-file.js'
import { answer, type Command } from '../command.js'
import { parseLedgerEnvironment, parseLimit } from '../options.js'
import { type Printed, rows } from '../render.js'
import { UsageError } from '../usage-error.js'

const ratesLoad: Command = {
  name: 'rates load',
  usage: `  rates load FILE [--environment sandbox|live]
      load exchange rates from a JSON file, all or none: an array of {environment, from, to,
      midmarket_rate, buy_rate, sell_rate, timestamp}; --environment for rates naming none`,
  options: ['environment'],
  operand: 'FILE',
  run: answer((db, { flags, operand }) => loadRates(db, operand, flags.environment === undefined ? undefined : parseLedgerEnvironment(flags.environment, 'rates load'))),
}

const ratesList: Command = {
  name: 'rates list',
  usage: `  rates list [--environment sandbox|live] [--limit N]
      the loaded exchange rates, newest first (N from 1 to 1000, default 50)`,
  options: ['environment', 'limit'],
  run: answer(async (db, { flags }) => {
    const environment = flags.environment === undefined ? undefined : parseLedgerEnvironment(flags.environment, 'rates list')
    const rates = await listRates(db, { ...(environment === undefined ? {} : { environment }), limit: parseLimit(flags.limit) })
    return rows(rates.map((rate) => ({ environment: rate.environment, from: rate.from, to: rate.to, midmarket_rate: rate.midmarket, buy_rate: rate.buy, sell_rate: rate.sell, timestamp: rate.asOf, loaded_at: rate.loadedAt })))
  }),
}

export const RATES_COMMANDS: readonly Command[] = [ratesLoad, ratesList]

/** `rates load`: every rate of the file, or none (docs/exchange-rates.md). */
async function loadRates(db: Db, file: string, environment: LedgerEnvironment | undefined): Promise<Printed> {
  try {
    const rates = await readRatesFile(file, { now: Date.now(), ...(environment === undefined ? {} : { environment }) })
    const result = await saveRates(db, rates)
    return { json: result, text: `${result.added} rates loaded, ${result.unchanged} already loaded\n` }
  } catch (error) {
    if (error instanceof RatesDocumentError) throw new UsageError(`${file}: ${error.message}`)
    if (error instanceof RatesFileError) throw new UsageError(error.message)
    throw error
  }
}
