import type { FastifyRequest } from 'fastify'
import type { Recent } from '../../db/newest-first-page.js'
import { type EntryWithPostings, entriesFor } from '../../ledger/statements.js'
import { checkoutPaymentsAmong } from '../checkout/public.js'
import { DRAIN_STATES, type DrainRow, findDrain, recentDrains } from '../drains/public.js'
import { eventsAbout } from '../events/public.js'
import { findTestPayment, recentTestPayments, type TestPaymentRow } from '../test-payments/public.js'
import { findTransfer, recentTransfers, type Transfer, TRANSFER_STATES } from '../transfers/public.js'
import { consolePage, type Html, html, scrollingTable } from './html.js'
import { money } from './overview.js'
import { type Answer, type ConsoleRoute, type PageContext, PageRefusal } from './page-context.js'

/**
 * Payments (docs/console.md#payments): the environment's drains, transfers, payment intents
 * (checkout payments among them) and test payments in one list, newest first, filtered by kind,
 * state and creation date through a GET form; each with a page of its facts, its timeline of
 * events and its ledger entries.
 */

const LIST_SIZE = 50

const KINDS = {
  drain: 'Drain',
  transfer: 'Transfer',
  'payment-intent': 'Payment intent',
  checkout: 'Checkout payment',
  'test-payment': 'Test payment',
} as const
type Kind = keyof typeof KINDS
const isKind = (text: string): text is Kind => Object.hasOwn(KINDS, text)
/** The kind a detail page's address names: a checkout payment is a payment intent. */
const pathKind = (kind: Kind): Kind => (kind === 'checkout' ? 'payment-intent' : kind)

const STATES = [...new Set<string>([...DRAIN_STATES, ...TRANSFER_STATES, 'succeeded', 'refunded'])].sort()

interface Payment {
  kind: Kind
  id: string
  state: string
  amount: string
  createdAt: string
  updatedAt: string
  facts: [string, string][]
  /** what else its ledger entries are recorded under (a test payment's refund) */
  alsoReasons?: string[]
}

function fromDrain(row: DrainRow): Payment {
  const facts: [string, string][] = [
    ['Customer', row.customer_id],
    ['Liquidation address', row.liquidation_address_id],
    ['Deposit transaction', row.deposit_tx_hash],
  ]
  if (row.developer_fee !== null) facts.push(['Developer fee', money(BigInt(row.developer_fee), row.currency)])
  if (row.destination_tx_hash !== null) facts.push(['Payout transaction', row.destination_tx_hash])
  if (row.return_reason !== null) facts.push(['Return reason', row.return_reason])
  return { kind: 'drain', id: row.id, state: row.state, amount: money(BigInt(row.amount), row.currency), createdAt: row.created_at, updatedAt: row.updated_at, facts }
}

function fromTransfer(transfer: Transfer, kind: Kind): Payment {
  const facts: [string, string][] = [
    ['Type', transfer.type],
    ['Developer fee', `${transfer.developer_fee} ${transfer.currency.toUpperCase()}`],
  ]
  if (transfer.destination_tx_hash !== undefined) facts.push(['Destination transaction', transfer.destination_tx_hash])
  if (transfer.return_reason !== undefined) facts.push(['Return reason', transfer.return_reason])
  // Read as money() writes amounts: no zeros past the cent.
  const amount = transfer.amount === null ? 'any amount' : `${transfer.amount.replace(/(\.\d\d\d*?)0+$/, '$1')} ${transfer.currency.toUpperCase()}`
  return { kind, id: transfer.id, state: transfer.state, amount, createdAt: transfer.created_at, updatedAt: transfer.updated_at, facts }
}

function fromTestPayment(row: TestPaymentRow): Payment {
  const facts: [string, string][] = [['Description', row.description]]
  if (row.customer_id !== null) facts.push(['Customer', row.customer_id])
  if (row.refund_id !== null) facts.push(['Refund', `${row.refund_id} at ${row.refunded_at ?? ''}`])
  const payment: Payment = { kind: 'test-payment', id: row.id, state: row.refund_id === null ? 'succeeded' : 'refunded', amount: money(BigInt(row.amount), row.currency.toLowerCase()), createdAt: row.created_at, updatedAt: row.updated_at, facts }
  if (row.refund_id !== null) payment.alsoReasons = [row.refund_id]
  return payment
}

const DATE = /^\d{4}-\d{2}-\d{2}$/
function dayOf(name: string, text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined
  if (!DATE.test(text) || Number.isNaN(Date.parse(`${text}T00:00:00Z`))) throw new PageRefusal(400, `${name} must be a date (YYYY-MM-DD): ${text}`)
  return text
}

interface Filter {
  kind: Kind | undefined
  state: string | undefined
  from: string | undefined
  to: string | undefined
}

function filterOf(request: FastifyRequest): Filter {
  const query = (request.query ?? {}) as Record<string, unknown>
  const text = (name: string) => (typeof query[name] === 'string' && query[name] !== '' ? query[name] : undefined)
  const kind = text('kind')
  const state = text('state')
  if (kind !== undefined && !isKind(kind)) throw new PageRefusal(400, `kind must be one of ${Object.keys(KINDS).join(', ')}`)
  if (state !== undefined && !STATES.includes(state)) throw new PageRefusal(400, `state must be one of ${STATES.join(', ')}`)
  const from = dayOf('from', text('from'))
  const to = dayOf('to', text('to'))
  if (from !== undefined && to !== undefined && from > to) throw new PageRefusal(400, 'from must not be after to')
  return { kind, state, from, to }
}

const wants = (filter: Filter, ...kinds: Kind[]) => filter.kind === undefined || kinds.includes(filter.kind)

async function paymentsOf(context: PageContext, filter: Filter): Promise<Payment[]> {
  const { app, environment, session } = context
  const recent: Recent = {
    state: filter.state,
    createdFrom: filter.from,
    // `to` is the last day shown: before the next day's start.
    createdBefore: filter.to === undefined ? undefined : new Date(Date.parse(`${filter.to}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10),
    take: LIST_SIZE,
  }
  const [drains, transfers, intents, tests] = await Promise.all([
    wants(filter, 'drain') ? recentDrains(app.db, environment, session.appId, recent) : [],
    wants(filter, 'transfer') ? recentTransfers(app.db, environment, session.appId, 'transfer', recent) : [],
    wants(filter, 'payment-intent', 'checkout') ? recentTransfers(app.db, environment, session.appId, 'payment_intent', recent) : [],
    // Test payments are sandbox money only.
    wants(filter, 'test-payment') && environment === 'sandbox' ? recentTestPayments(app.db, session.appId, recent) : [],
  ])
  const checkout = new Set((await checkoutPaymentsAmong(app.db, session.appId, intents.map((intent) => intent.id))).map((row) => row.transfer_id))
  const intentPayments = intents
    .map((intent) => fromTransfer(intent, checkout.has(intent.id) ? 'checkout' : 'payment-intent'))
    .filter((payment) => filter.kind === undefined || payment.kind === filter.kind)
  return [...drains.map(fromDrain), ...transfers.map((transfer) => fromTransfer(transfer, 'transfer')), ...intentPayments, ...tests.map(fromTestPayment)]
    .sort((a, b) => (a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : b.createdAt.localeCompare(a.createdAt)))
    .slice(0, LIST_SIZE)
}

/** A state's colour: done, gone wrong, or on its way (an invoice's and a link's statuses too). */
const GOOD = new Set(['payment_processed', 'succeeded', 'refunded', 'paid', 'active'])
const BAD = new Set(['error', 'undeliverable', 'returned', 'refund_failed', 'canceled', 'pastdue', 'expired'])
export function stateBadge(state: string): Html {
  const tone = GOOD.has(state) ? ' good' : BAD.has(state) ? ' bad' : ' wait'
  return html`<span class="badge${tone}">${state.replaceAll('_', ' ')}</span>`
}

function options(values: readonly (readonly [string, string])[], chosen: string | undefined, all: string): Html[] {
  return [html`<option value="">${all}</option>`, ...values.map(([value, label]) => html`<option value="${value}"${value === chosen ? html` selected` : ''}>${label}</option>`)]
}

export async function paymentsPage(context: PageContext, request: FastifyRequest): Promise<Answer> {
  const filter = filterOf(request)
  const payments = await paymentsOf(context, filter)
  const base = `/console/${context.environment}/payments`
  const form = html`<form class="filters" method="get" action="${base}" aria-label="Filter payments">
<div><label for="kind">Kind</label><select id="kind" name="kind">${options(Object.entries(KINDS), filter.kind, 'Every kind')}</select></div>
<div><label for="state">State</label><select id="state" name="state">${options(STATES.map((state) => [state, state.replaceAll('_', ' ')] as const), filter.state, 'Every state')}</select></div>
<div><label for="from">Created from</label><input id="from" name="from" type="date" value="${filter.from ?? ''}"></div>
<div><label for="to">Created to</label><input id="to" name="to" type="date" value="${filter.to ?? ''}"></div>
<div><button type="submit" class="primary">Filter</button> <a href="${base}">Clear</a></div>
</form>`
  const table =
    payments.length === 0
      ? html`<div class="table-scroll"><p class="empty">No payment matches in this environment.</p></div>`
      : scrollingTable('Payments', html`<table><caption>The newest ${LIST_SIZE} at most, newest first</caption>
<thead><tr><th scope="col">Payment</th><th scope="col">Kind</th><th scope="col">State</th><th scope="col" class="number">Amount</th><th scope="col">Created</th></tr></thead>
<tbody>${payments.map(
          (payment) =>
            html`<tr><th scope="row"><a href="${base}/${pathKind(payment.kind)}/${payment.id}"><code>${payment.id}</code></a></th><td>${KINDS[payment.kind]}</td><td>${stateBadge(payment.state)}</td><td class="number">${payment.amount}</td><td>${payment.createdAt.slice(0, 16).replace('T', ' ')}</td></tr>`,
        )}</tbody></table>`)
  return { status: 200, body: consolePage('Payments', await context.frame('/payments', '/payments'), html`${form}${table}`) }
}

async function findPayment(context: PageContext, kind: string, id: string): Promise<Payment | undefined> {
  const { app, environment, session } = context
  if (kind === 'drain') {
    const row = await findDrain(app.db, environment, session.appId, id)
    return row === undefined ? undefined : fromDrain(row)
  }
  if (kind === 'transfer' || kind === 'payment-intent') {
    const transfer = await findTransfer(app.db, environment, session.appId, kind === 'transfer' ? 'transfer' : 'payment_intent', id)
    if (transfer === undefined) return undefined
    const checkout = kind === 'payment-intent' && (await checkoutPaymentsAmong(app.db, session.appId, [transfer.id])).length > 0
    return fromTransfer(transfer, kind === 'transfer' ? 'transfer' : checkout ? 'checkout' : 'payment-intent')
  }
  if (kind === 'test-payment' && environment === 'sandbox') {
    const row = await findTestPayment(app.db, session.appId, id)
    return row === undefined ? undefined : fromTestPayment(row)
  }
  return undefined
}

/** Debits and credits per currency: a balanced entry's are equal. */
function isBalanced(entry: EntryWithPostings): boolean {
  const net = new Map<string, bigint>()
  for (const posting of entry.postings) net.set(posting.currency, (net.get(posting.currency) ?? 0n) + (posting.direction === 'credit' ? posting.amount : -posting.amount))
  return [...net.values()].every((sum) => sum === 0n)
}

function entryTable(entry: EntryWithPostings): Html {
  return scrollingTable(`Ledger entry ${entry.id}`, html`<table><caption>Entry <code>${entry.id}</code> · ${entry.status} · ${entry.createdAt.slice(0, 19).replace('T', ' ')} · ${isBalanced(entry) ? html`<span class="badge good">balanced</span>` : html`<span class="badge bad">not balanced</span>`}</caption>
<thead><tr><th scope="col">Account</th><th scope="col" class="number">Debit</th><th scope="col" class="number">Credit</th></tr></thead>
<tbody>${entry.postings.map(
    (posting) =>
      html`<tr><th scope="row">${posting.kind.replaceAll('_', ' ')} · ${posting.currency.toUpperCase()} · ${posting.reference}</th><td class="number">${posting.direction === 'debit' ? money(posting.amount, posting.currency) : ''}</td><td class="number">${posting.direction === 'credit' ? money(posting.amount, posting.currency) : ''}</td></tr>`,
  )}</tbody></table>`)
}

export async function paymentPage(context: PageContext, request: FastifyRequest): Promise<Answer> {
  const { kind, id } = request.params as { kind: string; id: string }
  const payment = await findPayment(context, kind, id)
  if (payment === undefined) throw new PageRefusal(404, `No payment ${id} of this application in ${context.environment}.`)
  const { app, environment, session } = context
  const [events, ...entryLists] = await Promise.all([eventsAbout(app.db, session.appId, environment, payment.id), ...[payment.id, ...(payment.alsoReasons ?? [])].map((reason) => entriesFor(app.db, environment, session.appId, reason))])
  const entries = entryLists.flat().sort((a, b) => a.createdAt.localeCompare(b.createdAt))
  const facts: [string, string][] = [
    ['Kind', KINDS[payment.kind]],
    ['Amount', payment.amount],
    ['Created', payment.createdAt],
    ['Updated', payment.updatedAt],
    ...payment.facts,
  ]
  const base = `/console/${environment}`
  const main = html`<p><a href="${base}/payments">All payments</a></p>
<div class="panel"><p>${stateBadge(payment.state)} <code>${payment.id}</code></p><dl class="facts">${facts.map(([name, value]) => html`<dt>${name}</dt><dd>${value}</dd>`)}</dl></div>
<h2>Timeline</h2>
<div class="panel">${
    events.length === 0
      ? html`<p class="empty">No event names this payment.</p>`
      : html`<ol class="timeline">${events.map((event) => {
          const type = (JSON.parse(event.payload) as { type?: string }).type ?? ''
          return html`<li><strong>${type}</strong> <span class="muted">${event.created_at.slice(0, 19).replace('T', ' ')}</span> · <a href="${base}/events/${event.id}">event</a></li>`
        })}</ol>`
  }</div>
<h2>Ledger entries</h2>
${entries.length === 0 ? html`<div class="panel"><p class="empty">No ledger entry yet.</p></div>` : entries.map(entryTable)}`
  return { status: 200, body: consolePage(`${KINDS[payment.kind]} ${payment.id}`, await context.frame('/payments', '/payments'), main) }
}

export const paymentsRoutes: readonly ConsoleRoute[] = [
  { method: 'GET', path: '/payments', handle: paymentsPage },
  { method: 'GET', path: '/payments/:kind/:id', handle: paymentPage },
]
