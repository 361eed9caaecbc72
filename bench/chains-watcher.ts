/**
 * bench:chains' watcher process (bench/chains.ts forks it): one ChainWatcher on the database and
 * anvil it is given, alone in its process so its CPU time and memory are its own. The owner of
 * every deposit is a subscriber that credits it to a wallet, as test/chains/watcher.test.ts does.
 * Reports a sample every `sampleMs` over IPC; stops on the message 'stop', answering a last sample
 * taken after a full garbage collection (the process runs with --expose-gc).
 */
import type { ChainConfig } from '../src/chains/config.js'
import { ChainWatcher } from '../src/chains/watcher.js'
import { parseDatabaseUrl } from '../src/config.js'
import type { SignalSink } from '../src/db/unit-of-work.js'
import { DomainHooks } from '../src/events/hooks.js'
import { transactOn } from '../src/events/transact.js'
import { ExchangeRates } from '../src/ledger/rates.js'
import { openDatabase } from '../src/modules/database.js'

export interface WatcherSample {
  at: number
  head: number | undefined
  cursor: number | undefined
  addresses: number
  cpuMs: number
  heapUsed: number
  rss: number
  getLogsCalls: number
  getLogsMs: number
  logs: number
}

const [url, configText, sampleText] = process.argv.slice(2) as [string, string, string]
const config = JSON.parse(configText) as ChainConfig
const noSignals: SignalSink = { signalStatements: () => undefined, committed: () => undefined }
const money = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 0, achDelayMs: 0 }, now: Date.now }

const db = await openDatabase(parseDatabaseUrl(url))
const hooks = new DomainHooks(
  [
    {
      'chain.deposit_confirmed': async (_tx, event) => {
        if (event.ownerType === 'wallet') event.credited = { type: 'wallet', id: event.ownerId }
      },
    },
  ],
  { publicUrl: () => 'http://127.0.0.1', money },
)
const quiet = (_details: object, _message: string) => undefined
const loud = (details: object, message: string) => process.stderr.write(`[watcher] ${message} ${JSON.stringify(details)}\n`)
const watcher = new ChainWatcher(config, { db, transact: transactOn(db, noSignals, hooks), log: { info: quiet, warn: loud, error: loud } })

let getLogsCalls = 0
let getLogsMs = 0
let logs = 0
const transfers = watcher.rpc.transfers.bind(watcher.rpc)
watcher.rpc.transfers = async (...args: Parameters<typeof transfers>) => {
  const started = performance.now()
  const found = await transfers(...args)
  getLogsMs += performance.now() - started
  getLogsCalls++
  logs += found.length
  return found
}

function sample(): WatcherSample {
  const status = watcher.status()
  const cpu = process.cpuUsage()
  const memory = process.memoryUsage()
  return { at: Date.now(), head: status.head, cursor: status.cursor, addresses: status.addresses, cpuMs: (cpu.user + cpu.system) / 1000, heapUsed: memory.heapUsed, rss: memory.rss, getLogsCalls, getLogsMs, logs }
}

await watcher.start()
const timer = setInterval(() => process.send?.({ sample: sample() }), Number(sampleText))
process.on('message', (message) => {
  if (message !== 'stop') return
  clearInterval(timer)
  // The heap the watcher keeps, without the garbage a collection would take.
  global.gc?.()
  const retained = sample()
  void watcher
    .stop()
    .then(() => db.destroy())
    .then(() => process.send?.({ stopped: retained }, () => process.exit(0)))
})
process.send?.({ started: sample() })
