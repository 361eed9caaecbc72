import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { Db } from '../../db/database.js'
import { nowIso } from '../../db/time.js'
import { DomainError } from '../../errors.js'
import { ApiError } from '../../http/api-error.js'
import { domainErrorStatus } from '../../http/error-handler.js'
import { AmountError, type Currency, formatAmount, parseAmount } from '../../ledger/amount.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { ensureWallets } from '../wallets/public.js'
import type { Transaction } from '../../events/transact.js'
import { findInvoice, findPayableInvoice, formatCents, type InvoiceRow, lockInvoice, UNITS_PER_CENT } from '../invoices/public.js'
import { findPaymentLink, findPaymentLinkBySlug, type PaymentLinkRow } from '../payment-links/public.js'
import type { ExchangeRates } from '../../ledger/rates.js'
import type { DrainTimings } from '../drains/public.js'
import { createTransfer, depositAddress, findTransfer, receiveFunds, type Transfer, type TransferContext } from '../transfers/public.js'
import { type Charge, invoiceCharge, linkCharge, MAX_PAYER_AMOUNT } from './charges.js'
import { type Brand, findBrand } from '../branding/public.js'
import { Html, html, layout, PAGE_HEADERS, PAGE_SCRIPT, PAGE_SCRIPT_PATH } from './html.js'
import { markdown } from './markdown.js'
import { qrSvg } from './qr.js'
import type { Receiving } from '../../chains/receiving.js'
import type { ChainConfig, ChainToken } from '../../chains/config.js'
import { latestDepositTo } from '../../chains/deposits.js'
import type { ChainDepositRow } from '../../chains/repository.js'
import { type BoughtItem, type CheckoutPaymentRow, CheckoutRepository, itemsOf } from './repository.js'
import { invoiceClosedMessage, limitReached } from './settlement.js'

/**
 * The hosted checkout (docs/checkout.md): pages a payer opens in a browser, without credentials.
 *
 *   GET/POST /invoices/{id}/pay          an invoice: what is due, the payer's email (and amount when partial payments are allowed)
 *   GET/POST /pay/{appId}/{slug}         a payment link: its products, tax and total, the fields it asks for
 *   GET      /checkout/{intentId}        the payment intent "Pay" made: where to send how much, and its state
 *   GET      /checkout/{intentId}/status the page's state as JSON, which the page's script polls to reload when it changes
 *   POST     /checkout/{intentId}/complete  sandbox only: the funds arrive (receiveFunds), which pays the invoice or link
 *
 * "Pay" makes a stablecoin payment intent (usdc or eurc on Base, settling into the application's
 * Base wallet) in the money of the invoice or link (its `environment`: the creating key's), and a
 * checkout_payments row naming what it pays. No configuration chooses the money.
 */

const NETWORK = 'base'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const SLUG = /^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$/
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const MAX_EMAIL = 254
const MAX_ADDRESS = 1000
const FORM_LIMIT = 64 * 1024

const NOT_FOUND = 'This payment page does not exist'

type Form = Record<string, string>

/** A refusal shown on the page it came from, with the form as the payer filled it. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Whether a POST comes from another site's page: the sandbox button is on this server's own page,
 * so only a same-origin POST (Sec-Fetch-Site, or Origin where a browser sends no Sec-Fetch-Site)
 * is taken. A request with neither is not a browser's cross-site form: taken.
 */
function crossSite(request: FastifyRequest, publicUrl: string): boolean {
  const site = request.headers['sec-fetch-site']
  if (site !== undefined) return site !== 'same-origin' && site !== 'none'
  const origin = request.headers.origin
  return origin !== undefined && origin !== publicUrl
}

const CROSS_SITE = "This payment's page completes it only from the page itself: a request from another site was refused. Open the page and press its button."
const NETWORK_NAME = 'Base'
/** Why a live payment in `currency` cannot be taken: the chain, or its token, is off (CHAINS_FILE). */
function liveOffMessage(currency: string): string {
  return `Live payments of ${upper(currency)} on ${NETWORK_NAME} are not enabled on this platform, so this cannot be paid here now. Do not send funds: ask the seller for another way to pay.`
}
const LIVE_NO_SANDBOX = "This is a payment in real money: only the payer's funds arriving on the chain complete it, never a button. Nothing was paid."

function upper(currency: string): string {
  return currency.toUpperCase()
}

/** A price in cents from its text (`12.50`), as a bought item records it. */
function cents(text: string): bigint {
  const [whole = '0', fraction = ''] = text.split('.')
  return BigInt(whole) * 100n + BigInt((fraction + '00').slice(0, 2))
}

/** An amount in ledger units as a payer reads it: two decimals unless it has more. */
function shown(units: bigint, currency: Currency): string {
  const text = formatAmount(units, currency)
  return text.replace(/(\.\d\d\d*?)0+$/, '$1')
}

function alertOf(message: string | undefined): Html {
  return message === undefined ? html`` : html`<div class="alert" role="alert"><p>${message}</p></div>`
}

/**
 * The charge's lines, tax and total. An adjustable table carries each line's unit price and the
 * tax's percentage, so the pages' script counts the total as quantities change, as the server does.
 */
function chargeTable(charge: Charge, caption: string, extraRows: Html = html``): Html {
  const cur = upper(charge.currency)
  const rows = charge.lines.map((line) => {
    const quantity = charge.adjustable
      ? html`<label for="qty-${line.productId}" class="visually-hidden">Quantity of ${line.name}</label><input class="quantity" id="qty-${line.productId}" name="qty_${line.productId}" type="number" inputmode="numeric" min="0" max="10000" step="1" value="${line.quantity}">`
      : html`${line.quantity}`
    return html`<tr${charge.adjustable ? html` data-unit-price="${formatCents(line.unitPrice)}"` : ''}><th scope="row">${line.name}</th><td class="number">${quantity}</td><td class="number">${formatCents(line.unitPrice)}</td><td class="number" data-line-amount>${formatCents(line.amount)}</td></tr>`
  })
  const total = charge.total === null ? null : charge.total / UNITS_PER_CENT
  const live = charge.adjustable ? html` data-live-total${charge.tax === null ? '' : html` data-tax-percent="${charge.tax.percentage}"`}` : ''
  return html`<table${live}>
<caption>${caption}</caption>
<thead><tr><th scope="col">Item</th><th scope="col" class="number">Qty</th><th scope="col" class="number">Price</th><th scope="col" class="number">Amount</th></tr></thead>
<tbody>${rows}</tbody>
<tfoot>
${charge.subtotal === null ? '' : html`<tr><th scope="row" colspan="3">Subtotal</th><td class="number" data-subtotal>${formatCents(charge.subtotal)}</td></tr>`}
${charge.tax === null ? '' : html`<tr><th scope="row" colspan="3">${charge.tax.name} (${charge.tax.percentage} %)</th><td class="number" data-tax-amount>${formatCents(charge.tax.amount)}</td></tr>`}
${total === null ? '' : html`<tr class="total"><th scope="row" colspan="3">Total (${cur})</th><td class="number" data-total>${formatCents(total)}</td></tr>`}
${extraRows}
</tfoot>
</table>`
}

function emailField(value: string): Html {
  return html`<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="${MAX_EMAIL}" value="${value}" aria-describedby="email-help">
<p id="email-help">Where the receipt goes.</p>`
}

function addressField(value: string): Html {
  return html`<label for="address">Billing address</label>
<textarea id="address" name="address" autocomplete="street-address" required maxlength="${MAX_ADDRESS}" rows="3">${value}</textarea>`
}

function checkedEmail(form: Form): string {
  const email = (form.email ?? '').trim()
  if (email === '' || email.length > MAX_EMAIL || !EMAIL.test(email)) throw new Refusal(400, 'Enter an email address, like name@example.com')
  return email
}

function checkedAddress(form: Form): string {
  const address = (form.address ?? '').trim()
  if (address === '') throw new Refusal(400, 'Enter your billing address')
  if (address.length > MAX_ADDRESS) throw new Refusal(400, `The address must be at most ${MAX_ADDRESS} characters`)
  return address
}

/** A decimal the payer typed, in `decimals`' smallest unit; a Refusal naming the field otherwise. */
function typedAmount(text: string | undefined, currency: Currency, what: string): bigint {
  try {
    return parseAmount((text ?? '').trim(), currency)
  } catch (error) {
    if (error instanceof AmountError) throw new Refusal(400, `Enter ${what} as a number, like 25.00`)
    throw error
  }
}

function quantitiesOf(form: Form): Map<string, number> {
  const quantities = new Map<string, number>()
  for (const [name, value] of Object.entries(form)) {
    if (!name.startsWith('qty_')) continue
    const quantity = /^\d{1,6}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN
    if (Number.isNaN(quantity)) throw new Refusal(400, 'Each quantity must be a whole number')
    quantities.set(name.slice(4).toLowerCase(), quantity)
  }
  return quantities
}

/** Why a link cannot be paid now (expired, or all its payments made), or undefined. */
function linkClosed(link: PaymentLinkRow, now: Date): Refusal | undefined {
  if (link.expires_at !== null && link.expires_at <= now.toISOString()) return new Refusal(410, `This payment link expired on ${link.expires_at.slice(0, 10)}: it can no longer be paid`)
  if (link.limit_payments === 1 && link.max_payments !== null && link.payments_count >= link.max_payments) return new Refusal(409, limitReached(link.max_payments))
  return undefined
}

function invoiceClosed(invoice: InvoiceRow): Refusal | undefined {
  const message = invoiceClosedMessage(invoice.status)
  return message === undefined ? undefined : new Refusal(409, message)
}

/** A page as it is answered: its status, title, main content, and the money it is about (undefined on a page about none: not found, an error). */
interface Page {
  status: number
  title: string
  main: Html
  environment: LedgerEnvironment | undefined
  /** the merchant the page is of; undefined: the platform's plain page */
  brand?: Brand | undefined
}

function sendPage(reply: FastifyReply, page: Page): FastifyReply {
  return reply.code(page.status).headers(PAGE_HEADERS).send(layout(page.title, page.main, page.environment, page.brand))
}

function notFoundPage(): Page {
  return { status: 404, title: 'Not found', main: html`<h1>Not found</h1>${alertOf(NOT_FOUND)}`, environment: undefined }
}

/** Live money is only taken on a chain that is on (CHAINS_FILE): elsewhere nothing would see it arrive. */
function refuseLiveOff(checkout: Checkout, environment: string, currency: string): void {
  if (environment === 'live' && checkout.receiving.offReason(NETWORK, currency) !== undefined) throw new Refusal(409, liveOffMessage(currency))
}

/** Where a Pay button leads: the payment intent's page. */
function toPayment(reply: FastifyReply, intentId: string): FastifyReply {
  return reply.code(303).header('location', `/checkout/${intentId}`).send()
}

/** What the pages' handlers work with: the app (its database and transactions) and the money's settings. */
interface Checkout {
  app: FastifyInstance
  context: TransferContext
  publicUrl: () => string
  receiving: Receiving
}

export interface CheckoutPagesOptions {
  /** the exchange rates every conversion uses (EXCHANGE_RATE_MAX_AGE_SECONDS) */
  exchangeRates: ExchangeRates
  /** how long each step waits, by rail (DRAIN_DELAY_*_MS) */
  drainTimings: DrainTimings
  /**
   * The origin every URL put into an answer, an event or a page starts with (PUBLIC_URL, or this
   * machine on the port it listens on), never the request's Host: a caller can't choose it.
   */
  publicUrl: () => string
  /** the chains live money is received on (CHAINS_FILE): a live payment's page shows where to send it only on a chain that is on */
  receiving: Receiving
}

export const checkoutPages: FastifyPluginAsync<CheckoutPagesOptions> = async (app, options) => {
  const checkout: Checkout = { app, context: { rates: options.exchangeRates, timings: options.drainTimings, now: Date.now, receiving: options.receiving }, publicUrl: options.publicUrl, receiving: options.receiving }
  const hidden = { schema: { hide: true } }
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) => done(null, formFields(body)))
  app.setErrorHandler(answerError)
  app.get<{ Params: { id: string } }>('/invoices/:id/pay', hidden, (request, reply) => showInvoice(checkout, request.params.id, reply))
  app.post<{ Params: { id: string }; Body: unknown }>('/invoices/:id/pay', hidden, (request, reply) => payInvoice(checkout, request.params.id, formOf(request.body), reply))
  app.get<{ Params: { appId: string; slug: string } }>('/pay/:appId/:slug', hidden, (request, reply) => showLink(checkout, request.params, reply))
  app.post<{ Params: { appId: string; slug: string }; Body: unknown }>('/pay/:appId/:slug', hidden, (request, reply) => payLink(checkout, request.params, formOf(request.body), reply))
  app.get(PAGE_SCRIPT_PATH, hidden, (_request, reply) => reply.headers({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' }).send(PAGE_SCRIPT))
  app.get<{ Params: { intentId: string } }>('/checkout/:intentId/status', hidden, (request, reply) => paymentStatusAnswer(checkout, request.params.intentId, reply))
  app.get<{ Params: { intentId: string } }>('/checkout/:intentId', hidden, (request, reply) => showPayment(checkout, request.params.intentId, reply))
  app.post<{ Params: { intentId: string } }>('/checkout/:intentId/complete', hidden, (request, reply) => completePayment(checkout, request, request.params.intentId, reply))
}

/** A form body's fields, the first of each name. */
function formFields(body: string | Buffer): Form {
  const form: Form = {}
  for (const [name, value] of new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))) form[name] ??= value
  return form
}

/** Any error a handler did not turn into its page's refusal: a page of its own, saying nothing of ours when it is our fault. */
function answerError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const status =
    error instanceof ApiError
      ? error.statusCode
      : error instanceof DomainError
        ? domainErrorStatus(error)
        : typeof (error as { statusCode?: unknown }).statusCode === 'number'
          ? (error as { statusCode: number }).statusCode
          : 500
  if (status >= 500) request.log.error({ err: error }, 'checkout page failed')
  const message = status >= 500 ? 'Something went wrong on our side. Nothing was charged; try again in a moment.' : error instanceof Error ? error.message : 'The request could not be understood'
  return sendPage(reply, { status, title: 'Checkout', main: html`<h1>Checkout</h1>${alertOf(message)}`, environment: undefined })
}

// ---- invoices

/** The invoice a page's address names, when it is a well-formed id of a payable one. */
async function pageInvoice(db: Db, id: string): Promise<InvoiceRow | undefined> {
  if (!UUID.test(id)) return undefined
  const invoice = await findPayableInvoice(db, id)
  // A draft is not sent yet: its page does not exist for anyone.
  return invoice?.status === 'DRAFT' ? undefined : invoice
}

async function showInvoice(checkout: Checkout, id: string, reply: FastifyReply): Promise<FastifyReply> {
  const invoice = await pageInvoice(checkout.app.db, id)
  if (invoice === undefined) return sendPage(reply, notFoundPage())
  return sendPage(reply, invoicePage(invoice, {}, await findBrand(checkout.app.db, invoice.app_id)))
}

async function payInvoice(checkout: Checkout, id: string, form: Form, reply: FastifyReply): Promise<FastifyReply> {
  const invoice = await pageInvoice(checkout.app.db, id)
  if (invoice === undefined) return sendPage(reply, notFoundPage())
  try {
    const { email, cents } = invoicePayment(invoice, form)
    refuseLiveOff(checkout, invoice.environment, invoice.currency)
    return toPayment(reply, await checkout.app.transact((tx) => startInvoicePayment(tx, checkout.context, invoice, email, cents)))
  } catch (error) {
    if (error instanceof Refusal) return sendPage(reply, invoicePage(invoice, form, await findBrand(checkout.app.db, invoice.app_id), error))
    throw error
  }
}

/** The payer's email and the cents they pay (the amount due, or the part they typed), or the Refusal the form gets. */
function invoicePayment(invoice: InvoiceRow, form: Form): { email: string; cents: bigint } {
  const closed = invoiceClosed(invoice)
  if (closed !== undefined) throw closed
  const email = checkedEmail(form)
  const { due } = invoiceCharge(invoice)
  if (invoice.partial_payment !== 1) return { email, cents: due }
  const cents = typedAmount(form.amount, 'usd', 'the amount')
  if (cents <= 0n || cents > due) throw new Refusal(400, `Enter an amount greater than 0.00 and at most ${formatCents(due)}`)
  return { email, cents }
}

/** The invoice's payment, judged again under the invoice's lock: a PUT or a payment may have changed it since it was read. */
async function startInvoicePayment(tx: Transaction, context: TransferContext, invoice: InvoiceRow, email: string, cents: bigint): Promise<string> {
  const current = await lockInvoice(tx.db, invoice.app_id, invoice.id)
  if (current === undefined) throw new Refusal(404, NOT_FOUND)
  const refusal = invoiceClosed(current)
  if (refusal !== undefined) throw refusal
  if (cents > invoiceCharge(current).due) throw new Refusal(409, 'The amount due has changed: reload the page')
  return startPayment(tx, context, { appId: invoice.app_id, environment: current.environment as LedgerEnvironment, currency: invoice.currency as Currency, amount: cents * UNITS_PER_CENT, email, address: null, invoiceId: invoice.id, linkId: null, items: null })
}

/** An invoice's number as its page shows it: its id's first eight hex digits, which are random. */
export function invoiceNumber(invoiceId: string): string {
  return `INV-${invoiceId.slice(0, 8).toUpperCase()}`
}

/** An invoice's status in the payer's words, and its badge's look. */
const INVOICE_STATUS_WORDS: Readonly<Record<string, { words: string; badge: string }>> = {
  OPEN: { words: 'Due', badge: 'badge' },
  PASTDUE: { words: 'Overdue', badge: 'badge badge-overdue' },
  PARTIALLYPAID: { words: 'Partly paid', badge: 'badge' },
  PAID: { words: 'Paid', badge: 'badge badge-paid' },
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']

/** A date as people write it (`1 December 2026`), from an ISO timestamp, in UTC. */
function longDate(iso: string): string {
  const [year, month, day] = iso.slice(0, 10).split('-').map(Number)
  return `${day ?? ''} ${MONTHS[(month ?? 1) - 1] ?? ''} ${year ?? ''}`
}

/** A moment as people read it: `1 December 2026, 14:05 UTC`. */
function longTime(iso: string): string {
  return `${longDate(iso)}, ${iso.slice(11, 16)} UTC`
}

function invoicePage(invoice: InvoiceRow, form: Form, brand: Brand, refusal?: Refusal): Page {
  const charge = invoiceCharge(invoice)
  const cur = upper(invoice.currency)
  const status = INVOICE_STATUS_WORDS[invoice.status] ?? { words: invoice.status.toLowerCase(), badge: 'badge' }
  const number = invoiceNumber(invoice.id)
  const paidInFull = invoice.status === 'PAID'
  const extra = html`${charge.paid > 0n ? html`<tr><th scope="row" colspan="3">Paid</th><td class="number">${formatCents(charge.paid)}</td></tr>` : ''}
<tr class="total"><th scope="row" colspan="3">Amount due (${cur})</th><td class="number">${formatCents(charge.due)}</td></tr>`
  const headline = paidInFull
    ? html`<p class="eyebrow">Amount paid</p><p class="headline">${formatCents(charge.paid)} <span class="currency">${cur}</span></p>`
    : html`<p class="eyebrow">Amount due</p><p class="headline">${formatCents(charge.due)} <span class="currency">${cur}</span></p>`
  const main = html`<p class="eyebrow">Invoice ${number} from ${brand.display_name}</p>
<h1>${invoice.name}</h1>
${alertOf(refusal?.message)}
${headline}
<p><span class="${status.badge}">${status.words}</span>${paidInFull ? '' : html` · due ${longDate(invoice.due_date)}`}</p>
<dl class="facts">
<dt>Invoice number</dt><dd>${number}</dd>
<dt>Billed to</dt><dd>${invoice.email}</dd>
<dt>Due date</dt><dd>${longDate(invoice.due_date)}</dd>
<dt>Status</dt><dd>${status.words}</dd>
</dl>
${chargeTable(charge, `What this invoice is for, in ${cur}`, extra)}
${invoicePayForm(invoice, charge.due, form)}`
  return { status: refusal?.status ?? 200, title: `Invoice ${number}: ${invoice.name}`, main, environment: invoice.environment as LedgerEnvironment, brand }
}

/** The form that pays the invoice, or, once it is paid, the thanks. */
function invoicePayForm(invoice: InvoiceRow, due: bigint, form: Form): Html {
  if (invoice.status === 'PAID') return html`<div class="notice" role="status"><h2>Paid in full</h2><p>Thank you: nothing more is due on this invoice. Print this page for your records.</p></div>`
  const closed = invoiceClosed(invoice)
  if (closed !== undefined) return html`<div class="alert" role="status"><p>${closed.message}</p></div>`
  const cur = upper(invoice.currency)
  const partial = invoice.partial_payment === 1
  return html`<form method="post" action="/invoices/${invoice.id}/pay" novalidate>
<h2>Pay this invoice</h2>
${emailField(form.email ?? invoice.email)}
${partial ? html`<label for="amount">Amount to pay (${cur})</label><input id="amount" name="amount" inputmode="decimal" required value="${form.amount ?? formatCents(due)}" aria-describedby="amount-help"><p id="amount-help">This invoice may be paid in parts: at most ${formatCents(due)} ${cur}.</p>` : ''}
<button type="submit" class="pay">${partial ? 'Pay' : `Pay ${formatCents(due)} ${cur}`}</button>
</form>`
}

// ---- payment links

/** The link a page's address names, when its application id and slug are well formed. */
async function pageLink(db: Db, appId: string, slug: string): Promise<PaymentLinkRow | undefined> {
  return UUID.test(appId) && SLUG.test(slug) ? findPaymentLinkBySlug(db, appId.toLowerCase(), slug) : undefined
}

/** The invoice an INVOICE link is for, when it is one of the link's application: its page is where it is paid. */
async function invoiceOfLink(db: Db, link: PaymentLinkRow): Promise<InvoiceRow | undefined> {
  if (link.link_type !== 'INVOICE' || link.payment_for_id === null) return undefined
  const invoice = await pageInvoice(db, link.payment_for_id)
  return invoice?.app_id === link.app_id ? invoice : undefined
}

async function showLink(checkout: Checkout, params: { appId: string; slug: string }, reply: FastifyReply): Promise<FastifyReply> {
  const link = await pageLink(checkout.app.db, params.appId, params.slug)
  if (link === undefined) return sendPage(reply, notFoundPage())
  const invoice = await invoiceOfLink(checkout.app.db, link)
  if (invoice !== undefined) return reply.redirect(`/invoices/${invoice.id}/pay`, 303)
  return sendPage(reply, linkPage(link, await linkState(checkout.app.db, link, {}), {}, await findBrand(checkout.app.db, link.app_id)))
}

async function payLink(checkout: Checkout, params: { appId: string; slug: string }, form: Form, reply: FastifyReply): Promise<FastifyReply> {
  const link = await pageLink(checkout.app.db, params.appId, params.slug)
  if (link === undefined) return sendPage(reply, notFoundPage())
  const invoice = await invoiceOfLink(checkout.app.db, link)
  if (invoice !== undefined) return reply.redirect(`/invoices/${invoice.id}/pay`, 303)
  const brand = await findBrand(checkout.app.db, link.app_id)
  // "Update total" (the page without its script): the same page, counted with the quantities typed.
  if (form.action === UPDATE_TOTAL) {
    const typed = safeQuantities(form)
    if (typed === undefined) return sendPage(reply, linkPage(link, await linkState(checkout.app.db, link, form, new Refusal(400, 'Each quantity must be a whole number')), form, brand, new Refusal(400, 'Each quantity must be a whole number')))
    return sendPage(reply, linkPage(link, await linkState(checkout.app.db, link, form, undefined, typed), form, brand))
  }
  try {
    const payment = await linkPayment(checkout.app.db, link, form)
    refuseLiveOff(checkout, payment.environment, payment.currency)
    return toPayment(reply, await checkout.app.transact((tx) => startPayment(tx, checkout.context, payment)))
  } catch (error) {
    if (error instanceof Refusal) return sendPage(reply, linkPage(link, await linkState(checkout.app.db, link, form, error), form, brand, error))
    throw error
  }
}

/** The payment the form asks for on the link, or the Refusal the form gets. */
async function linkPayment(db: Db, link: PaymentLinkRow, form: Form): Promise<NewPayment> {
  const closed = linkClosed(link, new Date())
  if (closed !== undefined) throw closed
  const charge = await asRefusal(linkCharge(db, link, quantitiesOf(form)))
  const currency = link.currency as Currency
  const amount = charge.total ?? payerAmount(form, currency)
  if (amount <= 0n) throw new Refusal(400, 'Choose at least one product')
  if (amount > MAX_PAYER_AMOUNT) throw new Refusal(400, `The total must be at most ${shown(MAX_PAYER_AMOUNT, currency)} ${upper(currency)}`)
  const email = checkedEmail(form)
  const address = link.collect_address === 1 ? checkedAddress(form) : null
  const items: BoughtItem[] = charge.lines.filter((line) => line.quantity > 0).map((line) => ({ product_id: line.productId, name: line.name, quantity: line.quantity, unit_price: formatCents(line.unitPrice) }))
  return { appId: link.app_id, environment: link.environment as LedgerEnvironment, currency, amount, email, address, invoiceId: null, linkId: link.id, items: link.link_type === 'PRODUCT' ? items : null }
}

/** The amount the payer typed on a link that leaves it to them. */
function payerAmount(form: Form, currency: Currency): bigint {
  const amount = typedAmount(form.amount, currency, 'the amount')
  if (amount <= 0n || amount > MAX_PAYER_AMOUNT) throw new Refusal(400, `Enter an amount greater than 0 and at most ${shown(MAX_PAYER_AMOUNT, currency)}`)
  return amount
}

/** What a link's page shows of it now: why it is closed, its charge, or why the charge cannot be made (a product gone, say). */
interface LinkState {
  closed: Refusal | undefined
  charge: Charge | undefined
  unavailable: string | undefined
}

/** After a refusal, the charge has the quantities the payer typed (when they are whole numbers). */
async function linkState(db: Db, link: PaymentLinkRow, form: Form, refusal?: Refusal, typed?: Map<string, number>): Promise<LinkState> {
  const closed = linkClosed(link, new Date())
  try {
    return { closed, charge: await linkCharge(db, link, typed ?? (refusal === undefined ? undefined : safeQuantities(form))), unavailable: undefined }
  } catch (error) {
    if (!(error instanceof DomainError)) throw error
    return { closed, charge: undefined, unavailable: error.message }
  }
}

/** The value of the no-script "Update total" button: the form comes back counted, nothing is paid. */
const UPDATE_TOTAL = 'update-total'

function linkPage(link: PaymentLinkRow, state: LinkState, form: Form, brand: Brand, refusal?: Refusal): Page {
  const { closed, charge, unavailable } = state
  const canPay = closed === undefined && unavailable === undefined && charge !== undefined
  const table = charge === undefined ? html`` : linkTable(link, charge)
  // The quantity inputs sit in the table: it goes inside the form when the payer may change them.
  const adjustable = charge !== undefined && canPay && charge.adjustable
  const payForm = !canPay ? html`<div class="alert" role="status"><p>${closed?.message ?? unavailable}</p></div>` : linkPayForm(link, charge, adjustable ? table : undefined, form)
  const main = html`<p class="eyebrow">${brand.display_name}</p>
<h1>${link.title}</h1>
${alertOf(refusal?.message)}
${link.cover_image === null ? '' : html`<img class="cover" src="${link.cover_image}" alt="" width="640">`}
${link.description === null ? '' : html`<div class="description">${markdown(link.description)}</div>`}
${adjustable ? '' : table}
${payForm}`
  return { status: refusal?.status ?? closed?.status ?? 200, title: link.title, main, environment: link.environment as LedgerEnvironment, brand }
}

/** What the link charges: its products, or its fixed amount (nothing when the payer chooses it). */
function linkTable(link: PaymentLinkRow, charge: Charge): Html {
  const cur = upper(link.currency)
  if (charge.lines.length > 0) return chargeTable(charge, `What you are buying, in ${cur}`)
  if (charge.total !== null) return html`<p>Amount: <strong>${shown(charge.total, link.currency as Currency)} ${cur}</strong></p>`
  return html``
}

/** The form that pays the link; `adjustableTable` is the charge's table when the payer may change its quantities. */
function linkPayForm(link: PaymentLinkRow, charge: Charge, adjustableTable: Html | undefined, form: Form): Html {
  const cur = upper(link.currency)
  const payTotal = charge.total === null ? '' : html` <span data-total>${shown(charge.total, link.currency as Currency)}</span> ${cur}`
  // Enter in a field submits the form by its first button: with "Update total" in the form, a
  // hidden Pay button comes first so Enter still pays.
  return html`<form method="post" action="/pay/${link.app_id}/${link.slug}" novalidate>
${adjustableTable === undefined ? '' : html`<button type="submit" class="visually-hidden" tabindex="-1" aria-hidden="true">Pay</button>${adjustableTable}<p id="quantities-help">Change the quantities if you like; 0 leaves a product out.</p>
<button type="submit" name="action" value="${UPDATE_TOTAL}" id="update-total" class="secondary" aria-describedby="quantities-help">Update total</button>`}
<h2>Pay</h2>
${charge.total === null ? html`<label for="amount">Amount (${cur})</label><input id="amount" name="amount" inputmode="decimal" required value="${form.amount ?? ''}" aria-describedby="amount-help"><p id="amount-help">The amount you choose to pay, like 25.00.</p>` : ''}
${emailField(form.email ?? '')}
${link.collect_address === 1 ? addressField(form.address ?? '') : ''}
<button type="submit" class="pay">Pay${payTotal}</button>
</form>`
}

// ---- the payment

interface NewPayment {
  appId: string
  /** the money of the invoice or link it pays */
  environment: LedgerEnvironment
  currency: Currency
  amount: bigint
  email: string
  address: string | null
  invoiceId: string | null
  linkId: string | null
  items: BoughtItem[] | null
}

/** A stablecoin payment intent for `amount` on Base into the application's Base wallet, and the row naming what it pays. */
async function startPayment(tx: Transaction, context: TransferContext, payment: NewPayment): Promise<string> {
  const environment = payment.environment
  const wallet = (await ensureWallets(tx.db, environment, payment.appId)).find((row) => row.chain === NETWORK)
  if (wallet === undefined) throw new Error('the application has no Base wallet')
  const intent = await createTransfer(tx, context, {
    environment,
    appId: payment.appId,
    kind: 'payment_intent_stablecoin',
    wallet,
    currency: payment.currency,
    amount: payment.amount,
    developerFee: 0n,
    destinationCurrency: payment.currency,
    source: { payment_rail: NETWORK, currency: payment.currency },
    destination: { payment_rail: NETWORK, currency: payment.currency, bridge_wallet_id: wallet.id, to_address: wallet.address ?? undefined },
    instructions: { to_address: depositAddress(NETWORK) },
    customer: payment.address === null ? { email: payment.email } : { email: payment.email, address: payment.address },
  })
  await new CheckoutRepository(tx.db).insert({
    transfer_id: intent.id,
    app_id: payment.appId,
    environment,
    invoice_id: payment.invoiceId,
    payment_link_id: payment.linkId,
    currency: payment.currency,
    amount: payment.amount.toString(),
    email: payment.email,
    address: payment.address,
    items: payment.items === null ? null : JSON.stringify(payment.items),
    state: 'awaiting_funds',
    paid_at: null,
    created_at: nowIso(),
  })
  return intent.id
}

/** The payment a page's address names, unless its application is deleted: then, like its invoices' pages, it does not exist. */
async function findPayment(db: Db, id: string): Promise<CheckoutPaymentRow | undefined> {
  if (!UUID.test(id)) return undefined
  return new CheckoutRepository(db).findPayable(id)
}

async function showPayment(checkout: Checkout, intentId: string, reply: FastifyReply): Promise<FastifyReply> {
  const payment = await findPayment(checkout.app.db, intentId)
  if (payment === undefined) return sendPage(reply, notFoundPage())
  return sendPage(reply, await paymentPageOf(checkout, payment))
}

/** Sandbox only, from the payment's own page: the funds arrive (receiveFunds), which pays the invoice or link. */
async function completePayment(checkout: Checkout, request: FastifyRequest, intentId: string, reply: FastifyReply): Promise<FastifyReply> {
  const db = checkout.app.db
  const payment = await findPayment(db, intentId)
  if (payment === undefined) return sendPage(reply, notFoundPage())
  if (crossSite(request, checkout.publicUrl())) return sendPage(reply, await paymentPageOf(checkout, payment, new Refusal(403, CROSS_SITE)))
  if ((await paidObjectOf(db, payment)).environment === 'live') return sendPage(reply, await paymentPageOf(checkout, payment, new Refusal(403, LIVE_NO_SANDBOX)))
  try {
    await checkout.app.transact((tx) => receiveFunds(tx, checkout.context, 'payment_intent', 'sandbox', payment.app_id, payment.transfer_id, undefined))
  } catch (error) {
    if (!(error instanceof DomainError)) throw error
    return sendPage(reply, await paymentPageOf(checkout, payment, new Refusal(domainErrorStatus(error), error.message)))
  }
  return toPayment(reply, payment.transfer_id)
}

/** What a payment pays, as its page names it, and the money it is. */
interface PaidObject {
  what: Html
  environment: LedgerEnvironment
  /** the lines a receipt lists: the invoice's, or the products a link's payer bought */
  lines: { name: string; quantity: number; amount: string }[]
}

/**
 * Live when the intent or what it pays is live (an intent is made in its invoice's or link's
 * money; the two differ only for an intent made before invoices and links recorded theirs, and
 * then it takes no sandbox payment).
 */
async function paidObjectOf(db: Db, payment: CheckoutPaymentRow): Promise<PaidObject> {
  let what: Html
  let owed: string | undefined
  let lines: PaidObject['lines'] = itemsOf(payment).map((item) => ({ name: item.name, quantity: item.quantity, amount: formatCents(cents(item.unit_price) * BigInt(item.quantity)) }))
  if (payment.invoice_id !== null) {
    const invoice = await findInvoice(db, payment.app_id, payment.invoice_id)
    what = invoice === undefined ? html`an invoice` : html`<a href="/invoices/${invoice.id}/pay">Invoice ${invoiceNumber(invoice.id)}: ${invoice.name}</a>`
    owed = invoice?.environment
    if (invoice !== undefined) lines = invoiceCharge(invoice).lines.map((line) => ({ name: line.name, quantity: line.quantity, amount: formatCents(line.amount) }))
  } else {
    const link = payment.payment_link_id === null ? undefined : await findPaymentLink(db, payment.app_id, payment.payment_link_id)
    what = link === undefined ? html`a payment link` : html`<a href="/pay/${link.app_id}/${link.slug}">${link.title}</a>`
    owed = link?.environment
  }
  return { what, environment: payment.environment === 'live' || owed === 'live' ? 'live' : 'sandbox', lines }
}

/** Where live money is sent and what the chain has seen of it; undefined for sandbox money. */
interface LiveChain {
  /** the chain's configuration and the token's contract, or undefined when live receiving on it is off */
  on: { config: ChainConfig; contract: string } | undefined
  /** the latest deposit to the payment's address still on the chain */
  deposit: ChainDepositRow | undefined
}

/** Everything a payment's page and its status show, read now. */
interface PaymentView {
  payment: CheckoutPaymentRow
  intent: Transfer
  paidObject: PaidObject
  live: LiveChain | undefined
  brand: Brand
}

/** The payment's view, read now: undefined when its payment intent is gone. */
async function paymentViewOf(checkout: Checkout, payment: CheckoutPaymentRow): Promise<PaymentView | undefined> {
  const db = checkout.app.db
  const intent = await findTransfer(db, payment.environment as LedgerEnvironment, payment.app_id, 'payment_intent', payment.transfer_id)
  if (intent === undefined) return undefined
  const paidObject = await paidObjectOf(db, payment)
  const brand = await findBrand(db, payment.app_id)
  if (paidObject.environment !== 'live') return { payment, intent, paidObject, live: undefined, brand }
  const config = checkout.receiving.chain(NETWORK)
  const contract = config?.tokens[payment.currency as ChainToken]
  const address = intent.source_deposit_instructions?.to_address
  const deposit = address === undefined ? undefined : await latestDepositTo(db, payment.app_id, NETWORK, address)
  return { payment, intent, paidObject, live: { on: config === undefined || contract === undefined ? undefined : { config, contract }, deposit }, brand }
}

/**
 * The page's state in one word, which its script compares with the status route's to reload:
 * paid, the intent's own state once it is not awaiting funds, a live deposit seen with its
 * confirmations, or awaiting.
 */
function stateOf(view: PaymentView): string {
  if (view.payment.state === 'paid') return 'paid'
  if (view.intent.state !== 'awaiting_funds') return view.intent.state
  const deposit = view.live?.deposit
  if (deposit !== undefined && deposit.status === 'pending') return `seen:${deposit.confirmations}`
  return 'awaiting'
}

/** The status route: the page's state as JSON, under the page's own rule (a payment of a deleted application does not exist). */
async function paymentStatusAnswer(checkout: Checkout, intentId: string, reply: FastifyReply): Promise<FastifyReply> {
  const payment = await findPayment(checkout.app.db, intentId)
  const view = payment === undefined ? undefined : await paymentViewOf(checkout, payment)
  const headers = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' }
  if (view === undefined) return reply.code(404).headers(headers).send({ message: NOT_FOUND })
  return reply.code(200).headers(headers).send({ state: stateOf(view) })
}

/** The payment's page, read now: not found when its payment intent is gone. */
async function paymentPageOf(checkout: Checkout, payment: CheckoutPaymentRow, refusal?: Refusal): Promise<Page> {
  const view = await paymentViewOf(checkout, payment)
  if (view === undefined) return notFoundPage()
  return paymentPage(view, refusal)
}

function paymentPage(view: PaymentView, refusal?: Refusal): Page {
  const { payment, intent, paidObject, live } = view
  const currency = payment.currency as Currency
  const amount = `${shown(BigInt(payment.amount), currency)} ${upper(currency)}`
  const instructions = intent.source_deposit_instructions
  const paid = payment.state === 'paid'
  const awaiting = intent.state === 'awaiting_funds'
  // A live payment is never offered the sandbox's button, whatever else is true.
  const sandbox = !paid && awaiting && live === undefined ? sandboxForm(payment, amount) : html``
  // Live funds are sent only where a chain that is on watches for them: elsewhere they would be lost.
  const howToPay = paid ? '' : live === undefined ? howToPayOf(payment, instructions, amount) : !awaiting || live.on === undefined ? '' : liveHowToPay(payment, instructions?.to_address ?? '', amount, live.on)
  const state = stateOf(view)
  const watch = paid || !awaiting || (live !== undefined && live.on === undefined) ? '' : html`<p data-status-url="/checkout/${payment.transfer_id}/status" data-state="${state}">This page updates by itself. <a href="/checkout/${payment.transfer_id}">Refresh</a></p>`
  if (paid) return { status: refusal?.status ?? 200, title: 'Receipt', main: html`${alertOf(refusal?.message)}${receipt(view, amount)}`, environment: paidObject.environment, brand: view.brand }
  const main = html`<p class="eyebrow">Pay ${view.brand.display_name}</p>
<h1>Pay ${amount}</h1>
${alertOf(refusal?.message)}
<p>For ${paidObject.what}.</p>
${paymentStatus(view, amount)}
${watch}
${howToPay}
${sandbox}`
  return { status: refusal?.status ?? 200, title: `Pay ${amount}`, main, environment: paidObject.environment, brand: view.brand }
}

/** A paid payment's page: the receipt a payer keeps (the print stylesheet drops the rest). */
function receipt(view: PaymentView, amount: string): Html {
  const { payment, paidObject, live, brand } = view
  const deposit = live?.deposit
  const cur = upper(payment.currency)
  const items = paidObject.lines.length === 0
    ? ''
    : html`<table>
<caption>What you paid for, in ${cur}</caption>
<thead><tr><th scope="col">Item</th><th scope="col" class="number">Qty</th><th scope="col" class="number">Amount</th></tr></thead>
<tbody>${paidObject.lines.map((line) => html`<tr><th scope="row">${line.name}</th><td class="number">${line.quantity}</td><td class="number">${line.amount}</td></tr>`)}</tbody>
</table>`
  return html`<div class="notice" role="status"><h1>Payment received</h1><p>Thank you: ${amount} reached ${brand.display_name}. Nothing more to do.</p></div>
<section class="receipt" aria-labelledby="receipt-heading">
<h2 id="receipt-heading">Receipt</h2>
<p class="headline">${amount.replace(/ [A-Z]+$/, '')} <span class="currency">${cur}</span></p>
<dl class="facts">
<dt>Paid to</dt><dd>${brand.display_name}</dd>
<dt>For</dt><dd>${paidObject.what}</dd>
<dt>Paid on</dt><dd>${longTime(payment.paid_at ?? payment.created_at)}</dd>
<dt>Paid by</dt><dd>${payment.email}</dd>
<dt>Network</dt><dd>${NETWORK_NAME}</dd>
<dt>Reference</dt><dd><code id="payment-reference">${payment.transfer_id}</code></dd>
${deposit === undefined ? '' : html`<dt>Transaction</dt><dd><code id="transaction-hash">${deposit.tx_hash}</code></dd>`}
</dl>
${items}
<p class="no-print">Print this page, or save it as a PDF, for your records.</p>
</section>`
}

/** Where an unpaid payment stands: awaiting (a live deposit seen, live receiving off), or its intent's state (a paid one's page is its receipt). */
function paymentStatus(view: PaymentView, amount: string): Html {
  const { payment, intent, live } = view
  if (intent.state !== 'awaiting_funds') return html`<div class="alert" role="status"><p>This payment is ${intent.state.replaceAll('_', ' ')}.</p></div>`
  if (live !== undefined && live.on === undefined) return html`<div class="alert" role="status"><h2>Live payments of ${upper(payment.currency)} on ${NETWORK_NAME} are not enabled</h2><p>${liveOffMessage(payment.currency)}</p></div>`
  const deposit = live?.deposit
  if (live?.on !== undefined && deposit !== undefined && deposit.status === 'pending') {
    return html`<div class="notice" role="status"><h2>Payment seen, ${Math.min(deposit.confirmations, live.on.config.confirmations)} of ${live.on.config.confirmations} confirmations</h2><p>Your transaction is on the chain; it counts once it has ${live.on.config.confirmations} confirmations. Nothing more to do.</p></div>`
  }
  return html`<div role="status"><p>Waiting for your payment.</p></div>`
}

/** The EIP-681 request a wallet opens: a `transfer` of the token's smallest units to the address, on the chain by its id. */
function paymentUri(contract: string, chainId: number, to: string, units: bigint): string {
  return `ethereum:${contract}@${chainId}/transfer?address=${to}&uint256=${units.toString()}`
}

/** How to pay live money: the address (with a copy button), the network and token with a warning, the EIP-681 link and its QR code. */
function liveHowToPay(payment: CheckoutPaymentRow, to: string, amount: string, on: { config: ChainConfig; contract: string }): Html {
  const token = upper(payment.currency)
  // Ledger units are the token's smallest units: the stablecoins received have 6 decimals, as the ledger does.
  const uri = paymentUri(on.contract, on.config.chainId, to, BigInt(payment.amount))
  return html`<h2>How to pay</h2>
<p>Send exactly <strong>${amount}</strong> on <strong>${NETWORK_NAME}</strong> to this address:</p>
<p><code id="deposit-address" class="address">${to}</code> <button type="button" class="secondary" data-copy="deposit-address" hidden>Copy address</button></p>
<p class="warning"><strong>Only ${token} on ${NETWORK_NAME}.</strong> Funds sent on another network, or another token, do not pay for this and may be lost.</p>
<p><a id="payment-uri" href="${uri}">Open in your wallet</a></p>
${qrSvg(uri, `QR code to pay ${amount} on ${NETWORK_NAME} from a wallet`)}
<dl>
<dt>Amount</dt><dd>${amount}</dd>
<dt>Token</dt><dd>${token} (contract <code>${on.contract}</code>)</dd>
<dt>Network</dt><dd>${NETWORK_NAME} (chain id ${on.config.chainId})</dd>
<dt>Payment reference</dt><dd><code>${payment.transfer_id}</code></dd>
</dl>`
}

function howToPayOf(payment: CheckoutPaymentRow, instructions: Transfer['source_deposit_instructions'], amount: string): Html {
  return html`<h2>How to pay</h2>
<p>Send exactly <strong>${amount}</strong> on <strong>${NETWORK_NAME}</strong> to this address:</p>
<p><code id="deposit-address" class="address">${instructions?.to_address ?? ''}</code> <button type="button" class="secondary" data-copy="deposit-address" hidden>Copy address</button></p>
<p class="warning"><strong>Only ${upper(payment.currency)} on ${NETWORK_NAME}.</strong> Funds sent on another network, or another token, do not pay for this and may be lost.</p>
<dl>
<dt>Amount</dt><dd>${amount}</dd>
<dt>Token</dt><dd>${upper(payment.currency)}</dd>
<dt>Network</dt><dd>Base</dd>
<dt>Payment reference</dt><dd><code>${payment.transfer_id}</code></dd>
</dl>`
}

function sandboxForm(payment: CheckoutPaymentRow, amount: string): Html {
  return html`<form method="post" action="/checkout/${payment.transfer_id}/complete" class="sandbox">
<h2>Sandbox</h2>
<p id="sandbox-help">No real money moves here. This button makes the ${amount} arrive as if you had sent it.</p>
<button type="submit" class="pay" aria-describedby="sandbox-help">Complete payment (sandbox)</button>
</form>`
}

/** The text fields of a posted body (a form's are all text; a body of another type keeps only its text values). */
function formOf(body: unknown): Form {
  const form: Form = {}
  if (typeof body !== 'object' || body === null) return form
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') form[name] = value
  return form
}

/** A link's quantities as the payer typed them, or none when they are not whole numbers (the page shows the link's own). */
function safeQuantities(form: Form): Map<string, number> | undefined {
  try {
    return quantitiesOf(form)
  } catch {
    return undefined
  }
}

/** A domain error of the link's charge (a product gone, a quantity out of range) shown on the page. */
async function asRefusal<T>(work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    if (error instanceof DomainError) throw new Refusal(domainErrorStatus(error), error.message)
    throw error
  }
}
