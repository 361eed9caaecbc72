// The floor of bench:api and bench:profile: a bare Fastify 5 (the project's own, logger off, no
// hooks) doing only what any server must do for each benchmarked operation on the same database,
// so what the server spends above it is its own:
//
//   GET /webhooks/{id}: one statement reads the key by its client key and the webhook beside it
//     (its total_events summed as the server's statement sums them). The stricter floor,
//     /stored-counters/api/v0/webhooks/{id}: the same read with the statistics as counters stored
//     on the row (no sum), answered through a plain response schema.
//   DELETE /webhooks/{id}: the key read, then the webhook marked deleted and returned, in one
//     statement (its own transaction), durable before the answer.
//   POST /customers/{id}/liquidation_addresses: the key read, then the address (only if the
//     customer is the key's application's) and its outbox event in one transaction, durable before
//     the answer. The body is validated by the server's own validator and schema.
//
// Every operation compares the secret's SHA-256 digest in constant time and, on PostgreSQL with
// REDIS_URL, makes one Redis call after it: the shared rate-limit count (the server's own
// sliding-log script, under a prefix of its own) that any multi-instance server needs. Answers go
// through the server's own mapping and response schema (from the build: run after `npm run
// build`). No request id, logging, in-process rate limit, idempotency, deliveries or error bodies.
//
// Durable on SQLite as the server makes it: `synchronous = NORMAL`, and the WAL file synced
// (fdatasync on libuv's thread pool) before answering, one sync shared by every commit written
// before it started; the WAL is checkpointed on a thread of its own, not inside a COMMIT on the
// event loop. On PostgreSQL a commit is durable when it returns.
//
// Arguments: the SQLite file or a postgres:// URL, then the port (0 or none: a free one); sends
// the port over IPC and exits when the parent goes away. On PostgreSQL: a pool of 10 connections
// (the server's default), each statement prepared once per connection, as the server prepares its own.
import { hash, timingSafeEqual } from 'node:crypto'
import { open } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import pg from 'pg'
import { SLIDING_LOG_LUA } from '../dist/auth/redis-rate-limiter.js'
import { HOURLY_LIMIT } from '../dist/keys/credentials.js'
import { newId, nowIso } from '../dist/db/time.js'
import { toLiquidationAddress } from '../dist/resources/liquidation-addresses/objects.js'
import { CreateLiquidationAddressBody, LiquidationAddressSchema } from '../dist/resources/liquidation-addresses/schemas.js'
import { toWebhook } from '../dist/resources/webhooks/objects.js'
import { WebhookSchema } from '../dist/resources/webhooks/schemas.js'
import { addressKey } from '../dist/validation/chain-address.js'
import { createRules } from '../dist/validation/rules.js'
import { createValidatorCompiler } from '../dist/validation/validator.js'

const totalEvents = (webhooks) => `(select cast(coalesce(sum(c.events), 0) as integer) from webhook_event_counts c where c.webhook_id = ${webhooks}.id) as total_events`
const KEY_AND_WEBHOOK = `select k.id as key_id, k.environment, k.rate_limit_per_hour, k.active, k.secret_digest, w.*, ${totalEvents('w')}
   from api_keys k left join webhooks w on w.app_id = k.app_id and w.id = $1 and w.deleted_at is null
   where k.client_key = $2`
/**
 * The stricter GET floor (`/stored-counters/…`): the same read, but as if the delivery statistics
 * were counters stored on the webhook's row, read with it: no sum over its event-count rows (the
 * stand-in for a stored total is two columns of the row itself).
 */
const KEY_AND_WEBHOOK_STORED_COUNTERS = `select k.id as key_id, k.environment, k.rate_limit_per_hour, k.active, k.secret_digest, w.*, w.successful_deliveries + w.failed_deliveries as total_events
   from api_keys k left join webhooks w on w.app_id = k.app_id and w.id = $1 and w.deleted_at is null
   where k.client_key = $2`
const KEY = 'select id as key_id, app_id, environment, rate_limit_per_hour, active, secret_digest from api_keys where client_key = $1'
const DELETE_WEBHOOK = `update webhooks set deleted_at = $3 where app_id = $1 and id = $2 and deleted_at is null returning *, ${totalEvents('webhooks')}`
const ADDRESS_COLUMNS = ['id', 'app_id', 'customer_id', 'state', 'chain', 'currency', 'address', 'address_key', 'external_account_id', 'prefunded_account_id', 'bridge_wallet_id', 'destination_payment_rail', 'destination_currency', 'destination_wire_message', 'destination_sepa_reference', 'destination_ach_reference', 'destination_address', 'destination_blockchain_memo', 'return_address', 'custom_developer_fee_percent', 'created_at', 'updated_at']
const EVENT_COLUMNS = ['id', 'app_id', 'type', 'payload', 'created_at']
const params = (from, count) => Array.from({ length: count }, (_, i) => `$${from + i}`).join(', ')
/** The address, inserted only when its customer is the application's ($2 is the app, $3 the customer). */
const INSERT_ADDRESS = `insert into liquidation_addresses (${ADDRESS_COLUMNS.join(', ')}) select ${params(1, ADDRESS_COLUMNS.length)}
   where exists (select 1 from customers where id = $3 and app_id = $2)`
const INSERT_EVENT = `insert into events (${EVENT_COLUMNS.join(', ')}, fanout_pending) values (${params(1, EVENT_COLUMNS.length)}, 0)`
/** PostgreSQL: the address and its event in one statement, so one round trip and its own transaction. */
const INSERT_ADDRESS_AND_EVENT = `with address as (${INSERT_ADDRESS} returning id)
   insert into events (${EVENT_COLUMNS.join(', ')}, fanout_pending) select ${params(ADDRESS_COLUMNS.length + 1, EVENT_COLUMNS.length)}, 0 from address returning id`

class Refused extends Error {
  constructor(statusCode) {
    super(String(statusCode))
    this.statusCode = statusCode
  }
}

function checkSecret(row, secret) {
  const presented = Buffer.from(hash('sha256', String(secret), 'hex'), 'latin1')
  if (row === undefined || row.active !== 1 || !timingSafeEqual(presented, Buffer.from(row.secret_digest, 'latin1'))) throw new Refused(401)
}

function addressRow(appId, customerId, body, now) {
  return {
    id: newId(),
    app_id: appId,
    customer_id: customerId.toLowerCase(),
    state: 'active',
    chain: body.chain,
    currency: body.currency,
    address: body.address,
    address_key: addressKey(body.chain, body.address),
    external_account_id: body.external_account_id ?? null,
    prefunded_account_id: body.prefunded_account_id ?? null,
    bridge_wallet_id: body.bridge_wallet_id ?? null,
    destination_payment_rail: body.destination_payment_rail ?? 'ach',
    destination_currency: body.destination_currency ?? 'usd',
    destination_wire_message: body.destination_wire_message ?? null,
    destination_sepa_reference: body.destination_sepa_reference ?? null,
    destination_ach_reference: body.destination_ach_reference ?? null,
    destination_address: body.destination_address ?? null,
    destination_blockchain_memo: body.destination_blockchain_memo ?? null,
    return_address: body.return_address ?? null,
    custom_developer_fee_percent: body.custom_developer_fee_percent ?? null,
    created_at: now,
    updated_at: now,
  }
}

function eventRow(appId, created, now) {
  const id = newId()
  const type = 'liquidation_address.created'
  return { id, app_id: appId, type, payload: JSON.stringify({ id, type, created_at: now, data: created }), created_at: now }
}

const valuesOf = (row, columns) => columns.map((column) => row[column])

/** The shared rate-limit count, in Redis (PostgreSQL with REDIS_URL only): one script call. */
function rateLimitCounter() {
  if (process.env.REDIS_URL === undefined || process.env.REDIS_URL === '') return async () => {}
  const redis = new Redis(process.env.REDIS_URL)
  redis.defineCommand('floorSlidingLog', { numberOfKeys: 1, lua: SLIDING_LOG_LUA })
  return async (row) => {
    const limit = row.rate_limit_per_hour ?? HOURLY_LIMIT[row.environment]
    const [allowed] = await redis.floorSlidingLog(`devplatform:floor:${row.key_id}`, String(limit), '3600000', 'consume')
    if (allowed !== 1) throw new Refused(429)
  }
}

function postgresFloor(url) {
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  const query = async (name, text, values) => (await pool.query({ name, text, values })).rows
  const countRequest = rateLimitCounter()
  const keyOf = async (headers) => {
    const [row] = await query('key', KEY, [headers['x-client-key']])
    checkSecret(row, headers['x-client-secret'])
    await countRequest(row)
    return row
  }
  return {
    async getWebhook(id, headers, storedCounters) {
      const [row] = storedCounters
        ? await query('key_and_webhook_stored', KEY_AND_WEBHOOK_STORED_COUNTERS, [id, headers['x-client-key']])
        : await query('key_and_webhook', KEY_AND_WEBHOOK, [id, headers['x-client-key']])
      checkSecret(row, headers['x-client-secret'])
      await countRequest(row)
      return row.id === null ? undefined : row
    },
    async deleteWebhook(id, headers) {
      const key = await keyOf(headers)
      return (await query('delete_webhook', DELETE_WEBHOOK, [key.app_id, id, nowIso()]))[0]
    },
    async createAddress(customerId, body, headers) {
      const key = await keyOf(headers)
      const now = nowIso()
      const row = addressRow(key.app_id, customerId, body, now)
      const created = toLiquidationAddress(row)
      const inserted = await query('address_and_event', INSERT_ADDRESS_AND_EVENT, [...valuesOf(row, ADDRESS_COLUMNS), ...valuesOf(eventRow(key.app_id, created, now), EVENT_COLUMNS)])
      return inserted.length === 0 ? undefined : created
    },
  }
}

/** One sync of the WAL at a time, shared by every commit written before it started. */
function walSyncer(walPath) {
  const file = open(walPath, 'r')
  let running
  let queued
  const sync = () => {
    if (running === undefined) {
      running = file.then((handle) => handle.datasync()).finally(() => (running = undefined))
      return running
    }
    queued ??= running.then(() => {
      queued = undefined
      return sync()
    })
    return queued
  }
  return sync
}

/** A PASSIVE checkpoint of the WAL every 100 ms, on a worker thread with a connection of its own. */
function checkpointEvery100Ms(filename) {
  const source = `
    const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))})
    const db = new Database(${JSON.stringify(filename)}, { fileMustExist: true, timeout: 0 })
    setInterval(() => { try { db.pragma('wal_checkpoint(PASSIVE)') } catch {} }, 100)`
  new Worker(source, { eval: true }).unref()
}

function sqliteFloor(filename) {
  const sqlite = new Database(filename, { fileMustExist: true })
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('wal_autocheckpoint = 0')
  checkpointEvery100Ms(filename)
  /** The statement with PostgreSQL's $n written as SQLite's `?`, each run's values put in their order. */
  const prepare = (text) => {
    const order = [...text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1]) - 1)
    const statement = sqlite.prepare(text.replace(/\$\d+/g, '?'))
    const bound = (values) => order.map((i) => values[i])
    return { get: (...values) => statement.get(bound(values)), run: (...values) => statement.run(bound(values)) }
  }
  const keyAndWebhook = prepare(KEY_AND_WEBHOOK)
  const keyAndWebhookStored = prepare(KEY_AND_WEBHOOK_STORED_COUNTERS)
  const key = prepare(KEY)
  const deleteWebhook = prepare(DELETE_WEBHOOK)
  const insertAddress = prepare(INSERT_ADDRESS)
  const insertEvent = prepare(INSERT_EVENT)
  const begin = sqlite.prepare('begin immediate')
  const commit = sqlite.prepare('commit')
  const rollback = sqlite.prepare('rollback')
  const sync = walSyncer(`${filename}-wal`)
  /** `work` between BEGIN IMMEDIATE and COMMIT, then the shared sync. */
  const transaction = async (work) => {
    begin.run()
    let result
    try {
      result = work()
      commit.run()
    } catch (error) {
      if (sqlite.inTransaction) rollback.run()
      throw error
    }
    await sync()
    return result
  }
  const keyOf = (headers) => {
    const row = key.get(headers['x-client-key'])
    checkSecret(row, headers['x-client-secret'])
    return row
  }
  return {
    async getWebhook(id, headers, storedCounters) {
      const row = (storedCounters ? keyAndWebhookStored : keyAndWebhook).get(id, headers['x-client-key'])
      checkSecret(row, headers['x-client-secret'])
      return row.id === null ? undefined : row
    },
    deleteWebhook: (id, headers) => transaction(() => deleteWebhook.get(keyOf(headers).app_id, id, nowIso())),
    createAddress: (customerId, body, headers) =>
      transaction(() => {
        const appId = keyOf(headers).app_id
        const now = nowIso()
        const row = addressRow(appId, customerId, body, now)
        if (insertAddress.run(...valuesOf(row, ADDRESS_COLUMNS)).changes === 0) return undefined
        const created = toLiquidationAddress(row)
        insertEvent.run(...valuesOf(eventRow(appId, created, now), EVENT_COLUMNS))
        return created
      }),
  }
}

const target = process.argv[2] ?? ''
const floor = target.startsWith('postgres') ? postgresFloor(target) : sqliteFloor(target)

const app = Fastify({ logger: false })
// The server's own body validation (its rules), for the POST's body.
app.setValidatorCompiler(createValidatorCompiler(createRules({ allowHttpLoopback: true })))
app.setErrorHandler((error, _request, reply) => {
  const unique = error.code === '23505' || error.code === 'SQLITE_CONSTRAINT_UNIQUE'
  reply.code(error instanceof Refused ? error.statusCode : unique ? 409 : (error.statusCode ?? 500)).send({ error: 'no' })
})
// The same answers as the server's: its mappings and its response schemas (from the build).
app.get('/api/v0/webhooks/:id', { schema: { response: { 200: WebhookSchema } } }, async (request, reply) => {
  const row = await floor.getWebhook(request.params.id, request.headers)
  return row === undefined ? reply.code(404).send({ error: 'no' }) : toWebhook(row)
})
/** The stricter floor's answer: the webhook's fields as plain types (no formats, no examples). */
const PLAIN_WEBHOOK = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    url: { type: 'string' },
    isActive: { type: 'boolean' },
    encrypted: { type: 'boolean' },
    event_types: { type: ['array', 'null'], items: { type: 'string' } },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
    delivery_stats: {
      type: 'object',
      properties: { total_events: { type: 'integer' }, successful_deliveries: { type: 'integer' }, failed_deliveries: { type: 'integer' }, last_delivery: { type: ['string', 'null'] } },
    },
  },
}
app.get('/stored-counters/api/v0/webhooks/:id', { schema: { response: { 200: PLAIN_WEBHOOK } } }, async (request, reply) => {
  const row = await floor.getWebhook(request.params.id, request.headers, true)
  return row === undefined ? reply.code(404).send({ error: 'no' }) : toWebhook(row)
})
app.delete('/api/v0/webhooks/:id', { schema: { response: { 200: WebhookSchema } } }, async (request, reply) => {
  const row = await floor.deleteWebhook(request.params.id, request.headers)
  return row === undefined ? reply.code(404).send({ error: 'no' }) : toWebhook(row)
})
app.post(
  '/api/v0/customers/:customerId/liquidation_addresses',
  { schema: { body: CreateLiquidationAddressBody, response: { 201: LiquidationAddressSchema } } },
  async (request, reply) => {
    const created = await floor.createAddress(request.params.customerId, request.body, request.headers)
    return created === undefined ? reply.code(404).send({ error: 'no' }) : reply.code(201).send(created)
  },
)
await app.listen({ port: Number(process.argv[3] ?? 0), host: '127.0.0.1' })
const address = app.server.address()
process.send?.({ port: typeof address === 'object' && address !== null ? address.port : 0 })
process.on('disconnect', () => process.exit(0))
