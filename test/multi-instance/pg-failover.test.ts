// vitest: postgres project only — a pg_auto_failover formation of its own, beside the suite's PostgreSQL
import { randomBytes, randomUUID } from 'node:crypto'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectToPrimary } from '../../src/db/postgres/primary.js'
import { IDEMPOTENCY, KEY_ANSWER_LOST, KEY_IN_PROGRESS } from '../../src/idempotency/plugin.js'
import { randomEvmAddress } from '../helper.js'
import { PgFormation } from '../helpers/pg-formation.js'
import { cleanUp } from '../processes.js'
import { startServerProcess } from '../helpers/server-process.js'
import { cliJson, type Credentials, type Instance, serviceVars, sleep } from './delivery-helpers.js'
import { closedPort } from './limits-helpers.js'
import { ledgerVerify } from './money-helpers.js'

/**
 * Two servers on a pg_auto_failover formation (a monitor, a primary and its synchronous standby),
 * given the formation URI, under writes of plain resources (customers) and of money (sandbox test
 * payments, deposits that become drains, stablecoin transfers out, all advanced by the servers'
 * schedulers) while the primary's machine dies (its postmaster and keeper killed with kill -9), then,
 * once that node has rejoined as the standby, while `pg_autoctl perform switchover` hands the
 * primary back to it. For each: every write answered 2xx is on the promoted standby; every answer meanwhile is 2xx or 503 with
 * Retry-After, never a 500 and never a hang; writes resume within 15 s of the promotion without a
 * restart; retried with their Idempotency-Key (or deposit hash) the writes answered 503 are carried
 * out once; every drain and transfer went through each of its states once; `devplatform ledger
 * verify` is clean.
 */

let formation: PgFormation | undefined
afterAll(async () => {
  cleanUp()
  await formation?.stop()
})

/** What a request may take at most: connecting to each host (3 s each) and a statement (8 s) within the request budget. */
const ANSWER_BUDGET_MS = 20_000

type Kind = 'customer' | 'payment' | 'deposit' | 'transfer'

interface Write {
  kind: Kind
  /** the description, first name, deposit hash or amount that finds its row */
  marker: string
  server: Instance
  path: string
  body: Record<string, unknown>
  idempotencyKey?: string
  status: number
  /** the body's message, when it has one */
  message: string
  retryAfter: string | null
  sentAt: number
  receivedAt: number
}

async function send(write: Omit<Write, 'status' | 'message' | 'retryAfter' | 'sentAt' | 'receivedAt'>, credentials: Credentials): Promise<Write> {
  const sentAt = performance.now()
  const res = await fetch(`${write.server.baseUrl}${write.path}`, {
    method: 'POST',
    headers: { ...credentials.headers, 'content-type': 'application/json', ...(write.idempotencyKey === undefined ? {} : { 'idempotency-key': write.idempotencyKey }) },
    body: JSON.stringify(write.body),
    signal: AbortSignal.timeout(ANSWER_BUDGET_MS + 5_000),
  })
  const text = await res.text()
  const message = res.headers.get('content-type')?.includes('json') === true ? String((JSON.parse(text) as { message?: unknown }).message ?? '') : ''
  return { ...write, status: res.status, message, retryAfter: res.headers.get('retry-after'), sentAt, receivedAt: performance.now() }
}

/** Rows of one statement on whichever node takes writes now. */
async function query<T>(url: string, text: string, ...values: unknown[]): Promise<T[]> {
  const client: pg.Client = await connectToPrimary(url, { connectionTimeoutMillis: 3_000 })
  try {
    return (await client.query(text, values)).rows as T[]
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** Each of the table's rows went through its states once (one event each, none twice) and has no step to come. */
async function checkStepsOnce(url: string, table: 'drains' | 'transfers', eventPrefix: string): Promise<number> {
  const rows = await query<{ id: string; state: string; next_step_at: string | null }>(url, `select id, state, next_step_at from ${table}`)
  const events = await query<{ payload: string }>(url, `select payload from events where type like $1 order by id`, `${eventPrefix}%`)
  const statesOf = new Map<string, string[]>()
  for (const event of events) {
    const data = (JSON.parse(event.payload) as { data: { id: string; state: string } }).data
    statesOf.set(data.id, [...(statesOf.get(data.id) ?? []), data.state])
  }
  for (const row of rows) {
    const path = statesOf.get(row.id) ?? []
    const where = `${table} ${row.id} (${path.join(' → ')})`
    expect(new Set(path).size, where).toBe(path.length)
    expect(path[path.length - 1], where).toBe(row.state)
    expect(row.next_step_at, where).toBeNull()
  }
  return rows.length
}

/** The formation and what both failovers write with: two servers, a key, a liquidation address, a funded wallet. */
interface Platform {
  formation: PgFormation
  url: string
  servers: Instance[]
  credentials: Credentials
  addressPath: string
  addressId: string
  walletId: string
}

let platform: Platform | undefined
/** Numbers the writes of both failovers: markers and transfer amounts stay unique across them. */
let sequence = 0

function nextWrite(server: Instance, { addressPath, addressId, walletId }: Platform): Omit<Write, 'status' | 'message' | 'retryAfter' | 'sentAt' | 'receivedAt'> {
  const n = sequence++
  const marker = `w${n}-${randomBytes(3).toString('hex')}`
  switch ((['payment', 'deposit', 'customer', 'transfer'] as const)[n % 4]) {
    case 'payment':
      return { kind: 'payment', marker, server, path: '/api/v0/test-payment', body: { amount: '1.00', currency: 'USD', description: marker }, idempotencyKey: randomUUID() }
    case 'deposit': {
      const hash = `0x${randomBytes(32).toString('hex')}`
      return { kind: 'deposit', marker: hash, server, path: `${addressPath}/${addressId}/simulate_deposit`, body: { amount: '5.00', deposit_tx_hash: hash } }
    }
    case 'customer':
      return { kind: 'customer', marker, server, path: '/api/v0/customers', body: { first_name: marker, last_name: 'Writer', phone_number: '+14155550100' } }
    default: {
      // The amount finds the transfer: cents unique to this write.
      const amount = `${1 + Math.floor(n / 100)}.${String(n % 100).padStart(2, '0')}`
      return { kind: 'transfer', marker: amount, server, path: '/api/v0/transfers/external-stablecoin-transfer', body: { sourceWalletId: walletId, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'beneficiary_1', amount: Number(amount) } }
    }
  }
}

/**
 * Four writers over the two servers from 2 s before the failover until writes have resumed for
 * 2 s, then every guarantee checked; the line it prints says how long each phase took.
 */
async function failoverUnderWrites(kind: 'kill -9' | 'switchover'): Promise<void> {
  if (platform === undefined) throw new Error('no formation')
  const { formation, url, servers, credentials } = platform
  const started = performance.now()
  // A primary with its synchronous standby: at once the first time, after the killed node's rejoining the next.
  await formation.settled(60_000)
  const settledMs = performance.now() - started
  const primary = await formation.writable()
  if (primary === undefined) throw new Error('no node takes writes')

  const writes: Write[] = []
  let stopAt = Number.POSITIVE_INFINITY
  const writers = [0, 1, 2, 3].map(async (index) => {
    while (performance.now() < stopAt) {
      const write = await send(nextWrite(servers[index % 2] as Instance, platform as Platform), credentials)
      writes.push(write)
      if (write.status === 503) await sleep(100)
    }
  })
  await sleep(2_000)
  const failedAt = performance.now()
  let switching: Promise<unknown> = Promise.resolve()
  if (kind === 'kill -9') formation.kill9(primary)
  // Its failure is thrown once the writers are done.
  else switching = formation.switchover().then(() => undefined, (error: unknown) => error)
  let promotedAt: number | undefined
  while (promotedAt === undefined && performance.now() - failedAt < 60_000) {
    const now = performance.now()
    const writable = await formation.writable()
    if (writable !== undefined && writable !== primary) promotedAt = now
    else await sleep(100)
  }
  if (promotedAt === undefined) throw new Error(`${kind}: the standby was not promoted within 60 s`)
  const promoted = promotedAt
  while (!writes.some((write) => write.status < 300 && write.sentAt > promoted) && performance.now() - promoted < 30_000) await sleep(50)
  stopAt = performance.now() + 2_000
  await Promise.all(writers)
  const stoppedAt = performance.now()
  const switchoverFailure = await switching
  if (switchoverFailure !== undefined) throw switchoverFailure
  // The killed machine comes back: it rejoins as the standby while the writes are checked.
  if (kind === 'kill -9') formation.restart(primary)

  // Every answer: 2xx, or 503 with Retry-After (while there was no primary), within the budget.
  const statuses = new Map<number, number>()
  for (const write of writes) statuses.set(write.status, (statuses.get(write.status) ?? 0) + 1)
  const refused = writes.filter((write) => write.status === 503)
  expect([...statuses.keys()].filter((status) => status !== 503 && (status < 200 || status >= 300)), JSON.stringify([...statuses])).toEqual([])
  expect(refused.filter((write) => write.retryAfter === null || !/^\d+$/.test(write.retryAfter))).toEqual([])
  // A machine dying leaves seconds without a primary; a switchover may hand over between two writes.
  if (kind === 'kill -9') expect(refused.length).toBeGreaterThan(0)
  expect(Math.max(...writes.map((write) => write.receivedAt - write.sentAt))).toBeLessThan(ANSWER_BUDGET_MS)
  const resumed = writes.filter((write) => write.status < 300 && write.sentAt > promoted).map((write) => write.receivedAt)
  const resumedMs = Math.min(...resumed) - promoted
  expect(resumedMs).toBeLessThan(15_000)

  // What was refused is sent again: payments with their Idempotency-Key and deposits with their
  // hash are carried out once: 201, or 409 when the first attempt had been carried out. A key
  // whose first attempt could not release its claim (no primary then) is held until its lease
  // ends: 409 "still in progress", to be sent again later.
  const leaseEnds = performance.now() + IDEMPOTENCY.leaseMs + 5_000
  await Promise.all(refused.filter((each) => each.kind === 'payment' || each.kind === 'deposit').map(async (write) => {
    let again = await send(write, credentials)
    while (again.status === 409 && again.message === KEY_IN_PROGRESS && performance.now() < leaseEnds) {
      await sleep(500)
      again = await send(write, credentials)
    }
    expect([201, 409], `${write.kind} ${write.marker}: ${again.message}`).toContain(again.status)
    if (again.status === 409) expect(again.message).toMatch(write.kind === 'payment' ? KEY_ANSWER_LOST : /already received/)
  }))

  const retriedAt = performance.now()

  // Nothing acknowledged is lost, nothing is there twice.
  // One connection to the new primary for all the counts: a connection each would cost seconds.
  const counter: pg.Client = await connectToPrimary(url, { connectionTimeoutMillis: 3_000 })
  try {
    const count = async (text: string, marker: string) => Number((await counter.query<{ n: string }>(text, [marker])).rows[0]?.n)
    const counts = { customer: 'select count(*) as n from customers where first_name = $1', payment: 'select count(*) as n from test_payments where description = $1', deposit: 'select count(*) as n from drains where deposit_tx_hash = $1', transfer: "select count(*) as n from transfers where kind = 'external_stablecoin' and amount = $1" }
    for (const write of writes) {
      const n = write.kind === 'transfer' ? await count(counts.transfer, String(Math.round(Number(write.marker) * 1_000_000))) : await count(counts[write.kind], write.marker)
      const retried = write.status === 503 && (write.kind === 'payment' || write.kind === 'deposit')
      if (write.status < 300 || retried) expect(n, `${write.kind} ${write.marker} answered ${write.status}`).toBe(1)
      else expect(n, `${write.kind} ${write.marker} answered ${write.status}`).toBeLessThanOrEqual(1)
    }
  } finally {
    await counter.end().catch(() => undefined)
  }

  // Every drain and transfer ends, each state once; the ledger balances.
  const deadline = performance.now() + 30_000
  while ((await query(url, "select 1 from drains where next_step_at is not null union all select 1 from transfers where next_step_at is not null")).length > 0) {
    if (performance.now() > deadline) throw new Error(`drains or transfers still have steps to come 30 s after the ${kind}`)
    await sleep(200)
  }
  const drains = await checkStepsOnce(url, 'drains', 'liquidation_address.drain.')
  const transfers = await checkStepsOnce(url, 'transfers', 'transfer.')
  await ledgerVerify(url)

  const phases = `primary and standby settled in ${Math.round(settledMs)} ms; promoted ${Math.round(promoted - failedAt)} ms after the ${kind}; writes resumed ${Math.round(resumedMs)} ms after promotion; refused writes sent again in ${Math.round(retriedAt - stoppedAt)} ms; checked in ${Math.round(performance.now() - retriedAt)} ms`
  process.stdout.write(
    `pg failover (${kind}): ${phases}; ` +
      `${writes.length} writes (${[...statuses].map(([status, n]) => `${n}× ${status}`).join(', ')}), ${drains} drains, ${transfers} transfers in all; ${Math.round(performance.now() - started)} ms\n`,
  )
}

describe('PostgreSQL failover under writes (pg_auto_failover, synchronous standby)', () => {
  beforeAll(async () => {
    const started = performance.now()
    formation = await PgFormation.start({ monitorPort: await closedPort(), nodePorts: [await closedPort(), await closedPort()] })
    const url = await formation.databaseUrl()
    expect(url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+,127\.0\.0\.1:\d+\/devplatform\?target_session_attrs=read-write&sslmode=disable$/)
    const setUpMs = performance.now() - started

    const vars = serviceVars(url, { DRAIN_DELAY_FAST_MS: '150', DRAIN_DELAY_ACH_MS: '1000', DRAIN_POLL_MS: '20' })
    // The first start migrates the formation's empty database (synchronously replicated): give it time on a loaded machine.
    const servers: Instance[] = []
    for (const name of ['server-a', 'server-b']) servers.push({ ...(await startServerProcess(vars, { timeoutMs: 60_000 })), name })
    const app = await cliJson<{ id: string }>(url, 'apps', 'create', '--name', 'failover')
    const key = await cliJson<{ client_key: string; client_secret: string }>(url, 'keys', 'create', '--app', app.id, '--environment', 'development', '--rate-limit', '100000000')
    const credentials: Credentials = { appId: app.id, headers: { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret } }
    const [serverA] = servers as [Instance, Instance]

    // A liquidation address for deposits, and a funded wallet for transfers out.
    const customer = await send({ kind: 'customer', marker: 'owner', server: serverA, path: '/api/v0/customers', body: { first_name: 'owner', last_name: 'Lovelace', phone_number: '+14155550100' } }, credentials)
    expect(customer.status).toBe(201)
    const customerId = (await query<{ id: string }>(url, "select id from customers where first_name = 'owner'"))[0]?.id
    const addressPath = `/api/v0/customers/${customerId}/liquidation_addresses`
    const address = await fetch(`${serverA.baseUrl}${addressPath}`, {
      method: 'POST',
      headers: { ...credentials.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ chain: 'base', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_123' }),
    })
    expect(address.status).toBe(201)
    const addressId = ((await address.json()) as { id: string }).id
    const funding = await send({ kind: 'payment', marker: 'funding', server: serverA, path: '/api/v0/test-payment', body: { amount: '100000.00', currency: 'USD', description: 'funding' }, idempotencyKey: randomUUID() }, credentials)
    expect(funding.status).toBe(201)
    const walletId = (await query<{ wallet_id: string }>(url, "select wallet_id from test_payments where description = 'funding'"))[0]?.wallet_id
    if (walletId === undefined) throw new Error('no funded wallet')
    platform = { formation, url, servers, credentials, addressPath, addressId, walletId }
    process.stdout.write(`pg failover: formation up in ${Math.round(setUpMs)} ms; platform ready in ${Math.round(performance.now() - started)} ms\n`)
  }, 150_000)

  it('kill -9 of the primary: loses no acknowledged write, answers 503 + Retry-After meanwhile, resumes within 15 s of the promotion, and runs no money step twice', { timeout: 150_000 }, async () => {
    await failoverUnderWrites('kill -9')
  })

  it('switchover back to the rejoined node: the same guarantees', { timeout: 150_000 }, async () => {
    await failoverUnderWrites('switchover')
  })
})
