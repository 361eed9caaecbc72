#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { pino } from 'pino'
import { ENVIRONMENTS, type Environment, hourlyLimitOf } from '../keys/credentials.js'
import { domainHooks, isScope, SCOPES } from '../resources/index.js'
import { type Config, ConfigError, DEFAULT_DATABASE_URL, type DatabaseLocation, defaultPublicUrl, describeDatabase, loadConfig, loadDrainConfig, parseDatabaseUrl, productImagesDirOf, publicUrlOf, startError } from '../config.js'
import { DeliveryNotifier, PostgresSignalListener } from '../delivery/notifier.js'
import { type Db } from '../db/database.js'
import { openDatabase } from '../modules/database.js'
import { type ApiKey, AppsRepository } from '../apps/repository.js'
import { createDispatcher, shutdownGraceMs } from '../delivery/dispatcher.js'
import type { DispatcherLog } from '../delivery/log.js'
import { type LedgerEnvironment, verifyLedger } from '../ledger/ledger.js'
import { DomainError } from '../errors.js'
import type { DomainHooks } from '../events/hooks.js'
import { transactOn } from '../events/transact.js'
import { ExchangeRates, listRates, RatesDocumentError, saveRates } from '../ledger/rates.js'
import { RatesFileError, readRatesFile } from '../ledger/rates-file.js'
import { CustomersRepository } from '../resources/customers/repository.js'
import { type DrainTimings, receiveDeposit } from '../resources/drains/lifecycle.js'
import { receiveFunds } from '../resources/transfers/lifecycle.js'
import { TransfersRepository } from '../resources/transfers/repository.js'
import { AmountError, type Currency, MAX_AMOUNT_UNITS, parseAmount } from '../ledger/amount.js'
import { MoneyScheduler } from '../scheduler/money-scheduler.js'
import { DirectoryImageStore } from '../resources/products/image-store.js'
import { type AuditDelivery, type AuditWebhook, findWebhookForAudit, listDeliveriesForAudit } from './deliveries.js'
import { AppDeletionRefused, deleteApp } from './delete-app.js'
import { expiryOf, graceSecondsOf, MAX_GRACE_SECONDS } from './key-options.js'
import { UsageError } from './usage-error.js'
import { handleUncaughtErrors } from '../uncaught.js'


/** Each command's part of the usage, in the order the full usage lists them; `help COMMAND` prints one. */
const COMMAND_USAGE: readonly { command: string; text: string }[] = [
  { command: 'apps create', text: '  apps create --name NAME' },
  { command: 'apps list', text: '  apps list' },
  {
    command: 'apps delete',
    text: `  apps delete --app APP_ID --confirm APP_ID
      delete an application: its keys, customers, liquidation addresses, taxes and products (with
      their images) go, its webhooks stop at once; its ledger, drains, wallets, events and delivery
      logs stay; refused while it holds live money`,
  },
  { command: 'keys create', text: '  keys create --app APP_ID [--environment production|development] [--scopes a,b] [--rate-limit N]' },
  { command: 'keys list', text: '  keys list --app APP_ID' },
  { command: 'keys deactivate', text: '  keys deactivate --key CLIENT_KEY_OR_ID' },
  {
    command: 'keys rotate',
    text: `  keys rotate --key CLIENT_KEY_OR_ID [--grace SECONDS]
      a new client secret, printed once; the old one keeps working for --grace seconds (0 to
      ${MAX_GRACE_SECONDS}, default 86400), and one rotated before stops at once`,
  },
  {
    command: 'keys expire',
    text: `  keys expire --key CLIENT_KEY_OR_ID (--at ISO_8601_TIME | --in SECONDS | --never)
      the key is refused from then on (403 API key has expired); --never removes the expiry`,
  },
  {
    command: 'keys scopes',
    text: `  keys scopes --key CLIENT_KEY_OR_ID --scopes a,b
      replaces the key's scopes (the names keys create takes)`,
  },
  {
    command: 'deliveries list',
    text: `  deliveries list --webhook WEBHOOK_ID [--limit N]
      a webhook's newest deliveries (N from 1 to 1000, default 50) with every attempt;
      any application's webhook, deleted ones too`,
  },
  {
    command: 'ledger verify',
    text: `  ledger verify [--environment sandbox|live]
      recompute every ledger balance from its postings and check every entry balances, each
      environment on its own (both by default); exit 1 with the first difference`,
  },
  {
    command: 'rates load',
    text: `  rates load FILE [--environment sandbox|live]
      load exchange rates from a JSON file, all or none: an array of {environment, from, to,
      midmarket_rate, buy_rate, sell_rate, timestamp}; --environment for rates naming none`,
  },
  {
    command: 'rates list',
    text: `  rates list [--environment sandbox|live] [--limit N]
      the loaded exchange rates, newest first (N from 1 to 1000, default 50)`,
  },
  {
    command: 'sandbox deposit',
    text: `  sandbox deposit --app APP_ID --customer CUSTOMER_ID --address LIQUIDATION_ADDRESS_ID --amount DECIMAL [--tx-hash HASH] [--from ADDRESS]
      a sandbox deposit to a liquidation address, as simulate_deposit takes it; prints the drain`,
  },
  {
    command: 'sandbox funds',
    text: `  sandbox funds --app APP_ID --transfer TRANSFER_ID [--amount DECIMAL]
      the funds a sandbox transfer or payment intent awaits arrive, as simulate_funds takes them
      (--amount: the transfer's own by default; required when it is flexible); prints the transfer`,
  },
  {
    command: 'worker',
    text: `  worker
      deliver webhooks and advance drains until SIGTERM or SIGINT, logging JSON lines to stdout
      (no --json); for servers run with WEBHOOK_DISPATCHER=off or DRAIN_SCHEDULER=off; reads the
      server's WEBHOOK_*, DRAIN_*, EXCHANGE_RATE_MAX_AGE_SECONDS and LOG_LEVEL`,
  },
  {
    command: 'help',
    text: `  help [COMMAND]
      this usage, or one command's part of it (also --help or -h anywhere)`,
  },
]

const USAGE = `usage: devplatform <command> [--json]
${COMMAND_USAGE.map((part) => part.text).join('\n')}
The database is DATABASE_URL (default ${DEFAULT_DATABASE_URL}).`

/**
 * What `help TOPIC` prints: the full usage without a topic, else the parts of the commands the
 * topic names, a whole command (`keys create`) or its first word (`keys`, for all three).
 */
function helpText(topic: string): string {
  if (topic === '') return `${USAGE}\n`
  const parts = COMMAND_USAGE.filter((part) => part.command === topic || part.command.startsWith(`${topic} `))
  if (parts.length === 0) throw new UsageError(`unknown command: ${topic} (try: devplatform help)`)
  return `${parts.map((part) => part.text).join('\n')}\n`
}

/** `deliveries list` shows this many deliveries unless --limit says otherwise. */
const DEFAULT_DELIVERY_LIMIT = 50
const MAX_DELIVERY_LIMIT = 1000

type Row = Record<string, unknown>
type Output = Row | Row[]

/** What a command prints: the document for --json, the text otherwise; and its exit code (0 unless said). */
interface Printed {
  json: unknown
  text: string
  exitCode?: number
}

function rows(output: Output): Printed {
  return { json: output, text: table(output) }
}

interface Flags {
  json: boolean
  name?: string
  app?: string
  environment?: string
  scopes?: string
  'rate-limit'?: string
  key?: string
  webhook?: string
  limit?: string
  customer?: string
  address?: string
  amount?: string
  'tx-hash'?: string
  from?: string
  transfer?: string
  grace?: string
  at?: string
  in?: string
  never?: boolean
  confirm?: string
  /** not an option: the FILE of `rates load` */
  file?: string
}

const FLAGS_BY_COMMAND: Record<string, readonly (keyof Flags)[]> = {
  'apps create': ['name'],
  'apps list': [],
  'apps delete': ['app', 'confirm'],
  'keys create': ['app', 'environment', 'scopes', 'rate-limit'],
  'keys list': ['app'],
  'keys deactivate': ['key'],
  'keys rotate': ['key', 'grace'],
  'keys expire': ['key', 'at', 'in', 'never'],
  'keys scopes': ['key', 'scopes'],
  'deliveries list': ['webhook', 'limit'],
  'ledger verify': ['environment'],
  'rates load': ['environment'],
  'rates list': ['environment', 'limit'],
  'sandbox deposit': ['app', 'customer', 'address', 'amount', 'tx-hash', 'from'],
  'sandbox funds': ['app', 'transfer', 'amount'],
  worker: [],
}

function parse(argv: string[]): { command: string; flags: Flags; topic?: string } {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean', default: false },
        name: { type: 'string' },
        app: { type: 'string' },
        environment: { type: 'string' },
        scopes: { type: 'string' },
        'rate-limit': { type: 'string' },
        key: { type: 'string' },
        webhook: { type: 'string' },
        limit: { type: 'string' },
        customer: { type: 'string' },
        address: { type: 'string' },
        amount: { type: 'string' },
        'tx-hash': { type: 'string' },
        from: { type: 'string' },
        transfer: { type: 'string' },
        grace: { type: 'string' },
        at: { type: 'string' },
        in: { type: 'string' },
        never: { type: 'boolean' },
        confirm: { type: 'string' },
      },
    })
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  // `rates load FILE`: the one command with an argument after its name.
  const loadsRates = parsed.positionals[0] === 'rates' && parsed.positionals[1] === 'load'
  const command = loadsRates ? 'rates load' : parsed.positionals.join(' ')
  if (parsed.positionals[0] === 'help') {
    // help opens no database and takes no option, so a stray one is a mistake worth naming.
    const option = Object.keys(parsed.values).find((name) => name !== 'json' || parsed.values.json === true)
    if (option !== undefined) throw new UsageError(`option --${option} does not apply to "help"`)
    return { command: 'help', flags: { json: false }, topic: parsed.positionals.slice(1).join(' ') }
  }
  const allowed = FLAGS_BY_COMMAND[command]
  if (allowed === undefined) {
    throw new UsageError(command === '' ? `missing command (try: ${Object.keys(FLAGS_BY_COMMAND).join(', ')})` : `unknown command: ${command}`)
  }
  // The worker prints log lines, not a document.
  if (command === 'worker' && parsed.values.json === true) throw new UsageError('option --json does not apply to "worker" (it logs JSON lines to stdout anyway)')
  const flags: Flags = { ...parsed.values, json: parsed.values.json === true }
  for (const name of Object.keys(parsed.values)) {
    if (name !== 'json' && !allowed.includes(name as keyof Flags)) throw new UsageError(`option --${name} does not apply to "${command}"`)
  }
  if (loadsRates) {
    const files = parsed.positionals.slice(2)
    if (files.length !== 1 || files[0] === '') throw new UsageError(`"rates load" takes one FILE (got ${files.length})`)
    flags.file = files[0]
  }
  return { command, flags }
}

function required(flags: Flags, name: 'name' | 'app' | 'key' | 'webhook' | 'customer' | 'address' | 'amount' | 'scopes' | 'transfer'): string {
  const value = flags[name]
  if (value === undefined || value.trim() === '') throw new UsageError(`missing required option --${name}`)
  return value
}

/** A key as the CLI prints it; the secret only right after creation. */
function keyOutput(key: ApiKey & { client_secret?: string }): Row {
  return {
    id: key.id,
    app_id: key.app_id,
    client_key: key.client_key,
    ...(key.client_secret === undefined ? {} : { client_secret: key.client_secret }),
    environment: key.environment,
    scopes: key.scopes,
    rate_limit_per_hour: hourlyLimitOf(key),
    active: key.active,
    expires_at: key.expires_at,
    previous_secret_expires_at: key.previous_secret_expires_at,
    created_at: key.created_at,
  }
}

function parseScopes(text: string | undefined): string[] {
  if (text === undefined) return [...SCOPES]
  const names = text.split(',').map((s) => s.trim()).filter((s) => s !== '')
  if (names.length === 0) throw new UsageError('--scopes needs at least one scope')
  const unknown = names.filter((name) => !isScope(name))
  if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`)
  return [...new Set(names.filter(isScope))]
}

function parseEnvironment(text: string | undefined): Environment {
  if (text === undefined) return 'production'
  const found = ENVIRONMENTS.find((e) => e === text)
  if (found === undefined) throw new UsageError(`--environment must be production or development (got ${text})`)
  return found
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_DELIVERY_LIMIT
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1 || Number(text) > MAX_DELIVERY_LIMIT) {
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_DELIVERY_LIMIT} (got ${text})`)
  }
  return Number(text)
}

function parseRateLimit(text: string | undefined): number | null {
  if (text === undefined) return null
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) throw new UsageError(`--rate-limit must be a whole number of requests per hour, at least 1 (got ${text})`)
  return Number(text)
}

/** The audit view's one-line header: which webhook, its state and its counters. */
function auditHeader(webhook: AuditWebhook, shown: number): string {
  const state = webhook.deleted_at !== null ? `inactive (deleted at ${webhook.deleted_at})` : webhook.isActive ? 'active' : 'inactive'
  const stats = webhook.delivery_stats
  return (
    `webhook ${webhook.id} ${JSON.stringify(webhook.name)} ${webhook.url} (app ${webhook.app_id}), ${state}; ` +
    `${stats.total_events} events, ${stats.successful_deliveries} delivered, ${stats.failed_deliveries} failed attempts; ` +
    `${circuitText(webhook.circuit)}; ` +
    `newest ${shown} deliveries:\n`
  )
}

function circuitText(circuit: AuditWebhook['circuit']): string {
  if (circuit.state === 'closed') return `circuit closed (${circuit.consecutive_failures} failures in a row)`
  return `circuit OPEN after ${circuit.consecutive_failures} failures in a row: one attempt at a time${circuit.retry_at === null ? '' : `, next not before ${circuit.retry_at}`}`
}

function auditRow(delivery: AuditDelivery): Row {
  const last = delivery.attempt_log.at(-1)
  return {
    id: delivery.id,
    event_type: delivery.event_type,
    event_id: delivery.event_id,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.next_attempt_at,
    last_outcome: last?.outcome,
    last_status_code: last?.status_code,
  }
}

async function run(command: string, flags: Flags, db: Db, env: NodeJS.ProcessEnv): Promise<Printed> {
  const apps = new AppsRepository(db)
  switch (command) {
    case 'apps create': {
      const app = await apps.createApp(required(flags, 'name'))
      return rows({ ...app })
    }
    case 'apps list':
      return rows((await apps.listApps()).map((app) => ({ ...app })))
    case 'keys create': {
      const appId = required(flags, 'app')
      const environment = parseEnvironment(flags.environment)
      const scopes = parseScopes(flags.scopes)
      const rateLimitOverride = parseRateLimit(flags['rate-limit'])
      if ((await apps.findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
      const printed = rows(keyOutput(await apps.createKey({ appId, environment, scopes, rateLimitOverride })))
      return { ...printed, text: `${printed.text}The client secret is shown only now; store it safely.\n` }
    }
    case 'keys list': {
      const appId = required(flags, 'app')
      if ((await apps.findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
      return rows((await apps.listKeys(appId)).map(keyOutput))
    }
    case 'keys deactivate': {
      const key = await apps.deactivateKey(required(flags, 'key'))
      if (key === undefined) throw new UsageError(`unknown key: ${flags.key ?? ''}`)
      return rows(keyOutput(key))
    }
    case 'keys rotate': {
      const graceSeconds = graceSecondsOf(flags.grace)
      const rotated = await apps.rotateSecret((await activeKey(apps, flags)).id, graceSeconds * 1000)
      if (rotated === undefined) throw new UsageError(`key ${flags.key ?? ''} was deactivated meanwhile; nothing was changed`)
      const printed = rows(keyOutput(rotated))
      const old = rotated.previous_secret_expires_at === null ? 'The old secret stopped working.' : `The old secret keeps working until ${rotated.previous_secret_expires_at}.`
      return { ...printed, text: `${printed.text}The new client secret is shown only now; store it safely. ${old}\n` }
    }
    case 'keys expire': {
      const expiresAt = expiryOf(flags, Date.now())
      const key = await apps.setExpiry((await activeKey(apps, flags)).id, expiresAt)
      if (key === undefined) throw new UsageError(`key ${flags.key ?? ''} was deactivated meanwhile; nothing was changed`)
      return rows(keyOutput(key))
    }
    case 'keys scopes': {
      const scopes = parseScopes(required(flags, 'scopes'))
      const key = await apps.setScopes((await activeKey(apps, flags)).id, scopes)
      if (key === undefined) throw new UsageError(`key ${flags.key ?? ''} was deactivated meanwhile; nothing was changed`)
      return rows(keyOutput(key))
    }
    case 'apps delete':
      return deleteApplication(db, flags, env)
    case 'deliveries list': {
      const webhookId = required(flags, 'webhook')
      const limit = parseLimit(flags.limit)
      const webhook = await findWebhookForAudit(db, webhookId)
      if (webhook === undefined) throw new UsageError(`unknown webhook: ${webhookId}`)
      const deliveries = await listDeliveriesForAudit(db, webhook.id, limit)
      return { json: { webhook, deliveries }, text: auditHeader(webhook, deliveries.length) + table(deliveries.map(auditRow)) }
    }
    case 'sandbox deposit':
      return sandboxDeposit(db, flags, env)
    case 'sandbox funds':
      return sandboxFunds(db, flags, env)
    case 'ledger verify':
      return verifyLedgers(db, flags.environment === undefined ? LEDGER_ENVIRONMENTS : [parseLedgerEnvironment(flags.environment, command)])
    case 'rates load':
      return loadRates(db, flags.file ?? '', flags.environment === undefined ? undefined : parseLedgerEnvironment(flags.environment, command))
    case 'rates list': {
      const environment = flags.environment === undefined ? undefined : parseLedgerEnvironment(flags.environment, command)
      const rates = await listRates(db, { ...(environment === undefined ? {} : { environment }), limit: parseLimit(flags.limit) })
      return rows(rates.map((rate) => ({ environment: rate.environment, from: rate.from, to: rate.to, midmarket_rate: rate.midmarket, buy_rate: rate.buy, sell_rate: rate.sell, timestamp: rate.asOf, loaded_at: rate.loadedAt })))
    }
    default:
      throw new UsageError(`unknown command: ${command}`)
  }
}

/** The key `--key` names, which must be active: a deactivated key stays as it was deactivated. */
async function activeKey(apps: AppsRepository, flags: Flags): Promise<ApiKey> {
  const named = required(flags, 'key')
  const key = await apps.findKey(named)
  if (key === undefined) throw new UsageError(`unknown key: ${named}`)
  if (!key.active) throw new UsageError(`key ${named} is deactivated; a deactivated key cannot be changed`)
  return key
}

/**
 * `apps delete`: refused (exit 2, nothing changed) unless --confirm repeats the application's id,
 * and while it holds live money; the image files of its products are removed once the deletion
 * has committed (a failure there is reported on stderr, the deletion stands).
 */
async function deleteApplication(db: Db, flags: Flags, env: NodeJS.ProcessEnv): Promise<Printed> {
  const appId = required(flags, 'app')
  if (flags.confirm === undefined) throw new UsageError(`"apps delete" needs --confirm ${appId}: it deletes the application's keys and data for good`)
  if (flags.confirm !== appId) throw new UsageError(`--confirm must repeat the application's id (got ${flags.confirm} for ${appId}); nothing was changed`)
  let deletion
  try {
    deletion = await deleteApp(transactOn(db, new DeliveryNotifier(), cliHooks(env)), appId)
  } catch (error) {
    if (error instanceof AppDeletionRefused) throw new UsageError(error.message)
    throw error
  }
  const { image_ids: imageIds, ...summary } = deletion
  let imageFiles = { removed: imageIds.length, not_removed: 0 }
  try {
    await new DirectoryImageStore(productImagesDirOf(env)).remove(imageIds)
  } catch (error) {
    imageFiles = { removed: 0, not_removed: imageIds.length }
    process.stderr.write(
      `devplatform: warning: the application is deleted, but its ${imageIds.length} product image files could not be removed from ${productImagesDirOf(env)} (${error instanceof Error ? error.message : String(error)}); no product names them any more: ${imageIds.join(', ')}\n`,
    )
  }
  const result = { ...summary, image_files: imageFiles }
  const removed = Object.entries(summary.removed).map(([table, count]) => `${count} ${table}`).join(', ')
  const again = summary.already_deleted ? ' (deleted before: what was left is removed now)' : ''
  return {
    json: result,
    text:
      `application ${summary.app.id} ${JSON.stringify(summary.app.name)} deleted at ${summary.app.deleted_at}${again}\n` +
      `removed: ${removed}, ${imageFiles.removed} image files; ${summary.webhooks_stopped} webhooks stopped\n` +
      'kept: its ledger, drains, transfers, test payments, invoices, wallets, events and delivery logs\n',
  }
}

/** `sandbox deposit`: the same intake as simulate_deposit, for any application's address. */
async function sandboxDeposit(db: Db, flags: Flags, env: NodeJS.ProcessEnv): Promise<Printed> {
  const appId = required(flags, 'app')
  const deposit = { customerId: required(flags, 'customer'), liquidationAddressId: required(flags, 'address'), amount: required(flags, 'amount') }
  const timings = drainTimingsOf(env)
  if ((await new AppsRepository(db).findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
  const transact = transactOn(db, new DeliveryNotifier(), cliHooks(env))
  // Conversions happen when the drain is submitted, by a scheduler: the intake reads no rate.
  const context = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings, now: Date.now }
  try {
    const drain = await transact(async (tx) => {
      if ((await new CustomersRepository(tx.db).find(appId, deposit.customerId)) === undefined) throw new UsageError(`unknown customer of application ${appId}: ${deposit.customerId}`)
      return receiveDeposit(tx, context, { environment: 'sandbox', appId, ...deposit, depositTxHash: flags['tx-hash'], fromAddress: flags.from })
    })
    const { destination, receipt, ...summary } = drain
    return { json: drain, text: table({ ...summary, destination: `${destination.payment_rail} ${destination.currency}`, developer_fee: receipt.developer_fee }) }
  } catch (error) {
    if (error instanceof DomainError) throw new UsageError(error.message)
    throw error
  }
}

/** `sandbox funds`: the same intake as simulate_funds, for any application's transfer or payment intent. */
async function sandboxFunds(db: Db, flags: Flags, env: NodeJS.ProcessEnv): Promise<Printed> {
  const appId = required(flags, 'app')
  const id = required(flags, 'transfer')
  const amountText = flags.amount
  if (amountText !== undefined && amountText.trim() === '') throw new UsageError('--amount needs a decimal amount')
  const timings = drainTimingsOf(env)
  const publicUrl = cliPublicUrl(env)
  if ((await new AppsRepository(db).findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
  const transact = transactOn(db, new DeliveryNotifier(), domainHooks({ publicUrl: () => publicUrl }))
  // Funds arriving convert nothing (the scheduler does, when it submits): the intake reads no rate.
  const context = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings, now: Date.now }
  try {
    const transfer = await transact(async (tx) => {
      const transfers = new TransfersRepository(tx.db)
      // One id names a transfer or a payment intent, never both: the CLI takes either.
      const family = (await transfers.find('sandbox', appId, 'transfer', id)) !== undefined ? 'transfer' : 'payment_intent'
      const row = await transfers.find('sandbox', appId, family, id)
      if (row === undefined) throw new UsageError(`unknown sandbox transfer or payment intent of application ${appId}: ${id}`)
      return receiveFunds(tx, context, family, 'sandbox', appId, id, amountText === undefined ? undefined : cliAmount(amountText, row.currency as Currency))
    })
    const { source, destination, source_deposit_instructions: instructions, receipt, ...summary } = transfer
    return { json: transfer, text: table({ ...summary, source: `${source.payment_rail} ${source.currency}`, destination: `${destination.payment_rail} ${destination.currency}`, developer_fee: receipt.developer_fee }) }
  } catch (error) {
    if (error instanceof DomainError) throw new UsageError(error.message)
    throw error
  }
}

/** An --amount as the API takes an amount: at most the currency's decimals, above 0, not past the most one request moves. */
function cliAmount(text: string, currency: Currency): bigint {
  let units: bigint
  try {
    units = parseAmount(text, currency)
  } catch (error) {
    if (error instanceof AmountError) throw new UsageError(`amount: ${error.message}`)
    throw error
  }
  if (units <= 0n) throw new UsageError('amount must be greater than 0')
  if (units > parseAmount(MAX_AMOUNT_UNITS.toString(), currency)) throw new UsageError(`amount must be at most ${MAX_AMOUNT_UNITS}`)
  return units
}

/** A configuration read whose refusal is the command's usage error. */
function configOrUsage<T>(read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message)
    throw error
  }
}

function drainTimingsOf(env: NodeJS.ProcessEnv): DrainTimings {
  return configOrUsage(() => loadDrainConfig(env))
}

/** The origin of the URLs a command puts into events (a payment link's checkout_url): the server's. */
function cliPublicUrl(env: NodeJS.ProcessEnv): string {
  return configOrUsage(() => publicUrlOf(env))
}

/** The subscribers of a command's domain events; PUBLIC_URL is read only if one puts a URL into an event. */
function cliHooks(env: NodeJS.ProcessEnv): DomainHooks {
  return domainHooks({ publicUrl: () => cliPublicUrl(env) })
}

const LEDGER_ENVIRONMENTS: readonly LedgerEnvironment[] = ['sandbox', 'live']

function parseLedgerEnvironment(text: string, command: string): LedgerEnvironment {
  const found = LEDGER_ENVIRONMENTS.find((environment) => environment === text)
  if (found === undefined) throw new UsageError(`--environment must be sandbox or live for "${command}" (got ${text})`)
  return found
}

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
  const hooks = domainHooks({ publicUrl: () => config.publicUrl ?? defaultPublicUrl(config.port) })
  const drains = new MoneyScheduler(db, transactOn(db, notifier, hooks), { rates: new ExchangeRates({ maxAgeMs: config.exchangeRateMaxAgeMs }), timings: config.drains, now: Date.now }, log, config.drains)
  drains.start()
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
  notifier.detach()
  await listener?.close()
  await dispatcher.stop(graceMs)
  log.info('webhook worker stopped')
}

function cell(value: unknown): string {
  if (Array.isArray(value)) return value.join(',')
  return value === null || value === undefined ? '' : String(value)
}

/** A readable table: one header line, one line per row, columns padded. */
function table(output: Output): string {
  const rows = Array.isArray(output) ? output : [output]
  if (rows.length === 0) return '(none)\n'
  const columns = Object.keys(rows[0] ?? {})
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ').trimEnd()
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n') + '\n'
}

/** The database location: the full configuration for the worker, only DATABASE_URL otherwise. */
function configure(command: string, env: NodeJS.ProcessEnv): { location: DatabaseLocation; config: Config | undefined } {
  try {
    if (command === 'worker') {
      const config = loadConfig(env)
      return { location: config.database, config }
    }
    return { location: parseDatabaseUrl(env.DATABASE_URL ?? DEFAULT_DATABASE_URL), config: undefined }
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(command === 'worker' ? `invalid configuration: ${error.message}` : error.message)
    throw error
  }
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let db: Db | undefined
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      process.stdout.write(`${USAGE}\n`)
      return 0
    }
    const { command, flags, topic } = parse(argv)
    if (command === 'help') {
      process.stdout.write(helpText(topic ?? ''))
      return 0
    }
    const { location, config } = configure(command, env)
    if (config !== undefined) {
      // Listening before the database opens: a signal during start-up still stops it cleanly.
      const log = pino({ level: config.logLevel })
      handleUncaughtErrors(log)
      const stopSignal = firstStopSignal((signal) => log.info({ signal }, 'webhook worker already stopping'))
      db = await openDatabase(location).catch(startError('DATABASE_URL'))
      await runWorker(config, db, log, stopSignal)
      return 0
    }
    // A command's stdout is its answer: its last-resort lines go to stderr.
    handleUncaughtErrors(pino({ level: 'info' }, pino.destination({ fd: 2, sync: true })))
    db = await openDatabase(location).catch(startError('DATABASE_URL'))
    const printed = await run(command, flags, db, env)
    process.stdout.write(flags.json ? `${JSON.stringify(printed.json)}\n` : printed.text)
    return printed.exitCode ?? 0
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`devplatform: ${error.message}\n`)
      return 2
    }
    process.stderr.write(`devplatform: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  } finally {
    await db?.destroy()
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code
})
