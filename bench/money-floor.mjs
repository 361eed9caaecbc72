// bench:money's floor: a bare Fastify 5 (the project's own, logger off, no hooks) writing the same
// ledger rows as the server for a deposit, on the same database, with nothing of the API around
// them. Run after `npm run build` (it answers through the server's own toDrain and DrainSchema).
//
// POST .../simulate_deposit: one statement reads the key and the address; the secret's SHA-256
// digest is compared in constant time; on PostgreSQL one Redis INCR (the shared rate-limit count
// any multi-instance server needs); then ONE transaction writes the drain, the intake entry (chain
// inflow → the address's clearing account, posted) with its postings, both accounts' sums (locked,
// found by their keys, in one statement; updated in one), the event and its delivery to the
// application's active webhook (read in the transaction, on PostgreSQL locked FOR KEY SHARE as
// the server's outbox locks it). On PostgreSQL the entry and its postings are one statement, and
// so are the webhook, the event and its delivery. The drain is answered 201 once that is durable.
//
// Mode `pipeline` also moves each drain on as the server's scheduler does, each step one
// transaction: submitted (the drain locked; clearing → developer fee + payout, pending; three
// accounts' sums; the drain; event + delivery) and processed (the entry posted; its accounts'
// sums; the drain; event + delivery). Both modes send every delivery to its webhook, signed
// (Standard Webhooks), and record each attempt (attempt row + delivery succeeded, in one
// transaction per event-loop turn).
//
// Modes `transfer` and `transfer-pipeline` serve POST /transfers/external-stablecoin-transfer
// instead: one statement reads the key and the wallet; the digest compared; on PostgreSQL one Redis
// INCR; the body's fields checked; then ONE transaction locks the wallet's and the payout's
// accounts by key (made when missing), writes the pending entry reserving the amount with its
// postings, both accounts' sums (one statement), the transfer and its event (the webhook read as
// above). `transfer-pipeline` also moves each transfer on as the scheduler does, one transaction
// per step: submitted (the transfer locked, updated, its event) and processed (the entry's
// postings read, its accounts locked by id, the entry posted, their sums, the transfer, its event).
//
// What it leaves out, being a floor: no request id, logging, idempotency, error bodies; due drains
// and deliveries are handed on in memory after the commit (the rows are durable, so a server
// could find them again after a crash, but nothing here polls for them); no claims (one process);
// no webhook statistics; on SQLite no WAL checkpoints.
//
// Durability as the server's: SQLite in WAL mode with synchronous = NORMAL, write transactions
// that arrive together committed as one (each in a savepoint), and nothing answered or handed on
// before the WAL is synced (fdatasync, shared by the commits before it); PostgreSQL commits as
// configured (synchronous_commit on by default), a pool of 10 connections, named statements.
//
// Arguments: target (SQLite file or postgres:// URL), Redis URL or '-', mode (intake | pipeline | transfer | transfer-pipeline),
// hot-account shards (8 by default, as the server's), port (0: a free one). Sends the port over
// IPC and exits when the parent goes away.
import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto'
import { open } from 'node:fs/promises'
import http from 'node:http'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import pg from 'pg'
import { feeOf, parseAmount } from '../dist/ledger/amount.js'
import { isoOf, newId } from '../dist/db/time.js'
import { toDrain } from '../dist/resources/drains/objects.js'
import { DrainSchema } from '../dist/resources/drains/schemas.js'
import { toTransfer } from '../dist/resources/transfers/objects.js'
import { TransferSchema } from '../dist/resources/transfers/schemas.js'

const [target, redisUrl = '-', mode = 'intake', shardsArg = '8', portArg = '0'] = process.argv.slice(2)
const postgres = target.startsWith('postgres')
/** Modes transfer and transfer-pipeline serve POST /transfers/external-stablecoin-transfer instead of simulate_deposit. */
const transfers = mode.startsWith('transfer')
const pipelined = mode === 'pipeline' || mode === 'transfer-pipeline'
const SHARDS = Number(shardsArg)
const SENDS_AT_ONCE = 64
const ADVANCES_AT_ONCE = 4 // the server's DRAIN_CONCURRENCY default

// ---- the database: q(sql, params) → rows, inside tx(work) --------------------------------------

/** PostgreSQL: BEGIN … COMMIT on one pooled connection; statements named, so prepared once per connection. */
function postgresDatabase() {
  const pool = new pg.Pool({ connectionString: target, max: 10 })
  const names = new Map()
  const nameOf = (text) => {
    let name = names.get(text)
    if (name === undefined) names.set(text, (name = `floor${names.size}`))
    return name
  }
  return {
    async read(text, values) {
      return (await pool.query({ name: nameOf(text), text, values })).rows
    },
    async tx(work) {
      const client = await pool.connect()
      try {
        await client.query('begin')
        const value = await work(async (text, values) => (await client.query({ name: nameOf(text), text, values })).rows)
        await client.query('commit')
        return value
      } catch (error) {
        await client.query('rollback').catch(() => undefined)
        throw error
      } finally {
        client.release()
      }
    },
  }
}

/**
 * SQLite: the write transactions waiting when the connection comes free run one after another in
 * one transaction, each in a savepoint, and are settled once that commit's WAL is synced.
 */
function sqliteDatabase() {
  const sqlite = new Database(target, { fileMustExist: true })
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('wal_autocheckpoint = 0')
  const statements = new Map()
  const prepared = (text) => {
    let statement = statements.get(text)
    if (statement === undefined) statements.set(text, (statement = sqlite.prepare(text.replace(/\$\d+/g, '?'))))
    return statement
  }
  const q = async (text, values = []) => {
    const statement = prepared(text)
    if (statement.reader) return statement.all(...values)
    statement.run(...values)
    return []
  }
  const wal = open(`${target}-wal`, 'r')
  let waiting = []
  let draining = false
  async function drain() {
    while (waiting.length > 0) {
      const group = waiting
      waiting = []
      const done = []
      prepared('begin immediate').run()
      for (const member of group) {
        prepared('savepoint member').run()
        try {
          const value = await member.work(q)
          prepared('release member').run()
          done.push([member, value])
        } catch (error) {
          prepared('rollback to member').run()
          prepared('release member').run()
          member.reject(error)
        }
      }
      prepared('commit').run()
      await (await wal).datasync()
      for (const [member, value] of done) member.resolve(value)
    }
    draining = false
  }
  return {
    async read(text, values) {
      return prepared(text).all(...values)
    },
    tx(work) {
      return new Promise((resolve, reject) => {
        waiting.push({ work, resolve, reject })
        if (!draining) {
          draining = true
          setImmediate(() => void drain())
        }
      })
    },
  }
}

const db = postgres ? postgresDatabase() : sqliteDatabase()
const redis = postgres && redisUrl !== '-' ? new Redis(redisUrl) : undefined
const forUpdate = postgres ? ' for update' : ''

// ---- statements --------------------------------------------------------------------------------

const KEY_AND_ADDRESS = `select k.active, k.secret_digest, k.environment as key_environment,
    a.id, a.app_id, a.customer_id, a.chain, a.currency, a.custom_developer_fee_percent, a.destination_payment_rail,
    a.destination_currency, a.destination_address, a.external_account_id, a.bridge_wallet_id, a.destination_blockchain_memo,
    a.destination_wire_message, a.destination_sepa_reference, a.destination_ach_reference
  from api_keys k left join liquidation_addresses a on a.app_id = k.app_id and a.customer_id = $1 and a.id = $2
  where k.client_key = $3`
const WEBHOOKS = 'select id, url, signing_secret from webhooks where deleted_at is null and is_active = 1'
const INSERT_DRAIN = `insert into drains (id, environment, app_id, customer_id, liquidation_address_id, state, amount, currency, deposit_tx_hash,
    from_address, source_payment_rail, destination, developer_fee, subtotal_amount, exchange_rate, converted_amount, outgoing_amount,
    destination_tx_hash, refund_tx_hash, return_reason, pending_entry_id, next_step_at, created_at, updated_at)
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)`
const LOCK_DRAIN = `select * from drains where id = $1${forUpdate}`
const UPDATE_DRAIN = `update drains set state = $1, destination = $2, exchange_rate = $3, converted_amount = $4, outgoing_amount = $5,
    destination_tx_hash = $6, pending_entry_id = $7, next_step_at = $8, updated_at = $9 where id = $10`
/** The accounts named by (kind, reference) of one application, currency and environment, locked, in id order. */
const lockAccountsByKey = (count) =>
  `select * from ledger_accounts where environment = $1 and app_id = $2 and currency = $3 and (${Array.from(
    { length: count },
    (_, i) => `(kind = $${4 + 2 * i} and reference = $${5 + 2 * i})`,
  ).join(' or ')}) order by id${forUpdate}`
const LOCK_ACCOUNTS = [undefined, undefined, lockAccountsByKey(2), lockAccountsByKey(3)]
const lockAccountsById = (count) => `select * from ledger_accounts where id in (${Array.from({ length: count }, (_, i) => `$${i + 1}`).join(', ')}) order by id${forUpdate}`
const LOCK_BY_ID = [undefined, undefined, lockAccountsById(2), lockAccountsById(3)]
const INSERT_ACCOUNT = `insert into ledger_accounts (id, environment, app_id, kind, currency, reference, may_go_negative, debits_posted, credits_posted,
    debits_pending, credits_pending, available, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $7, '0', '0', '0', '0', '0', $8, $9) on conflict do nothing`
/** Every changed account's sums in one statement (UPDATE … FROM VALUES, on both backends). */
const updateAccounts = (count) =>
  `update ledger_accounts set debits_posted = v.column2, credits_posted = v.column3, debits_pending = v.column4, credits_pending = v.column5,
    available = v.column6, updated_at = v.column7 from (values ${Array.from({ length: count }, (_, i) => `(${Array.from({ length: 7 }, (_, j) => `$${7 * i + j + 1}`).join(', ')})`).join(', ')}) as v
    where ledger_accounts.id = v.column1`
const UPDATE_ACCOUNTS = [undefined, updateAccounts(1), updateAccounts(2), updateAccounts(3)]
const INSERT_ENTRY = `insert into ledger_entries (id, environment, app_id, status, reason_type, reason_id, created_at, updated_at)
  values ($1, $2, $3, $4, $5, $6, $7, $8)`
const SETTLE_ENTRY = 'update ledger_entries set status = $1, updated_at = $2 where id = $3'
const postingValues = (count, first) =>
  Array.from({ length: count }, (_, i) => `($${first + 5 * i}, $${first + 5 * i + 1}, $${first + 5 * i + 2}, $${first + 5 * i + 3}, $${first + 5 * i + 4})`).join(', ')
const insertPostings = (count) => `insert into ledger_postings (id, entry_id, account_id, direction, amount) values ${postingValues(count, 1)}`
const INSERT_POSTINGS = [undefined, undefined, insertPostings(2), insertPostings(3)]
/** PostgreSQL: the entry and its postings in one statement (the postings' foreign key is checked at its end). */
const entryWithPostings = (count) =>
  `with entry as (insert into ledger_entries (id, environment, app_id, status, reason_type, reason_id, created_at, updated_at)
    values ($1, $2, $3, $4, $5, $6, $7, $8)) insert into ledger_postings (id, entry_id, account_id, direction, amount) values ${postingValues(count, 9)}`
const ENTRY_WITH_POSTINGS = [undefined, undefined, entryWithPostings(2), entryWithPostings(3)]
const POSTINGS_OF = 'select account_id, direction, amount from ledger_postings where entry_id = $1'
const INSERT_EVENT = 'insert into events (id, app_id, type, payload, created_at, fanout_pending) values ($1, $2, $3, $4, $5, 0)'
/**
 * The application's active webhook, read in the event's transaction and, on PostgreSQL, locked FOR
 * KEY SHARE (as the server's outbox does): a DELETE of the webhook either committed before (no
 * delivery) or waits for this commit.
 */
const ACTIVE_WEBHOOK = `select id from webhooks where app_id = $1 and deleted_at is null and is_active = 1 order by id limit 1${postgres ? ' for key share' : ''}`
const INSERT_DELIVERY = `insert into deliveries (id, event_id, webhook_id, app_id, status, attempts, next_attempt_at, claim_token, resend, created_at, updated_at)
  values ($1, $2, $3, $4, 'pending', 0, $5, null, 0, $6, $7)`
/** PostgreSQL: the webhook read and locked, the event and its delivery, in one statement. */
const EVENT_WITH_DELIVERY = `with webhook as (select id from webhooks where app_id = $2 and deleted_at is null and is_active = 1 order by id limit 1 for key share),
    event as (insert into events (id, app_id, type, payload, created_at, fanout_pending) values ($1, $2, $3, $4, $5, 0))
  insert into deliveries (id, event_id, webhook_id, app_id, status, attempts, next_attempt_at, claim_token, resend, created_at, updated_at)
  select $6, $1, webhook.id, $2, 'pending', 0, $5, null, 0, $5, $5 from webhook returning webhook_id`
const insertAttempts = (count) =>
  `insert into delivery_attempts (id, delivery_id, webhook_id, attempt, started_at, duration_ms, outcome, status_code) values ${Array.from(
    { length: count },
    (_, i) => `($${5 * i + 1}, $${5 * i + 2}, $${5 * i + 3}, 1, $${5 * i + 4}, $${5 * i + 5}, 'succeeded', 200)`,
  ).join(', ')}`
const succeeded = (count) => `update deliveries set status = 'succeeded', attempts = 1, updated_at = $1 where id in (${Array.from({ length: count }, (_, i) => `$${i + 2}`).join(', ')})`

// ---- the ledger --------------------------------------------------------------------------------

const shardOf = (drainId) => Number.parseInt(drainId.slice(-2), 16) % SHARDS

/** The accounts of `keys` ([kind, reference]) locked, made first when missing: a Map from `kind reference` to the row. */
async function lockAccounts(q, environment, appId, currency, keys) {
  const values = [environment, appId, currency, ...keys.flat()]
  let rows = await q(LOCK_ACCOUNTS[keys.length], values)
  if (rows.length < keys.length) {
    const now = isoOf(Date.now())
    for (const [kind, reference] of keys) await q(INSERT_ACCOUNT, [newId(), environment, appId, kind, currency, reference, kind === 'world' ? 1 : 0, now, now])
    rows = await q(LOCK_ACCOUNTS[keys.length], values)
  }
  return new Map(rows.map((row) => [`${row.kind} ${row.reference}`, row]))
}

/** Posts a pending entry as the server does: its postings' accounts locked in id order, the entry settled, the balances moved. */
async function postPending(q, entryId, now) {
  const postings = await q(POSTINGS_OF, [entryId])
  const ids = [...new Set(postings.map((posting) => posting.account_id))].sort()
  const rows = new Map((await q(LOCK_BY_ID[ids.length], ids)).map((account) => [account.id, account]))
  await q(SETTLE_ENTRY, ['posted', now, entryId])
  await applyPostings(
    q,
    postings.map((posting) => [rows.get(posting.account_id), posting.direction, BigInt(posting.amount)]),
    'post',
    now,
  )
}

/** Sums of a row as bigints, changed by `postings` ([row, direction, amount]), `to`: 'pending', 'posted' (new entry) or 'post' (a pending one posted). */
async function applyPostings(q, postings, to, now) {
  const sums = new Map()
  for (const [row, direction, amount] of postings) {
    const sum = sums.get(row.id) ?? {
      id: row.id,
      negative: row.may_go_negative === 1,
      debitsPosted: BigInt(row.debits_posted),
      creditsPosted: BigInt(row.credits_posted),
      debitsPending: BigInt(row.debits_pending),
      creditsPending: BigInt(row.credits_pending),
      available: BigInt(row.available),
    }
    if (direction === 'debit') {
      if (to === 'pending') {
        sum.debitsPending += amount
        sum.available -= amount
      } else if (to === 'posted') {
        sum.debitsPosted += amount
        sum.available -= amount
      } else {
        sum.debitsPending -= amount
        sum.debitsPosted += amount
      }
    } else if (to === 'pending') sum.creditsPending += amount
    else if (to === 'posted') {
      sum.creditsPosted += amount
      sum.available += amount
    } else {
      sum.creditsPending -= amount
      sum.creditsPosted += amount
      sum.available += amount
    }
    sums.set(row.id, sum)
  }
  for (const sum of sums.values()) if (!sum.negative && sum.available < 0n) throw new Error('insufficient funds')
  await q(
    UPDATE_ACCOUNTS[sums.size],
    [...sums.values()].flatMap((sum) => [sum.id, String(sum.debitsPosted), String(sum.creditsPosted), String(sum.debitsPending), String(sum.creditsPending), String(sum.available), now]),
  )
}

/** An entry of `postings` for `reason` (a drain or a transfer row; `reasonType` says which), with its accounts' sums. */
async function writeEntry(q, reasonType, reason, status, postings, now) {
  const entryId = newId()
  const entry = [entryId, reason.environment, reason.app_id, status, reasonType, reason.id, now, now]
  const rows = postings.flatMap(([row, direction, amount]) => [newId(), entryId, row.id, direction, String(amount)])
  if (postgres) await q(ENTRY_WITH_POSTINGS[postings.length], [...entry, ...rows])
  else {
    await q(INSERT_ENTRY, entry)
    await q(INSERT_POSTINGS[postings.length], rows)
  }
  await applyPostings(q, postings, status, now)
  return entryId
}

/** The event and its delivery to the application's webhook (if it has one); what the sender needs after the commit. */
async function emit(q, appId, type, data, now) {
  const eventId = newId()
  const payload = JSON.stringify({ id: eventId, type, created_at: now, data })
  const deliveryId = newId()
  let webhookId
  if (postgres) {
    const rows = await q(EVENT_WITH_DELIVERY, [eventId, appId, type, payload, now, deliveryId])
    webhookId = rows[0]?.webhook_id
  } else {
    const rows = await q(ACTIVE_WEBHOOK, [appId])
    webhookId = rows[0]?.id
    await q(INSERT_EVENT, [eventId, appId, type, payload, now])
    if (webhookId !== undefined) await q(INSERT_DELIVERY, [deliveryId, eventId, webhookId, appId, now, now, now])
  }
  return webhookId === undefined ? undefined : { eventId, deliveryId, webhookId, payload }
}

// ---- deliveries --------------------------------------------------------------------------------

const webhooks = new Map()
async function webhookOf(id) {
  let webhook = webhooks.get(id)
  if (webhook === undefined) {
    for (const row of await db.read(WEBHOOKS, [])) {
      webhooks.set(row.id, { url: new URL(row.url), key: Buffer.from(row.signing_secret.replace(/^whsec_/, ''), 'base64') })
    }
    webhook = webhooks.get(id)
  }
  return webhook
}

const agent = new http.Agent({ keepAlive: true, maxSockets: SENDS_AT_ONCE })
const toSend = []
let sending = 0
let outcomes = []
let recording = false

function send(delivery) {
  toSend.push(delivery)
  pump()
}

function pump() {
  while (sending < SENDS_AT_ONCE && toSend.length > 0) {
    sending++
    const delivery = toSend.shift()
    void sendOne(delivery)
      .catch((error) => console.error('floor: a delivery failed', error))
      .finally(() => {
        sending--
        pump()
      })
  }
}

async function sendOne(delivery) {
  const webhook = await webhookOf(delivery.webhookId)
  const startedMs = Date.now()
  const timestamp = Math.floor(startedMs / 1000)
  const signature = createHmac('sha256', webhook.key).update(`${delivery.eventId}.${timestamp}.${delivery.payload}`).digest('base64')
  await new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: webhook.url.hostname,
        port: webhook.url.port,
        path: webhook.url.pathname,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(delivery.payload),
          'webhook-id': delivery.eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': `v1,${signature}`,
        },
      },
      (response) => {
        response.resume()
        response.on('end', resolve)
      },
    )
    request.on('error', reject)
    request.end(delivery.payload)
  })
  outcomes.push([delivery, isoOf(startedMs), Date.now() - startedMs])
  if (!recording) {
    recording = true
    setImmediate(() => void record())
  }
}

/** The attempts that ended in one event-loop turn, written in one transaction. */
async function record() {
  while (outcomes.length > 0) {
    const batch = outcomes.splice(0, 100)
    const now = isoOf(Date.now())
    await db.tx(async (q) => {
      await q(
        insertAttempts(batch.length),
        batch.flatMap(([delivery, startedAt, durationMs]) => [newId(), delivery.deliveryId, delivery.webhookId, startedAt, durationMs]),
      )
      await q(succeeded(batch.length), [now, ...batch.map(([delivery]) => delivery.deliveryId)])
    })
  }
  recording = false
}

// ---- the drain's steps (pipeline) ----------------------------------------------------------------

const toAdvance = []
let advancing = 0

function advanceLater(step) {
  toAdvance.push(step)
  pumpAdvances()
}

function pumpAdvances() {
  while (advancing < ADVANCES_AT_ONCE && toAdvance.length > 0) {
    advancing++
    void (transfers ? advanceTransfer : advance)(toAdvance.shift())
      .catch((error) => console.error('floor: a step failed', error))
      .finally(() => {
        advancing--
        pumpAdvances()
      })
  }
}

const CHAIN_RAILS = new Set(['ethereum', 'solana', 'polygon', 'avalanche_c_chain', 'base', 'arbitrum', 'optimism', 'stellar', 'tron'])

async function advance(drainId) {
  const outcome = await db.tx(async (q) => {
    const [drain] = await q(LOCK_DRAIN, [drainId])
    const nowMs = Date.now()
    const now = isoOf(nowMs)
    const amount = BigInt(drain.amount)
    if (drain.state === 'funds_received') {
      const fee = BigInt(drain.developer_fee)
      const subtotal = amount - fee
      const destination = JSON.parse(drain.destination)
      const shard = shardOf(drain.id)
      const keys = [
        ['clearing', drain.liquidation_address_id],
        ['world', `payout:${destination.payment_rail}#${shard}`],
      ]
      if (fee > 0n) keys.push(['developer_fee', `fee#${shard}`])
      const accounts = await lockAccounts(q, drain.environment, drain.app_id, drain.currency, keys)
      const postings = [[accounts.get(`clearing ${drain.liquidation_address_id}`), 'debit', amount]]
      if (fee > 0n) postings.push([accounts.get(`developer_fee fee#${shard}`), 'credit', fee])
      postings.push([accounts.get(`world payout:${destination.payment_rail}#${shard}`), 'credit', subtotal])
      const entryId = await writeEntry(q, 'drain', drain, 'pending', postings, now)
      Object.assign(drain, {
        state: 'payment_submitted',
        exchange_rate: '1',
        converted_amount: String(subtotal),
        outgoing_amount: String(subtotal),
        pending_entry_id: entryId,
        next_step_at: now,
        updated_at: now,
      })
    } else {
      await postPending(q, drain.pending_entry_id, now)
      const rail = JSON.parse(drain.destination).payment_rail
      Object.assign(drain, {
        state: 'payment_processed',
        destination_tx_hash: CHAIN_RAILS.has(rail) ? `0x${randomBytes(32).toString('hex')}` : null,
        next_step_at: null,
        updated_at: now,
      })
    }
    await q(UPDATE_DRAIN, [
      drain.state,
      drain.destination,
      drain.exchange_rate,
      drain.converted_amount,
      drain.outgoing_amount,
      drain.destination_tx_hash,
      drain.pending_entry_id,
      drain.next_step_at,
      drain.updated_at,
      drain.id,
    ])
    const delivery = await emit(q, drain.app_id, 'liquidation_address.drain.updated', toDrain(drain), now)
    return { delivery, more: drain.state === 'payment_submitted' }
  })
  if (outcome.delivery !== undefined) send(outcome.delivery)
  if (outcome.more) advanceLater(drainId)
}

// ---- the intake ----------------------------------------------------------------------------------

function destinationOf(address) {
  const destination = { payment_rail: address.destination_payment_rail, currency: address.destination_currency }
  if (address.destination_address !== null) destination.to_address = address.destination_address
  if (address.external_account_id !== null) destination.external_account_id = address.external_account_id
  if (address.bridge_wallet_id !== null) destination.bridge_wallet_id = address.bridge_wallet_id
  if (address.destination_blockchain_memo !== null) destination.blockchain_memo = address.destination_blockchain_memo
  if (address.destination_wire_message !== null) destination.wire_message = address.destination_wire_message
  if (address.destination_sepa_reference !== null) destination.sepa_reference = address.destination_sepa_reference
  if (address.destination_ach_reference !== null) destination.ach_reference = address.destination_ach_reference
  return destination
}

const app = Fastify({ logger: false })
app.post(
  '/api/v0/customers/:customerId/liquidation_addresses/:liquidationAddressId/simulate_deposit',
  { schema: { response: { 201: DrainSchema } } },
  async (request, reply) => {
    const { customerId, liquidationAddressId } = request.params
    const clientKey = String(request.headers['x-client-key'])
    const [found] = await db.read(KEY_AND_ADDRESS, [customerId, liquidationAddressId, clientKey])
    const presented = Buffer.from(hash('sha256', String(request.headers['x-client-secret']), 'hex'), 'latin1')
    if (found === undefined || found.active !== 1 || !timingSafeEqual(presented, Buffer.from(found.secret_digest, 'latin1'))) return reply.code(401).send({ error: 'no' })
    if (redis !== undefined) await redis.incr(`floor:${clientKey}`)
    if (found.id === null) return reply.code(404).send({ error: 'no' })
    if (found.key_environment !== 'development') return reply.code(403).send({ error: 'no' })
    const amount = parseAmount(String(request.body.amount), found.currency)
    if (amount <= 0n) return reply.code(400).send({ error: 'no' })
    const { fee, rest } = feeOf(amount, found.custom_developer_fee_percent ?? '0')
    const nowMs = Date.now()
    const now = isoOf(nowMs)
    const drain = {
      id: newId(),
      environment: 'sandbox',
      app_id: found.app_id,
      customer_id: found.customer_id,
      liquidation_address_id: found.id,
      state: 'funds_received',
      amount: String(amount),
      currency: found.currency,
      deposit_tx_hash: `0x${randomBytes(32).toString('hex')}`,
      from_address: null,
      source_payment_rail: found.chain,
      destination: JSON.stringify(destinationOf(found)),
      developer_fee: String(fee),
      subtotal_amount: String(rest),
      exchange_rate: null,
      converted_amount: null,
      outgoing_amount: null,
      destination_tx_hash: null,
      refund_tx_hash: null,
      return_reason: null,
      pending_entry_id: null,
      next_step_at: now,
      created_at: now,
      updated_at: now,
    }
    const delivery = await db.tx(async (q) => {
      await q(INSERT_DRAIN, Object.values(drain))
      const inflow = `chain:${drain.source_payment_rail}#${shardOf(drain.id)}`
      const accounts = await lockAccounts(q, drain.environment, drain.app_id, drain.currency, [
        ['world', inflow],
        ['clearing', drain.liquidation_address_id],
      ])
      await writeEntry(
        q,
        'drain',
        drain,
        'posted',
        [
          [accounts.get(`world ${inflow}`), 'debit', amount],
          [accounts.get(`clearing ${drain.liquidation_address_id}`), 'credit', amount],
        ],
        now,
      )
      return emit(q, drain.app_id, 'liquidation_address.drain.created', toDrain(drain), now)
    })
    if (delivery !== undefined) send(delivery)
    if (pipelined) advanceLater(drain.id)
    return reply.code(201).send(toDrain(drain))
  },
)

// ---- transfers (modes transfer and transfer-pipeline) --------------------------------------------

const KEY_AND_WALLET = `select k.active, k.secret_digest, k.environment as key_environment, k.app_id, w.id, w.chain
  from api_keys k left join wallets w on w.app_id = k.app_id and w.environment = (case k.environment when 'development' then 'sandbox' else 'live' end) and w.id = $1
  where k.client_key = $2`
const TRANSFER_COLUMNS = ['id', 'environment', 'app_id', 'kind', 'state', 'wallet_id', 'currency', 'amount', 'developer_fee', 'destination_currency', 'source', 'destination',
  'deposit_instructions', 'customer', 'exchange_rate', 'converted_amount', 'destination_tx_hash', 'refund_tx_hash', 'return_reason', 'pending_entry_id', 'next_step_at', 'created_at', 'updated_at']
const INSERT_TRANSFER = `insert into transfers (${TRANSFER_COLUMNS.join(', ')}) values (${TRANSFER_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`
const LOCK_TRANSFER = `select * from transfers where id = $1${forUpdate}`
const UPDATE_TRANSFER = 'update transfers set state = $1, destination_tx_hash = $2, next_step_at = $3, updated_at = $4 where id = $5'
const STABLECOINS = new Set(['usdc', 'eurc'])
const BENEFICIARY = /^[A-Za-z0-9_-]{1,64}$/

/** A step of a transfer out, as the server's scheduler takes it: submitted (no money moves), then processed (the reservation posted). */
async function advanceTransfer(transferId) {
  const more = await db.tx(async (q) => {
    const [row] = await q(LOCK_TRANSFER, [transferId])
    const now = isoOf(Date.now())
    if (row.state === 'funds_received') Object.assign(row, { state: 'payment_submitted', next_step_at: now, updated_at: now })
    else {
      await postPending(q, row.pending_entry_id, now)
      Object.assign(row, { state: 'payment_processed', destination_tx_hash: `0x${randomBytes(32).toString('hex')}`, next_step_at: null, updated_at: now })
    }
    await q(UPDATE_TRANSFER, [row.state, row.destination_tx_hash, row.next_step_at, row.updated_at, row.id])
    await emit(q, row.app_id, 'transfer.updated', toTransfer(row), now)
    return row.state === 'payment_submitted'
  })
  if (more) advanceLater(transferId)
}

/**
 * POST /transfers/external-stablecoin-transfer: one statement reads the key and the wallet; the
 * digest compared; on PostgreSQL one Redis INCR; the body's fields checked; then ONE transaction
 * reserves amount on the wallet's account against the payout (a pending entry, its postings, both
 * accounts' sums: locked by key in one statement, updated in one), writes the transfer and its
 * event (with the webhook read as for a deposit).
 */
app.post('/api/v0/transfers/external-stablecoin-transfer', { schema: { response: { 201: TransferSchema } } }, async (request, reply) => {
  const body = request.body
  if (typeof body !== 'object' || body === null || typeof body.sourceWalletId !== 'string') return reply.code(400).send({ error: 'no' })
  const clientKey = String(request.headers['x-client-key'])
  const [found] = await db.read(KEY_AND_WALLET, [body.sourceWalletId.toLowerCase(), clientKey])
  const presented = Buffer.from(hash('sha256', String(request.headers['x-client-secret']), 'hex'), 'latin1')
  if (found === undefined || found.active !== 1 || !timingSafeEqual(presented, Buffer.from(found.secret_digest, 'latin1'))) return reply.code(401).send({ error: 'no' })
  if (redis !== undefined) await redis.incr(`floor:${clientKey}`)
  if (found.id === null) return reply.code(404).send({ error: 'no' })
  const currency = String(body.sourceCurrency).toLowerCase()
  const destinationCurrency = String(body.destinationCurrency).toLowerCase()
  if (!STABLECOINS.has(currency) || destinationCurrency !== currency || !BENEFICIARY.test(String(body.beneficiaryId))) return reply.code(400).send({ error: 'no' })
  const amount = parseAmount(String(body.amount), currency)
  if (amount <= 0n) return reply.code(400).send({ error: 'no' })
  const now = isoOf(Date.now())
  const row = {
    id: newId(),
    environment: found.key_environment === 'development' ? 'sandbox' : 'live',
    app_id: found.app_id,
    kind: 'external_stablecoin',
    state: 'funds_received',
    wallet_id: found.id,
    currency,
    amount: String(amount),
    developer_fee: '0',
    destination_currency: destinationCurrency,
    source: JSON.stringify({ payment_rail: 'bridge_wallet', currency, bridge_wallet_id: found.id }),
    destination: JSON.stringify({ payment_rail: found.chain, currency: destinationCurrency, beneficiary_id: body.beneficiaryId }),
    deposit_instructions: null,
    customer: null,
    exchange_rate: '1',
    converted_amount: String(amount),
    destination_tx_hash: null,
    refund_tx_hash: null,
    return_reason: null,
    pending_entry_id: null,
    next_step_at: now,
    created_at: now,
    updated_at: now,
  }
  const delivery = await db.tx(async (q) => {
    const payout = `payout:${found.chain}#${shardOf(row.id)}`
    const accounts = await lockAccounts(q, row.environment, row.app_id, currency, [
      ['wallet', found.id],
      ['world', payout],
    ])
    row.pending_entry_id = await writeEntry(
      q,
      'transfer',
      row,
      'pending',
      [
        [accounts.get(`wallet ${found.id}`), 'debit', amount],
        [accounts.get(`world ${payout}`), 'credit', amount],
      ],
      now,
    )
    await q(INSERT_TRANSFER, TRANSFER_COLUMNS.map((column) => row[column]))
    return emit(q, row.app_id, 'transfer.created', toTransfer(row), now)
  })
  if (delivery !== undefined) send(delivery)
  if (pipelined) advanceLater(row.id)
  return reply.code(201).send(toTransfer(row))
})

await app.listen({ port: Number(portArg), host: '127.0.0.1' })
const address = app.server.address()
process.send?.({ port: typeof address === 'object' && address !== null ? address.port : 0 })
process.on('disconnect', () => process.exit(0))
// An exit, not a kill: a --cpu-prof profile is written at exit.
process.on('SIGTERM', () => process.exit(0))
