import { chainWatchers } from '../../chains/watcher.js'
import { LivePayoutQueue } from '../../chains/payouts.js'
import { chainSenders } from '../../chains/sender.js'
import { pino } from 'pino'
import { type Config, ConfigError, defaultPublicUrl, describeDatabase, loadConfig, startError } from '../../config.js'
import { DeliveryNotifier, PostgresSignalListener } from '../../delivery/notifier.js'
import type { Db } from '../../db/database.js'
import { openDatabase } from '../../modules/database.js'
import { createDispatcher, shutdownGraceMs } from '../../delivery/dispatcher.js'
import type { DispatcherLog } from '../../delivery/log.js'
import { transactOn } from '../../events/transact.js'
import { ExchangeRates } from '../../ledger/rates.js'
import { domainHooks } from '../../resources/index.js'
import { MoneyScheduler } from '../../scheduler/money-scheduler.js'
import { handleUncaughtErrors } from '../../uncaught.js'
import type { Command } from '../command.js'
import { UsageError } from '../usage-error.js'

const worker: Command = {
  name: 'worker',
  usage: `  worker
      deliver webhooks and advance drains until SIGTERM or SIGINT, logging JSON lines to stdout
      (no --json); for servers run with WEBHOOK_DISPATCHER=off or DRAIN_SCHEDULER=off; reads the
      server's WEBHOOK_*, DRAIN_*, EXCHANGE_RATE_MAX_AGE_SECONDS and LOG_LEVEL`,
  options: [],
  // The worker prints log lines, not a document.
  refusesJson: { why: 'it logs JSON lines to stdout anyway' },
  run: async ({ env }) => {
    const config = workerConfig(env)
    // Listening before the database opens: a signal during start-up still stops it cleanly.
    const log = pino({ level: config.logLevel })
    handleUncaughtErrors(log)
    const stopSignal = firstStopSignal((signal) => log.info({ signal }, 'webhook worker already stopping'))
    const db = await openDatabase(config.database).catch(startError('DATABASE_URL'))
    try {
      await runWorker(config, db, log, stopSignal)
    } finally {
      await db.destroy()
    }
    return 0
  },
}

export const WORKER_COMMANDS: readonly Command[] = [worker]

/** The worker reads the server's whole configuration, not only DATABASE_URL. */
function workerConfig(env: NodeJS.ProcessEnv): Config {
  try {
    return loadConfig(env)
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`invalid configuration: ${error.message}`)
    throw error
  }
}

/** Resolves with the first SIGTERM or SIGINT; later ones are logged and otherwise ignored. */
function firstStopSignal(onRepeat: (signal: NodeJS.Signals) => void): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let received = false
    const handle = (signal: NodeJS.Signals) => {
      if (received) {
        onRepeat(signal)
        return
      }
      received = true
      resolve(signal)
    }
    process.on('SIGTERM', handle)
    process.on('SIGINT', handle)
  })
}

/**
 * `devplatform worker`: the webhook dispatcher on its own, whatever WEBHOOK_DISPATCHER says (that
 * setting is the server's). Returns once a signal stopped it and every outcome is written.
 */
async function runWorker(config: Config, db: Db, log: DispatcherLog, stopSignal: Promise<NodeJS.Signals>): Promise<void> {
  const notifier = new DeliveryNotifier()
  const dispatcher = createDispatcher(config, db, notifier, log)
  notifier.attach(dispatcher)
  // On PostgreSQL, the servers' commits (new deliveries, deleted webhooks) reach this worker at once.
  const listener = config.database.kind === 'postgres' ? new PostgresSignalListener(config.database.url, dispatcher, log, notifier.origin) : undefined
  await listener?.start()
  dispatcher.start()
  const money = { rates: new ExchangeRates({ maxAgeMs: config.exchangeRateMaxAgeMs }), timings: config.drains, now: Date.now, payouts: new LivePayoutQueue(config.chains) }
  const hooks = domainHooks({ publicUrl: () => config.publicUrl ?? defaultPublicUrl(config.port), money })
  const transact = transactOn(db, notifier, hooks)
  const drains = new MoneyScheduler(db, transact, money, log, config.drains)
  drains.start()
  const watchers = chainWatchers(config.chains, { db, transact, log })
  for (const watcher of watchers) await watcher.start()
  const senders = chainSenders(config.chains, { db, transact, log })
  for (const sender of senders) sender.start()
  log.info(
    {
      database: describeDatabase(config.database),
      timeoutMs: config.webhooks.timeoutMs,
      concurrency: config.webhooks.concurrency,
      perAppConcurrency: config.webhooks.perAppConcurrency,
      perWebhookConcurrency: config.webhooks.perWebhookConcurrency,
      pollIntervalMs: config.webhooks.pollIntervalMs,
    },
    'webhook worker started',
  )
  const signal = await stopSignal
  const graceMs = shutdownGraceMs(config)
  log.info({ signal, graceMs }, 'webhook worker stopping: finishing attempts on the wire')
  await drains.stop()
  await Promise.all([...watchers.map((watcher) => watcher.stop()), ...senders.map((sender) => sender.stop())])
  notifier.detach()
  await listener?.close()
  await dispatcher.stop(graceMs)
  log.info('webhook worker stopped')
}
