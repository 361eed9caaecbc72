import { randomBytes } from 'node:crypto'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../backend.js'
import { randomEvmAddress } from '../helper.js'
import { cleanUp, freshDb, waitUntil } from '../processes.js'
import { api, cliJson, type Credentials, type Instance, serviceVars, sleep, startServer, startWorker } from './delivery-helpers.js'
import { describeEnds, kill9, ledgerVerify, ownersOfConnections, postgresQuery, type Query } from './money-helpers.js'

/**
 * Deposits and drains across processes: servers and a worker advance the same drains while
 * deposits arrive at both servers, and the process advancing drains is killed (kill -9), once
 * at a random moment and once while it is inside a step's transaction. Afterwards every drain
 * has ended exactly once: one event per state it went through, no state twice, the ledger
 * entries of exactly one pass, and `devplatform ledger verify` passes.
 */

afterAll(async () => {
  cleanUp()
  await dropFreshDatabases()
})

/** Short sandbox delays; the fenced address is on ACH, so its drains come due after the fence is up. */
const DRAIN_VARS = { DRAIN_SCHEDULER: 'on', DRAIN_DELAY_FAST_MS: '150', DRAIN_DELAY_ACH_MS: '1000', DRAIN_POLL_MS: '20', DRAIN_CONCURRENCY: '4' }

const FAILURE_OF: Readonly<Record<string, string>> = { '13.01': 'undeliverable', '13.02': 'returned', '13.03': 'error' }

/** Each state a drain can be in, and those that may follow it. */
const NEXT: Readonly<Record<string, readonly string[]>> = {
  funds_received: ['payment_submitted', 'undeliverable', 'error', 'canceled'],
  payment_submitted: ['payment_processed', 'returned'],
  returned: ['refunded'],
  canceled: ['refunded'],
  payment_processed: [],
  undeliverable: [],
  error: [],
  refunded: [],
}

interface AddressFixture {
  customerId: string
  id: string
  returnAddress: boolean
  /** deactivated while deposits were arriving: a drain of it may end canceled */
  deactivated: boolean
}

interface SentDeposit {
  address: AddressFixture
  amount: string
  txHash: string
}

/** What a query answers: the test's window on the database, whichever backend. */

function newTxHash(): string {
  return `0x${randomBytes(32).toString('hex')}`
}

async function createAddress(baseUrl: string, credentials: Credentials, fields: Record<string, unknown>): Promise<AddressFixture> {
  const customer = await api<{ id: string }>(baseUrl, credentials, 'POST', '/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+14155550100' })
  expect(customer.status).toBe(201)
  const body = { chain: 'base', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_123', ...fields }
  const created = await api<{ id: string }>(baseUrl, credentials, 'POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses`, body)
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  return { customerId: customer.body.id, id: created.body.id, returnAddress: 'return_address' in fields, deactivated: false }
}

/** Sends the deposits at once, spread over the servers; every one must be taken (201). */
async function depositAll(servers: readonly Instance[], credentials: Credentials, deposits: readonly SentDeposit[]): Promise<void> {
  const answers = await Promise.all(
    deposits.map((deposit, index) => {
      const server = servers[index % servers.length] as Instance
      return api(server.baseUrl, credentials, 'POST', `/api/v0/customers/${deposit.address.customerId}/liquidation_addresses/${deposit.address.id}/simulate_deposit`, {
        amount: deposit.amount,
        deposit_tx_hash: deposit.txHash,
      })
    }),
  )
  expect(answers.map((answer) => answer.status)).toEqual(deposits.map(() => 201))
}

function randomAmount(): string {
  const failures = Object.keys(FAILURE_OF)
  if (Math.random() < 0.3) return failures[Math.floor(Math.random() * failures.length)] as string
  return `${1 + Math.floor(Math.random() * 999)}.${String(Math.floor(Math.random() * 100)).padStart(2, '0')}`
}

/** Waits until no drain has a step to come; fails naming the states of those that still have one. */
async function allEnded(query: Query, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const waiting = await query<{ state: string; n: number | string }>('select state, count(*) as n from drains where next_step_at is not null group by state')
    if (waiting.length === 0) return
    if (Date.now() > deadline) throw new Error(`drains still to end after ${timeoutMs} ms: ${waiting.map((row) => `${Number(row.n)} ${row.state}`).join(', ')}`)
    await sleep(100)
  }
}

/**
 * Every deposit became exactly one drain that went through each of its states once, with one
 * event per state, the ledger entries of exactly one pass through them, and the end its amount
 * and address call for.
 */
async function checkEndedOnce(query: Query, deposits: readonly SentDeposit[]): Promise<Map<string, number>> {
  const drains = await query<{ id: string; state: string; deposit_tx_hash: string; amount: string; liquidation_address_id: string; next_step_at: string | null }>(
    'select id, state, deposit_tx_hash, amount, liquidation_address_id, next_step_at from drains',
  )
  expect(drains).toHaveLength(deposits.length)
  const byHash = new Map(drains.map((drain) => [drain.deposit_tx_hash, drain]))
  expect(byHash.size).toBe(deposits.length)

  const events = await query<{ type: string; payload: string }>("select type, payload from events where type like 'liquidation_address.drain.%' order by id")
  const statesOf = new Map<string, { type: string; state: string }[]>()
  for (const event of events) {
    const data = (JSON.parse(event.payload) as { data: { id: string; state: string } }).data
    statesOf.set(data.id, [...(statesOf.get(data.id) ?? []), { type: event.type, state: data.state }])
  }

  const postings = await query<{ reason_id: string; entry_id: string; status: string; kind: string; reference: string; direction: string; amount: string }>(
    `select e.reason_id, e.id as entry_id, e.status, a.kind, a.reference, p.direction, p.amount
       from ledger_postings p join ledger_entries e on e.id = p.entry_id join ledger_accounts a on a.id = p.account_id
      where e.reason_type = 'drain'`,
  )
  const entriesOf = new Map<string, Map<string, typeof postings>>()
  for (const posting of postings) {
    const entries = entriesOf.get(posting.reason_id) ?? new Map<string, typeof postings>()
    entries.set(posting.entry_id, [...(entries.get(posting.entry_id) ?? []), posting])
    entriesOf.set(posting.reason_id, entries)
  }

  const ends = new Map<string, number>()
  for (const deposit of deposits) {
    const drain = byHash.get(deposit.txHash)
    if (drain === undefined) throw new Error(`no drain for deposit ${deposit.txHash}`)
    expect(drain.next_step_at).toBeNull()
    const drainEvents = statesOf.get(drain.id) ?? []
    const path = drainEvents.map((event) => event.state)
    const where = `drain ${drain.id} (${path.join(' → ')})`
    // One created, then one updated per state change, no state twice, each a step the model allows.
    expect(drainEvents.map((event) => event.type), where).toEqual(drainEvents.map((_, index) => (index === 0 ? 'liquidation_address.drain.created' : 'liquidation_address.drain.updated')))
    expect(new Set(path).size, where).toBe(path.length)
    expect(path[0], where).toBe('funds_received')
    for (let index = 1; index < path.length; index++) expect(NEXT[path[index - 1] as string], where).toContain(path[index])
    expect(path[path.length - 1], where).toBe(drain.state)
    ends.set(path.join(' → '), (ends.get(path.join(' → ')) ?? 0) + 1)

    // The end its amount and address call for.
    const failure = FAILURE_OF[deposit.amount]
    const returned = deposit.address.returnAddress ? ['payment_submitted', 'returned', 'refunded'] : ['payment_submitted', 'returned']
    const expected = failure === 'undeliverable' ? ['undeliverable'] : failure === 'error' ? ['error'] : failure === 'returned' ? returned : ['payment_submitted', 'payment_processed']
    const canceled = deposit.address.returnAddress ? ['canceled', 'refunded'] : ['canceled']
    const allowed = [['funds_received', ...expected], ...(deposit.address.deactivated ? [['funds_received', ...canceled]] : [])]
    expect(allowed, where).toContainEqual(path)

    // The ledger entries of one pass: the intake, at most one payout entry, at most one refund.
    const entries = [...(entriesOf.get(drain.id)?.values() ?? [])]
    const intake = entries.filter((entry) => entry.some((posting) => posting.kind === 'world' && posting.reference.startsWith('chain:')))
    const refunds = entries.filter((entry) => entry.some((posting) => posting.kind === 'world' && posting.reference.startsWith('refund:')))
    const payouts = entries.filter((entry) => !intake.includes(entry) && !refunds.includes(entry))
    expect(intake.map((entry) => entry[0]?.status), where).toEqual(['posted'])
    expect(
      intake[0]?.filter((posting) => posting.direction === 'debit').map((posting) => posting.amount),
      where,
    ).toEqual([drain.amount])
    const payoutStatus = path.includes('returned') ? ['voided'] : path.includes('payment_processed') ? ['posted'] : []
    expect(payouts.map((entry) => entry[0]?.status), where).toEqual(payoutStatus)
    expect(refunds.map((entry) => entry[0]?.status), where).toEqual(path.includes('refunded') ? ['posted'] : [])
  }
  // No event of a drain that no deposit made.
  expect(statesOf.size).toBe(deposits.length)
  return ends
}

/** Those of `candidates` with a database connection waiting for a lock. */
async function waitingOnLock(fresh: FreshDatabase, candidates: readonly Instance[]): Promise<Instance[]> {
  const pids = new Set(await ownersOfConnections(fresh, candidates, "wait_event_type = 'Lock' and state = 'active'"))
  return candidates.filter((candidate) => pids.has(candidate.pid))
}

describe('drains on PostgreSQL with two servers and a worker, kill -9 mid-run', () => {
  it('every drain ends exactly once, with one event per state and one pass of ledger entries; ledger verify passes', { timeout: 180_000 }, async () => {
    const fresh = await freshDatabase('postgres')
    const query = postgresQuery(fresh)
    const vars = serviceVars(fresh.url, DRAIN_VARS)
    const serverA = await startServer('server-a', vars)
    let serverB = await startServer('server-b', vars)
    let worker = await startWorker('worker', vars)
    const app = await cliJson<{ id: string }>(fresh.url, 'apps', 'create', '--name', 'drains')
    const key = await cliJson<{ client_key: string; client_secret: string }>(fresh.url, 'keys', 'create', '--app', app.id, '--environment', 'development', '--rate-limit', '100000000')
    const credentials: Credentials = { appId: app.id, headers: { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret } }

    const wallets = await api<{ data: { id: string }[] }>(serverA.baseUrl, credentials, 'GET', '/api/v0/wallets')
    expect(wallets.status).toBe(200)
    const fenced = await createAddress(serverA.baseUrl, credentials, { custom_developer_fee_percent: '1.5', return_address: randomEvmAddress() })
    const addresses = [
      fenced,
      await createAddress(serverA.baseUrl, credentials, { destination_payment_rail: 'sepa', destination_currency: 'eur', destination_sepa_reference: 'REF-123456', return_address: randomEvmAddress() }),
      await createAddress(serverA.baseUrl, credentials, { currency: 'eurc', destination_payment_rail: 'wire', custom_developer_fee_percent: '0.12345' }),
      await createAddress(serverA.baseUrl, credentials, {
        currency: 'dai',
        destination_payment_rail: 'bridge_wallet',
        bridge_wallet_id: wallets.body.data[0]?.id,
        destination_currency: 'usdc',
        external_account_id: undefined,
        return_address: randomEvmAddress(),
      }),
      await createAddress(serverA.baseUrl, credentials, { currency: 'pyusd', destination_payment_rail: 'base', destination_currency: 'usdc', destination_address: randomEvmAddress(), external_account_id: undefined }),
      await createAddress(serverA.baseUrl, credentials, { currency: 'usdt', destination_payment_rail: 'spei', destination_currency: 'mxn', return_address: randomEvmAddress() }),
    ]
    const sent: SentDeposit[] = []

    // 1. Deposits to the fenced address at both servers; its clearing account is then locked, so
    // the steps of its drains stop inside their transactions, each holding its drain locked.
    const firstWave = Array.from({ length: 20 }, (): SentDeposit => ({ address: fenced, amount: randomAmount(), txHash: newTxHash() }))
    await depositAll([serverA, serverB], credentials, firstWave)
    sent.push(...firstWave)
    const fence = new pg.Client({ connectionString: fresh.url })
    await fence.connect()
    await fence.query('begin')
    await fence.query("select id from ledger_accounts where kind = 'clearing' and reference = $1 for update", [fenced.id])
    const caught = await waitUntil(
      'the worker and server B to wait inside a step',
      async () => {
        const waiting = await waitingOnLock(fresh, [worker, serverB])
        return waiting.length === 2 ? waiting : undefined
      },
      4_000,
      20,
    )
    expect(caught.map((instance) => instance.name).sort()).toEqual(['server-b', 'worker'])
    await kill9(worker)
    await kill9(serverB)
    await fence.query('commit')
    await fence.end()
    worker = await startWorker('worker', vars)
    serverB = await startServer('server-b', vars)

    // 2. Deposits to every address at both servers; one address is deactivated meanwhile, and the
    // worker is killed at a moment nobody chose while steps are under way.
    const secondWave = Array.from({ length: 40 }, (_, index): SentDeposit => ({ address: addresses[index % addresses.length] as AddressFixture, amount: randomAmount(), txHash: newTxHash() }))
    const deactivated = addresses[1] as AddressFixture
    const arriving = depositAll([serverA, serverB], credentials, secondWave)
    await sleep(100 + Math.floor(Math.random() * 200))
    await fresh.query("update liquidation_addresses set state = 'deactivated' where id = ?", deactivated.id)
    deactivated.deactivated = true
    await arriving
    sent.push(...secondWave)
    await waitUntil('a drain of the second wave to be submitted', async () => {
      const [row] = await query<{ n: number | string }>("select count(*) as n from drains where state <> 'funds_received' and deposit_tx_hash in (" + secondWave.map(() => '?').join(',') + ')', ...secondWave.map((deposit) => deposit.txHash))
      return Number(row?.n) > 0 ? true : undefined
    })
    await sleep(Math.floor(Math.random() * 300))
    // For the record: how many transactions the worker had open when it was killed.
    const openAtKill = (await ownersOfConnections(fresh, [worker], 'xact_start is not null')).length
    await kill9(worker)
    worker = await startWorker('worker', vars)

    await allEnded(query, 60_000)
    const ends = await checkEndedOnce(query, sent)
    await ledgerVerify(fresh.url)
    process.stdout.write(`drains across processes (postgres): the worker killed with ${openAtKill} transactions open; ${sent.length} drains ended once: ${describeEnds(ends)}\n`)
    for (const instance of [serverA, serverB, worker]) await kill9(instance)
  })
})

describe('drains on SQLite with a server and a worker, kill -9 of the worker mid-run', () => {
  it('every drain ends exactly once and ledger verify passes', { timeout: 120_000 }, async () => {
    const { url, file } = freshDb('drains-sqlite-')
    // Only the worker advances drains, so each kill stops the one process doing it.
    const vars = { HOST: '127.0.0.1', NODE_ENV: 'development', DATABASE_URL: url, LOG_LEVEL: 'info', ...DRAIN_VARS }
    const server = await startServer('server', { ...vars, DRAIN_SCHEDULER: 'off' })
    let worker = await startWorker('worker', vars)
    const app = await cliJson<{ id: string }>(url, 'apps', 'create', '--name', 'drains')
    const key = await cliJson<{ client_key: string; client_secret: string }>(url, 'keys', 'create', '--app', app.id, '--environment', 'development', '--rate-limit', '100000000')
    const credentials: Credentials = { appId: app.id, headers: { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret } }
    const addresses = [
      await createAddress(server.baseUrl, credentials, { destination_payment_rail: 'sepa', destination_currency: 'eur', destination_sepa_reference: 'REF-123456', return_address: randomEvmAddress() }),
      await createAddress(server.baseUrl, credentials, { currency: 'dai', destination_payment_rail: 'wire', custom_developer_fee_percent: '2.5' }),
      await createAddress(server.baseUrl, credentials, { destination_payment_rail: 'base', destination_address: randomEvmAddress(), destination_currency: 'usdc', external_account_id: undefined, return_address: randomEvmAddress() }),
    ]
    const sent = Array.from({ length: 40 }, (_, index): SentDeposit => ({ address: addresses[index % addresses.length] as AddressFixture, amount: randomAmount(), txHash: newTxHash() }))
    await depositAll([server], credentials, sent)
    const reader = new SQLite(file, { readonly: true })
    const query: Query = async <T>(sqlText: string, ...params: unknown[]) => reader.prepare(sqlText).all(...params) as T[]
    try {
      for (let kill = 0; kill < 3; kill++) {
        await sleep(100 + Math.floor(Math.random() * 400))
        await kill9(worker)
        worker = await startWorker('worker', vars)
      }
      await allEnded(query, 60_000)
      const ends = await checkEndedOnce(query, sent)
      await ledgerVerify(url)
      process.stdout.write(`drains across processes (sqlite): ${sent.length} drains ended once: ${describeEnds(ends)}\n`)
    } finally {
      reader.close()
    }
    await kill9(worker)
    await kill9(server)
  })
})
