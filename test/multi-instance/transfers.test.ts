import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { dropFreshDatabases, freshDatabase } from '../backend.js'
import { cleanUp, waitUntil } from '../processes.js'
import { cliJson, type Credentials, type Instance, serviceVars, sleep, startServer, startWorker, stopGracefully } from './delivery-helpers.js'
import { describeEnds, kill9, ledgerVerify, ownersOfConnections, postgresQuery, type Query } from './money-helpers.js'

/**
 * Transfers across processes on one PostgreSQL + Redis: (a) 100 concurrent transfers out of one
 * wallet holding exactly 10 USDC, split over two servers, give exactly 10 transfers and 90 clear
 * 409s; (b) transfers of every kind in flight while the one process advancing them (a worker) is
 * killed with kill -9, once while its steps wait inside their transactions and once at a moment
 * nobody chose: afterwards every transfer has ended exactly once (one event per state, no state
 * twice, the ledger entries of one pass), each wallet holds what the transfers that succeeded
 * say, and `devplatform ledger verify` passes.
 */

afterAll(async () => {
  cleanUp()
  await dropFreshDatabases()
})

const MONEY_VARS = { DRAIN_DELAY_FAST_MS: '400', DRAIN_DELAY_ACH_MS: '1000', DRAIN_POLL_MS: '20', DRAIN_CONCURRENCY: '4' }

const FAILURE_OF: Readonly<Record<string, string>> = { '13.01': 'undeliverable', '13.02': 'returned', '13.03': 'error' }

/** Each state a transfer can be in, and those that may follow it. */
const NEXT: Readonly<Record<string, readonly string[]>> = {
  awaiting_funds: ['funds_received', 'canceled'],
  // returned: money in too small to deliver once converted goes back to its sender
  funds_received: ['payment_submitted', 'undeliverable', 'error', 'returned'],
  payment_submitted: ['payment_processed', 'returned'],
  returned: ['refunded'],
  payment_processed: [],
  undeliverable: [],
  error: [],
  refunded: [],
  canceled: [],
}

interface Answer<T> {
  status: number
  body: T
}

interface TransferBody {
  id: string
  state: string
  message?: string
}

async function request<T = TransferBody>(instance: Instance, credentials: Credentials, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
  const res = await fetch(`${instance.baseUrl}${path}`, {
    method,
    headers: { ...credentials.headers, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as T }
}

async function developmentCredentials(databaseUrl: string, name: string): Promise<Credentials> {
  const app = await cliJson<{ id: string }>(databaseUrl, 'apps', 'create', '--name', name)
  const key = await cliJson<{ client_key: string; client_secret: string }>(databaseUrl, 'keys', 'create', '--app', app.id, '--environment', 'development', '--rate-limit', '100000000')
  return { appId: app.id, headers: { 'x-client-key': key.client_key, 'x-client-secret': key.client_secret } }
}

async function baseWalletOf(instance: Instance, credentials: Credentials): Promise<string> {
  const wallets = await request<{ data: { id: string; chain: string }[] }>(instance, credentials, 'GET', '/api/v0/wallets')
  expect(wallets.status).toBe(200)
  const wallet = wallets.body.data.find((row) => row.chain === 'base')
  if (wallet === undefined) throw new Error('no base wallet')
  return wallet.id
}

/** The wallet's available balance of `currency` in its smallest unit, from the ledger. */
async function walletUnits(query: Query, walletId: string, currency: string): Promise<bigint> {
  const rows = await query<{ available: string }>("select available from ledger_accounts where kind = 'wallet' and reference = ? and currency = ?", walletId, currency)
  return rows.reduce((sum, row) => sum + BigInt(row.available), 0n)
}

/** Puts `amount` USDC into the wallet: a direct-wallet transfer whose funds arrive, taken to payment_processed by whoever advances transfers. */
async function fund(instance: Instance, credentials: Credentials, walletId: string, amount: string, query: Query): Promise<void> {
  const created = await request(instance, credentials, 'POST', '/api/v0/transfers/direct-wallet', { walletId, network: 'base', stableCoinCurrency: 'usdc', amount })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  const arrived = await request(instance, credentials, 'POST', `/api/v0/transfers/${created.body.id}/simulate_funds`)
  expect(arrived.status, JSON.stringify(arrived.body)).toBe(200)
  await waitUntil(`the funding transfer ${created.body.id} to be processed`, async () => {
    const [row] = await query<{ state: string }>('select state from transfers where id = ?', created.body.id)
    return row?.state === 'payment_processed' ? true : undefined
  }, 20_000, 25)
}

// ---------------------------------------------------------------------------------------------
// (b)'s transfers: what was asked, and what each must end as

type Kind = 'direct_wallet' | 'direct_bank' | 'payment_intent' | 'external_stablecoin' | 'external_bank' | 'conversion'

interface Sent {
  kind: Kind
  amount: string
  /** canceled while awaiting funds */
  cancel: boolean
  id?: string
}

const INBOUND: ReadonlySet<Kind> = new Set(['direct_wallet', 'direct_bank', 'payment_intent'])

function randomAmount(): string {
  const failures = Object.keys(FAILURE_OF)
  if (Math.random() < 0.35) return failures[Math.floor(Math.random() * failures.length)] as string
  return `${1 + Math.floor(Math.random() * 9)}.${String(Math.floor(Math.random() * 100)).padStart(2, '0')}`
}

function randomTransfers(count: number, kinds: readonly Kind[]): Sent[] {
  return Array.from({ length: count }, (_, index): Sent => {
    const kind = kinds[index % kinds.length] as Kind
    return { kind, amount: randomAmount(), cancel: INBOUND.has(kind) && Math.random() < 0.15 }
  })
}

/** Creates the transfer (and makes its funds arrive or cancels it) on `instance`; every answer must be a success. */
async function send(instance: Instance, credentials: Credentials, walletId: string, sent: Sent): Promise<void> {
  const amount = Number(sent.amount)
  let created: Answer<TransferBody>
  let base = '/api/v0/transfers'
  switch (sent.kind) {
    case 'direct_wallet':
      created = await request(instance, credentials, 'POST', '/api/v0/transfers/direct-wallet', { walletId, network: 'ethereum', stableCoinCurrency: 'usdc', amount, developer_fee: 0.5 })
      break
    case 'direct_bank':
      created = await request(instance, credentials, 'POST', '/api/v0/transfers/direct-bank', { walletId, paymentRail: Math.random() < 0.5 ? 'ach' : 'wire', sourceCurrency: 'usd', destinationCurrency: 'usdc', amount })
      break
    case 'payment_intent':
      base = '/api/v0/payment-intents'
      created = await request(instance, credentials, 'POST', '/api/v0/payment-intents/stablecoin', { sourceCurrency: 'usdc', sourceNetwork: 'polygon', destinationNetwork: 'base', amount: sent.amount }, { 'idempotency-key': randomUUID() })
      break
    case 'external_stablecoin':
      created = await request(instance, credentials, 'POST', '/api/v0/transfers/external-stablecoin-transfer', { sourceWalletId: walletId, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'beneficiary_1', amount, developer_fee: 0.25 })
      break
    case 'external_bank':
      created = await request(instance, credentials, 'POST', '/api/v0/transfers/external-bank-transfer', { sourceWalletId: walletId, sourceCurrency: 'usdc', destinationCurrency: 'usd', destinationPaymentRail: Math.random() < 0.5 ? 'ach' : 'wire', external_account_id: 'ext_1', amount })
      break
    case 'conversion':
      created = await request(instance, credentials, 'POST', '/api/v0/transfers/stablecoin-conversion', { walletId, sourceNetwork: 'base', sourceCurrency: 'usdc', destinationCurrency: 'eurc', amount })
      break
  }
  expect(created.status, `${sent.kind} ${sent.amount}: ${JSON.stringify(created.body)}`).toBe(201)
  sent.id = created.body.id
  if (!INBOUND.has(sent.kind)) return
  const next = sent.cancel ? await request(instance, credentials, 'DELETE', `${base}/${sent.id}`) : await request(instance, credentials, 'POST', `${base}/${sent.id}/simulate_funds`)
  expect(next.status, `${sent.kind} ${sent.amount}: ${JSON.stringify(next.body)}`).toBe(200)
}

async function sendAll(servers: readonly Instance[], credentials: Credentials, walletId: string, transfers: readonly Sent[]): Promise<void> {
  await Promise.all(transfers.map((sent, index) => send(servers[index % servers.length] as Instance, credentials, walletId, sent)))
}

/** Waits until no transfer has a step to come; fails naming the states of those that still have one. */
async function allEnded(query: Query, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const waiting = await query<{ state: string; n: number | string }>('select state, count(*) as n from transfers where next_step_at is not null group by state')
    if (waiting.length === 0) return
    if (Date.now() > deadline) throw new Error(`transfers still to end after ${timeoutMs} ms: ${waiting.map((row) => `${Number(row.n)} ${row.state}`).join(', ')}`)
    await sleep(100)
  }
}

interface TransferRow {
  id: string
  kind: string
  state: string
  currency: string
  destination_currency: string
  amount: string | null
  developer_fee: string
  converted_amount: string | null
  next_step_at: string | null
}

/**
 * Every transfer went through each of its states once, with one event per state, the ledger
 * entries of exactly one pass, and the end its amount calls for; returns how many ended how and
 * the wallet's USDC and EURC the transfers that succeeded add up to (beyond `funded`).
 */
async function checkEndedOnce(query: Query, transfers: readonly Sent[], funded: bigint): Promise<{ ends: Map<string, number>; usdc: bigint; eurc: bigint }> {
  const rows = await query<TransferRow>('select id, kind, state, currency, destination_currency, amount, developer_fee, converted_amount, next_step_at from transfers')
  const byId = new Map(rows.map((row) => [row.id, row]))
  const events = await query<{ type: string; payload: string }>("select type, payload from events where type like 'transfer.%' or type like 'payment_intent.%' order by id")
  const statesOf = new Map<string, { type: string; state: string }[]>()
  for (const event of events) {
    const data = (JSON.parse(event.payload) as { data: { id: string; state: string } }).data
    statesOf.set(data.id, [...(statesOf.get(data.id) ?? []), { type: event.type, state: data.state }])
  }
  const postings = await query<{ reason_id: string; entry_id: string; status: string; kind: string; reference: string }>(
    `select e.reason_id, e.id as entry_id, e.status, a.kind, a.reference
       from ledger_postings p join ledger_entries e on e.id = p.entry_id join ledger_accounts a on a.id = p.account_id
      where e.reason_type in ('transfer', 'payment_intent')`,
  )
  const entriesOf = new Map<string, Map<string, typeof postings>>()
  for (const posting of postings) {
    const entries = entriesOf.get(posting.reason_id) ?? new Map<string, typeof postings>()
    entries.set(posting.entry_id, [...(entries.get(posting.entry_id) ?? []), posting])
    entriesOf.set(posting.reason_id, entries)
  }

  const ends = new Map<string, number>()
  let usdc = funded
  let eurc = 0n
  for (const sent of transfers) {
    const row = sent.id === undefined ? undefined : byId.get(sent.id)
    if (row === undefined) throw new Error(`no transfer for ${sent.kind} ${sent.amount}`)
    expect(row.next_step_at).toBeNull()
    const family = sent.kind === 'payment_intent' ? 'payment_intent' : 'transfer'
    const transferEvents = statesOf.get(row.id) ?? []
    const path = transferEvents.map((event) => event.state)
    const where = `${sent.kind} ${sent.amount} ${row.id} (${path.join(' → ')})`
    expect(transferEvents.map((event) => event.type), where).toEqual(transferEvents.map((_, index) => `${family}.${index === 0 ? 'created' : 'updated'}`))
    expect(new Set(path).size, where).toBe(path.length)
    for (let index = 1; index < path.length; index++) expect(NEXT[path[index - 1] as string], where).toContain(path[index])
    expect(path[path.length - 1], where).toBe(row.state)
    ends.set(`${sent.kind}: ${path.join(' → ')}`, (ends.get(`${sent.kind}: ${path.join(' → ')}`) ?? 0) + 1)

    // The end its amount calls for.
    const inbound = INBOUND.has(sent.kind)
    const failure = FAILURE_OF[sent.amount]
    const after = failure === 'undeliverable' ? ['undeliverable'] : failure === 'error' ? ['error'] : failure === 'returned' ? ['payment_submitted', 'returned', 'refunded'] : ['payment_submitted', 'payment_processed']
    const expected = sent.cancel ? ['awaiting_funds', 'canceled'] : [...(inbound ? ['awaiting_funds'] : []), 'funds_received', ...after]
    expect(path, where).toEqual(expected)

    // The ledger entries of one pass.
    const entries = [...(entriesOf.get(row.id)?.values() ?? [])]
    const statuses = (pick: (entry: typeof postings) => boolean) => entries.filter(pick).map((entry) => entry[0]?.status)
    const isIntake = (entry: typeof postings) => entry.some((posting) => posting.kind === 'world' && posting.reference.startsWith('inflow:'))
    const isRefund = (entry: typeof postings) => entry.some((posting) => posting.kind === 'world' && posting.reference.startsWith('refund:'))
    const payout = path.includes('payment_processed') ? ['posted'] : path.includes('returned') ? ['voided'] : []
    if (inbound) {
      expect(statuses(isIntake), where).toEqual(sent.cancel ? [] : ['posted'])
      expect(statuses((entry) => !isIntake(entry) && !isRefund(entry)), where).toEqual(payout)
      expect(statuses(isRefund), where).toEqual(path.includes('refunded') ? ['posted'] : [])
    } else {
      // The reservation: posted when paid, voided whichever way it failed.
      expect(statuses(() => true), where).toEqual([row.state === 'payment_processed' ? 'posted' : 'voided'])
    }

    // What the wallet gained or gave.
    if (row.state === 'payment_processed') {
      const converted = BigInt(row.converted_amount ?? '0')
      if (inbound) usdc += converted
      else {
        usdc -= BigInt(row.amount ?? '0') + BigInt(row.developer_fee)
        if (sent.kind === 'conversion') eurc += converted
      }
    }
  }
  return { ends, usdc, eurc }
}

describe('transfers on PostgreSQL across two servers', () => {
  it('100 concurrent transfers out of a wallet holding 10 USDC, split over two servers: exactly 10 × 201 and 90 × 409 with the balance available', { timeout: 120_000 }, async () => {
    const fresh = await freshDatabase('postgres')
    const query = postgresQuery(fresh)
    const vars = serviceVars(fresh.url, { ...MONEY_VARS, DRAIN_SCHEDULER: 'on' })
    const servers = [await startServer('server-a', vars), await startServer('server-b', vars)]
    const credentials = await developmentCredentials(fresh.url, 'hot wallet')
    const walletId = await baseWalletOf(servers[0] as Instance, credentials)
    await fund(servers[0] as Instance, credentials, walletId, '10', query)
    expect(await walletUnits(query, walletId, 'usdc')).toBe(10_000_000n)

    const body = { sourceWalletId: walletId, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'beneficiary_1', amount: 1 }
    const answers = await Promise.all(
      Array.from({ length: 100 }, async (_, index) => {
        const server = servers[index % 2] as Instance
        return { server: server.name, ...(await request(server, credentials, 'POST', '/api/v0/transfers/external-stablecoin-transfer', body)) }
      }),
    )
    const created = answers.filter((answer) => answer.status === 201)
    const refused = answers.filter((answer) => answer.status === 409)
    expect(answers.filter((answer) => answer.status !== 201 && answer.status !== 409).map((answer) => `${answer.status} ${JSON.stringify(answer.body)}`)).toEqual([])
    expect(created).toHaveLength(10)
    expect(refused).toHaveLength(90)
    for (const answer of refused) expect(answer.body.message).toBe('Insufficient funds: the wallet has 0.000000 USDC available and this transfer needs 1.000000')
    expect(new Set(created.map((answer) => answer.body.id)).size).toBe(10)
    // Nothing was written for a refusal: the ten transfers out and the funding one.
    const [count] = await query<{ n: number | string }>("select count(*) as n from transfers where kind = 'external_stablecoin'")
    expect(Number(count?.n)).toBe(10)
    expect(await walletUnits(query, walletId, 'usdc')).toBe(0n)

    await allEnded(query, 30_000)
    const states = await query<{ state: string; n: number | string }>("select state, count(*) as n from transfers where kind = 'external_stablecoin' group by state")
    expect(states.map((row) => [row.state, Number(row.n)])).toEqual([['payment_processed', 10]])
    const [wallet] = await query<{ available: string; debits_pending: string; credits_posted: string; debits_posted: string }>("select available, debits_pending, credits_posted, debits_posted from ledger_accounts where kind = 'wallet' and reference = ? and currency = 'usdc'", walletId)
    expect(wallet).toEqual({ available: '0', debits_pending: '0', credits_posted: '10000000', debits_posted: '10000000' })
    await ledgerVerify(fresh.url)
    const byServer = created.reduce<Record<string, number>>((counts, answer) => ({ ...counts, [answer.server]: (counts[answer.server] ?? 0) + 1 }), {})
    process.stdout.write(`transfers across processes (postgres): 100 concurrent transfers out of 10 USDC: 10 × 201 (${JSON.stringify(byServer)}), 90 × 409\n`)
    for (const server of servers) await kill9(server)
  })

  it('a worker advancing transfers of every kind is killed with kill -9, inside its steps and at a random moment: each ends exactly once; ledger verify passes', { timeout: 240_000 }, async () => {
    const fresh = await freshDatabase('postgres')
    const query = postgresQuery(fresh)
    const vars = serviceVars(fresh.url, MONEY_VARS)
    // Only the worker advances transfers, so each kill stops the one process doing it.
    const serverVars = { ...vars, DRAIN_SCHEDULER: 'off' }
    const servers = [await startServer('server-a', serverVars), await startServer('server-b', serverVars)]
    let worker = await startWorker('worker', vars)
    const credentials = await developmentCredentials(fresh.url, 'in flight')
    const walletId = await baseWalletOf(servers[0] as Instance, credentials)
    const funded = 1_000_000_000n
    await fund(servers[0] as Instance, credentials, walletId, '1000', query)
    const sent: Sent[] = []

    // 1. Money in arrives at both servers while no worker runs, until all of it is due; the
    // wallet's ledger account is then locked (the intake does not touch it), so the new worker's
    // submit steps, which credit the wallet, stop inside their transactions, each holding its
    // transfer locked, as many at once as it runs.
    expect((await stopGracefully(worker)).code).toBe(0)
    const firstWave = randomTransfers(16, ['direct_wallet', 'direct_bank', 'payment_intent']).map((transfer) => ({ ...transfer, cancel: false }))
    await sendAll(servers, credentials, walletId, firstWave)
    sent.push(...firstWave)
    await sleep(Number(MONEY_VARS.DRAIN_DELAY_ACH_MS) + 100)
    const fence = new pg.Client({ connectionString: fresh.url })
    await fence.connect()
    await fence.query('begin')
    await fence.query("select id from ledger_accounts where kind = 'wallet' and reference = $1 for update", [walletId])
    worker = await startWorker('worker', vars)
    const waitingSteps = async () => (await ownersOfConnections(fresh, [worker], "wait_event_type = 'Lock' and state = 'active'")).length
    await waitUntil('the worker to wait inside its steps', async () => ((await waitingSteps()) >= Number(MONEY_VARS.DRAIN_CONCURRENCY) ? true : undefined), 8_000, 20)
    const waitingAtFirstKill = await waitingSteps()
    const [inFlightAtFirst] = await query<{ n: number | string }>('select count(*) as n from transfers where next_step_at is not null')
    await kill9(worker)
    await fence.query('commit')
    await fence.end()
    worker = await startWorker('worker', vars)

    // 2. Every kind at both servers, some canceled while awaiting funds; the worker is killed at a
    // moment nobody chose while steps are under way.
    const secondWave = randomTransfers(60, ['direct_wallet', 'external_stablecoin', 'direct_bank', 'conversion', 'payment_intent', 'external_bank'])
    await sendAll(servers, credentials, walletId, secondWave)
    sent.push(...secondWave)
    await waitUntil('a transfer of the second wave to be submitted', async () => {
      const ids = secondWave.map((transfer) => transfer.id as string)
      const [row] = await query<{ n: number | string }>(`select count(*) as n from transfers where state = 'payment_submitted' and id in (${ids.map(() => '?').join(',')})`, ...ids)
      return Number(row?.n) > 0 ? true : undefined
    })
    await sleep(Math.floor(Math.random() * 300))
    const openAtKill = (await ownersOfConnections(fresh, [worker], 'xact_start is not null')).length
    const [inFlightAtSecond] = await query<{ n: number | string }>('select count(*) as n from transfers where next_step_at is not null')
    await kill9(worker)
    worker = await startWorker('worker', vars)

    await allEnded(query, 90_000)
    const { ends, usdc, eurc } = await checkEndedOnce(query, sent, funded)
    expect(await walletUnits(query, walletId, 'usdc')).toBe(usdc)
    expect(await walletUnits(query, walletId, 'eurc')).toBe(eurc)
    const negative = await query<{ id: string }>("select id from ledger_accounts where kind <> 'world' and cast(available as numeric) < 0")
    expect(negative).toEqual([])
    await ledgerVerify(fresh.url)
    process.stdout.write(
      `transfers across processes (postgres): first kill with ${waitingAtFirstKill} steps waiting inside their transactions and ${Number(inFlightAtFirst?.n)} transfers in flight; ` +
        `second kill with ${openAtKill} transactions open and ${Number(inFlightAtSecond?.n)} transfers in flight; ${sent.length} transfers ended once: ${describeEnds(ends)}\n`,
    )
    for (const instance of [...servers, worker]) await kill9(instance)
  })
})
