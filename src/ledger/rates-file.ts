import { readFile, stat } from 'node:fs/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/database.js'
import type { LedgerEnvironment } from './ledger.js'
import { type LoadedRate, parseRatesDocument, RatesDocumentError, saveRates } from './rates.js'

/** How often the server looks whether EXCHANGE_RATES_FILE changed. */
export const RATES_FILE_CHECK_MS = 5_000

/** The most bytes a rates file may have (MAX_RATES_PER_DOCUMENT rates fit well within it). */
const MAX_FILE_BYTES = 10 * 1024 * 1024

type Log = Pick<FastifyBaseLogger, 'error' | 'info'>

/** Why a rates file could not be loaded; nothing of it was. */
export class RatesFileError extends Error {}

/** The file's identity and size, after checking it is a readable file of at most MAX_FILE_BYTES. */
async function checkedStats(path: string): Promise<{ ino: number; size: number; mtimeMs: number }> {
  const stats = await stat(path).catch((error: unknown) => {
    throw new RatesFileError(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`)
  })
  if (!stats.isFile()) throw new RatesFileError(`${path} is not a file`)
  if (stats.size > MAX_FILE_BYTES) throw new RatesFileError(`${path} has ${stats.size} bytes; at most ${MAX_FILE_BYTES}`)
  return stats
}

/**
 * The rates of the JSON document in the file at `path` (parseRatesDocument's rules): a file that
 * can't be read is RatesFileError, a bad document RatesDocumentError.
 */
export async function readRatesFile(path: string, options: { now: number; environment?: LedgerEnvironment }): Promise<LoadedRate[]> {
  await checkedStats(path)
  const text = await readFile(path, 'utf8').catch((error: unknown) => {
    throw new RatesFileError(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`)
  })
  return parseRatesDocument(text, options)
}

/**
 * EXCHANGE_RATES_FILE: loaded when the server starts (a file that can't be read or holds a bad
 * rate stops start-up), then again whenever it changes (size, modification time or inode, looked
 * at every RATES_FILE_CHECK_MS), so an operator's job can rewrite it with fresh rates. A bad
 * version later is logged and loads nothing: the rates loaded before stay. Loading is
 * idempotent (saveRates), so several instances reading one file store each rate once.
 */
export class RatesFile {
  private timer: NodeJS.Timeout | undefined
  private seen = ''
  private checking: Promise<void> | undefined

  constructor(
    private readonly path: string,
    private readonly db: Db,
    private readonly log: Log,
    private readonly options: { checkMs?: number; now?: () => number } = {},
  ) {}

  /** Loads the file (throwing RatesFileError when it can't be), then watches it for changes. */
  async start(): Promise<void> {
    await this.load(await this.version())
    this.timer = setInterval(() => void this.check(), this.options.checkMs ?? RATES_FILE_CHECK_MS)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    this.timer = undefined
    await this.checking
  }

  /** One look at the file: loaded again when it changed; a failure is logged, never thrown. */
  private check(): Promise<void> {
    if (this.checking !== undefined) return this.checking
    this.checking = (async () => {
      try {
        const version = await this.version()
        if (version !== this.seen) await this.load(version)
      } catch (error) {
        this.log.error({ err: error, file: this.path }, `${error instanceof Error ? error.message : String(error)}; the exchange rates loaded before stay`)
      } finally {
        this.checking = undefined
      }
    })()
    return this.checking
  }

  private async version(): Promise<string> {
    const stats = await checkedStats(this.path).catch((error: unknown) => {
      throw new RatesFileError(`EXCHANGE_RATES_FILE: ${error instanceof Error ? error.message : String(error)}`)
    })
    return `${stats.ino} ${stats.size} ${stats.mtimeMs}`
  }

  private async load(version: string): Promise<void> {
    try {
      const rates = await readRatesFile(this.path, { now: (this.options.now ?? Date.now)() })
      const { added, unchanged } = await saveRates(this.db, rates)
      this.seen = version
      this.log.info({ file: this.path, added, unchanged }, 'exchange rates loaded from EXCHANGE_RATES_FILE')
    } catch (error) {
      // A bad document is reported once, not at every look (its next change is loaded again);
      // a file or database that failed to answer is tried again at the next look.
      if (error instanceof RatesDocumentError) this.seen = version
      const message = error instanceof Error ? error.message : String(error)
      throw new RatesFileError(`EXCHANGE_RATES_FILE: ${error instanceof RatesFileError ? message : `${this.path}: ${message}`}`)
    }
  }
}
