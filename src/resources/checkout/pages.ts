import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
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
import type { ResourceOptions } from '../resource.js'
import { createTransfer, depositAddress, findTransfer, receiveFunds, type TransferContext } from '../transfers/public.js'
import { type Charge, invoiceCharge, linkCharge, MAX_PAYER_AMOUNT } from './charges.js'
import { Html, html, layout, PAGE_HEADERS } from './html.js'
import { type BoughtItem, type CheckoutPaymentRow, CheckoutRepository } from './repository.js'
import { invoiceClosedMessage, limitReached } from './settlement.js'

/**
 * The hosted checkout (docs/checkout.md): pages a payer opens in a browser, without credentials.
 *
 *   GET/POST /invoices/{id}/pay          an invoice: what is due, the payer's email (and amount when partial payments are allowed)
 *   GET/POST /pay/{appId}/{slug}         a payment link: its products, tax and total, the fields it asks for
 *   GET      /checkout/{intentId}        the payment intent "Pay" made: where to send how much, and its state
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

/** `environment`: the money of what the page is about; undefined on a page about none (not found, an error). */
function sendPage(reply: FastifyReply, status: number, title: string, main: Html, environment: LedgerEnvironment | undefined): FastifyReply {
  return reply.code(status).headers(PAGE_HEADERS).send(layout(title, main, environment))
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
const LIVE_NOT_WATCHED =
  'This is a payment in real money. This platform does not watch for live deposits yet, so funds sent now would not be seen and would not pay for this. Do not send funds here: ask the seller for another way to pay.'
const LIVE_NO_SANDBOX = 'This is a payment in real money: only the payer\'s funds arriving complete it, never a button, and live deposits are not watched yet. Nothing was paid.'

function upper(currency: string): string {
  return currency.toUpperCase()
}

/** An amount in ledger units as a payer reads it: two decimals unless it has more. */
function shown(units: bigint, currency: Currency): string {
  const text = formatAmount(units, currency)
  return text.replace(/(\.\d\d\d*?)0+$/, '$1')
}

function alertOf(message: string | undefined): Html {
  return message === undefined ? html`` : html`<div class="alert" role="alert"><p>${message}</p></div>`
}

function chargeTable(charge: Charge, caption: string, extraRows: Html = html``): Html {
  const cur = upper(charge.currency)
  const rows = charge.lines.map((line) => {
    const quantity = charge.adjustable
      ? html`<label for="qty-${line.productId}" class="visually-hidden">Quantity of ${line.name}</label><input class="quantity" id="qty-${line.productId}" name="qty_${line.productId}" type="number" inputmode="numeric" min="0" max="10000" step="1" value="${line.quantity}">`
      : html`${line.quantity}`
    return html`<tr><th scope="row">${line.name}</th><td class="number">${quantity}</td><td class="number">${formatCents(line.unitPrice)}</td><td class="number">${formatCents(line.amount)}</td></tr>`
  })
  const total = charge.total === null ? null : charge.total / UNITS_PER_CENT
  return html`<table>
<caption>${caption}</caption>
<thead><tr><th scope="col">Item</th><th scope="col" class="number">Quantity</th><th scope="col" class="number">Unit price (${cur})</th><th scope="col" class="number">Amount (${cur})</th></tr></thead>
<tbody>${rows}</tbody>
<tfoot>
${charge.subtotal === null ? '' : html`<tr><th scope="row" colspan="3">Subtotal</th><td class="number">${formatCents(charge.subtotal)}</td></tr>`}
${charge.tax === null ? '' : html`<tr><th scope="row" colspan="3">${charge.tax.name} (${charge.tax.percentage} %)</th><td class="number">${formatCents(charge.tax.amount)}</td></tr>`}
${total === null ? '' : html`<tr class="total"><th scope="row" colspan="3">Total</th><td class="number">${formatCents(total)} ${cur}</td></tr>`}
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

export const checkoutPages: FastifyPluginAsync<ResourceOptions> = async (app, options) => {
  const context: TransferContext = { rates: options.exchangeRates, timings: options.drainTimings, now: Date.now }
  const hidden = { schema: { hide: true } }

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) => {
    const form: Form = {}
    for (const [name, value] of new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))) form[name] ??= value
    done(null, form)
  })

  app.setErrorHandler((error: unknown, request, reply) => {
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
    return sendPage(reply, status, 'Checkout', html`<h1>Checkout</h1>${alertOf(message)}`, undefined)
  })

  const notFound = (reply: FastifyReply) => sendPage(reply, 404, 'Not found', html`<h1>Not found</h1>${alertOf(NOT_FOUND)}`, undefined)

  /** The invoice a page's address names, when it is a well-formed id of a payable one. */
  async function pageInvoice(id: string): Promise<InvoiceRow | undefined> {
    return UUID.test(id) ? findPayableInvoice(app.db, id) : undefined
  }

  /** The link a page's address names, when its application id and slug are well formed. */
  async function pageLink(appId: string, slug: string): Promise<PaymentLinkRow | undefined> {
    return UUID.test(appId) && SLUG.test(slug) ? findPaymentLinkBySlug(app.db, appId.toLowerCase(), slug) : undefined
  }

  // ---- invoices

  function invoicePage(reply: FastifyReply, invoice: InvoiceRow, form: Form, refusal?: Refusal): FastifyReply {
    const charge = invoiceCharge(invoice)
    const cur = upper(invoice.currency)
    const closed = invoiceClosed(invoice)
    const partial = invoice.partial_payment === 1
    const extra = html`${charge.paid > 0n ? html`<tr><th scope="row" colspan="3">Paid</th><td class="number">${formatCents(charge.paid)}</td></tr>` : ''}
<tr class="total"><th scope="row" colspan="3">Amount due</th><td class="number">${formatCents(charge.due)} ${cur}</td></tr>`
    const payForm =
      closed !== undefined
        ? html`<div class="${invoice.status === 'PAID' ? 'notice' : 'alert'}" role="status"><p>${closed.message}</p></div>`
        : html`<form method="post" action="/invoices/${invoice.id}/pay" novalidate>
<h2>Pay this invoice</h2>
${emailField(form.email ?? invoice.email)}
${partial ? html`<label for="amount">Amount to pay (${cur})</label><input id="amount" name="amount" inputmode="decimal" required value="${form.amount ?? formatCents(charge.due)}" aria-describedby="amount-help"><p id="amount-help">This invoice may be paid in parts: at most ${formatCents(charge.due)} ${cur}.</p>` : ''}
<button type="submit">Pay ${partial ? '' : `${formatCents(charge.due)} ${cur}`}</button>
</form>`
    const main = html`<h1>Invoice: ${invoice.name}</h1>
${alertOf(refusal?.message)}
<p>Billed to ${invoice.email}. Due ${invoice.due_date.slice(0, 10)}. Status: <strong>${invoice.status}</strong>.</p>
${chargeTable(charge, `What this invoice is for, in ${cur}`, extra)}
${payForm}`
    return sendPage(reply, refusal?.status ?? 200, `Invoice: ${invoice.name}`, main, invoice.environment as LedgerEnvironment)
  }

  app.get<{ Params: { id: string } }>('/invoices/:id/pay', hidden, async (request, reply) => {
    const invoice = await pageInvoice(request.params.id)
    if (invoice === undefined) return notFound(reply)
    return invoicePage(reply, invoice, {})
  })

  app.post<{ Params: { id: string }; Body: unknown }>('/invoices/:id/pay', hidden, async (request, reply) => {
    const form = formOf(request.body)
    const invoice = await pageInvoice(request.params.id)
    if (invoice === undefined) return notFound(reply)
    try {
      const closed = invoiceClosed(invoice)
      if (closed !== undefined) throw closed
      const email = checkedEmail(form)
      const { due } = invoiceCharge(invoice)
      let cents = due
      if (invoice.partial_payment === 1) {
        cents = typedAmount(form.amount, 'usd', 'the amount')
        if (cents <= 0n || cents > due) throw new Refusal(400, `Enter an amount greater than 0.00 and at most ${formatCents(due)}`)
      }
      const intentId = await app.transact(async (tx) => {
        // Judged again under the invoice's lock: a PUT or a payment may have changed it since it was read.
        const current = await lockInvoice(tx.db, invoice.app_id, invoice.id)
        if (current === undefined) throw new Refusal(404, NOT_FOUND)
        const refusal = invoiceClosed(current)
        if (refusal !== undefined) throw refusal
        if (cents > invoiceCharge(current).due) throw new Refusal(409, 'The amount due has changed: reload the page')
        return startPayment(tx, { appId: invoice.app_id, environment: current.environment as LedgerEnvironment, currency: invoice.currency as Currency, amount: cents * UNITS_PER_CENT, email, address: null, invoiceId: invoice.id, linkId: null, items: null })
      })
      return reply.code(303).header('location', `/checkout/${intentId}`).send()
    } catch (error) {
      if (error instanceof Refusal) return invoicePage(reply, invoice, form, error)
      throw error
    }
  })

  // ---- payment links

  async function linkPage(reply: FastifyReply, link: PaymentLinkRow, form: Form, refusal?: Refusal): Promise<FastifyReply> {
    const closed = linkClosed(link, new Date())
    let charge: Charge | undefined
    let unavailable: string | undefined
    try {
      charge = await linkCharge(app.db, link, refusal === undefined ? undefined : safeQuantities(form))
    } catch (error) {
      if (!(error instanceof DomainError)) throw error
      unavailable = error.message
    }
    const cur = upper(link.currency)
    const payerAmount = charge !== undefined && charge.total === null
    const canPay = closed === undefined && unavailable === undefined && charge !== undefined
    const table =
      charge === undefined
        ? html``
        : charge.lines.length > 0
          ? chargeTable(charge, `What you are buying, in ${cur}`)
          : charge.total !== null
            ? html`<p>Amount: <strong>${shown(charge.total, link.currency as Currency)} ${cur}</strong></p>`
            : html``
    // The quantity inputs sit in the table: it goes inside the form when the payer may change them.
    const adjustable = charge !== undefined && canPay && charge.adjustable
    const fixedTotal = charge?.total !== null && charge?.total !== undefined && !adjustable ? ` ${shown(charge.total, link.currency as Currency)} ${cur}` : ''
    const payForm = !canPay
      ? html`<div class="alert" role="status"><p>${closed?.message ?? unavailable}</p></div>`
      : html`<form method="post" action="/pay/${link.app_id}/${link.slug}" novalidate>
${adjustable ? html`${table}<p>Change the quantities if you like; 0 leaves a product out.</p>` : ''}
<h2>Pay</h2>
${payerAmount ? html`<label for="amount">Amount (${cur})</label><input id="amount" name="amount" inputmode="decimal" required value="${form.amount ?? ''}" aria-describedby="amount-help"><p id="amount-help">The amount you choose to pay, like 25.00.</p>` : ''}
${emailField(form.email ?? '')}
${link.collect_address === 1 ? addressField(form.address ?? '') : ''}
<button type="submit">Pay${fixedTotal}</button>
</form>`
    const main = html`<h1>${link.title}</h1>
${alertOf(refusal?.message)}
${link.description === null ? '' : html`<p class="description">${link.description}</p>`}
${link.cover_image === null ? '' : html`<img src="${link.cover_image}" alt="" width="320">`}
${adjustable ? '' : table}
${payForm}`
    return sendPage(reply, refusal?.status ?? closed?.status ?? 200, link.title, main, link.environment as LedgerEnvironment)
  }

  /** The invoice an INVOICE link is for, when it is one of the link's application: its page is where it is paid. */
  async function invoiceOfLink(link: PaymentLinkRow): Promise<InvoiceRow | undefined> {
    if (link.link_type !== 'INVOICE' || link.payment_for_id === null) return undefined
    const invoice = await pageInvoice(link.payment_for_id)
    return invoice?.app_id === link.app_id ? invoice : undefined
  }

  app.get<{ Params: { appId: string; slug: string } }>('/pay/:appId/:slug', hidden, async (request, reply) => {
    const link = await pageLink(request.params.appId, request.params.slug)
    if (link === undefined) return notFound(reply)
    const invoice = await invoiceOfLink(link)
    if (invoice !== undefined) return reply.redirect(`/invoices/${invoice.id}/pay`, 303)
    return linkPage(reply, link, {})
  })

  app.post<{ Params: { appId: string; slug: string }; Body: unknown }>('/pay/:appId/:slug', hidden, async (request, reply) => {
    const form = formOf(request.body)
    const link = await pageLink(request.params.appId, request.params.slug)
    if (link === undefined) return notFound(reply)
    const invoice = await invoiceOfLink(link)
    if (invoice !== undefined) return reply.redirect(`/invoices/${invoice.id}/pay`, 303)
    try {
      const now = new Date()
      const closed = linkClosed(link, now)
      if (closed !== undefined) throw closed
      const charge = await asRefusal(linkCharge(app.db, link, quantitiesOf(form)))
      const currency = link.currency as Currency
      let amount = charge.total
      if (amount === null) {
        amount = typedAmount(form.amount, currency, 'the amount')
        if (amount <= 0n || amount > MAX_PAYER_AMOUNT) throw new Refusal(400, `Enter an amount greater than 0 and at most ${shown(MAX_PAYER_AMOUNT, currency)}`)
      }
      if (amount <= 0n) throw new Refusal(400, 'Choose at least one product')
      if (amount > MAX_PAYER_AMOUNT) throw new Refusal(400, `The total must be at most ${shown(MAX_PAYER_AMOUNT, currency)} ${upper(currency)}`)
      const email = checkedEmail(form)
      const address = link.collect_address === 1 ? checkedAddress(form) : null
      const items: BoughtItem[] = charge.lines.filter((line) => line.quantity > 0).map((line) => ({ product_id: line.productId, name: line.name, quantity: line.quantity, unit_price: formatCents(line.unitPrice) }))
      const total = amount
      const intentId = await app.transact(async (tx) =>
        startPayment(tx, { appId: link.app_id, environment: link.environment as LedgerEnvironment, currency, amount: total, email, address, invoiceId: null, linkId: link.id, items: link.link_type === 'PRODUCT' ? items : null }),
      )
      return reply.code(303).header('location', `/checkout/${intentId}`).send()
    } catch (error) {
      if (error instanceof Refusal) return linkPage(reply, link, form, error)
      throw error
    }
  })

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
  async function startPayment(tx: Transaction, payment: NewPayment): Promise<string> {
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
      destination: { payment_rail: NETWORK, currency: payment.currency, bridge_wallet_id: wallet.id, to_address: wallet.address },
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

  /**
   * What a payment pays, as its page names it, and the money it is: live when the intent or what
   * it pays is live (an intent is made in its invoice's or link's money; the two differ only for
   * an intent made before invoices and links recorded theirs, and then it takes no sandbox payment).
   */
  async function paidObjectOf(payment: CheckoutPaymentRow): Promise<{ what: Html; environment: LedgerEnvironment }> {
    let what: Html
    let owed: string | undefined
    if (payment.invoice_id !== null) {
      const invoice = await findInvoice(app.db, payment.app_id, payment.invoice_id)
      what = invoice === undefined ? html`an invoice` : html`<a href="/invoices/${invoice.id}/pay">Invoice: ${invoice.name}</a> (now <strong>${invoice.status}</strong>)`
      owed = invoice?.environment
    } else {
      const link = payment.payment_link_id === null ? undefined : await findPaymentLink(app.db, payment.app_id, payment.payment_link_id)
      what = link === undefined ? html`a payment link` : html`<a href="/pay/${link.app_id}/${link.slug}">${link.title}</a>`
      owed = link?.environment
    }
    return { what, environment: payment.environment === 'live' || owed === 'live' ? 'live' : 'sandbox' }
  }

  async function paymentPage(reply: FastifyReply, payment: CheckoutPaymentRow, refusal?: Refusal): Promise<FastifyReply> {
    const intent = await findTransfer(app.db, payment.environment as LedgerEnvironment, payment.app_id, 'payment_intent', payment.transfer_id)
    if (intent === undefined) return notFound(reply)
    const currency = payment.currency as Currency
    const cur = upper(currency)
    const amount = `${shown(BigInt(payment.amount), currency)} ${cur}`
    const instructions = intent.source_deposit_instructions
    const { what, environment } = await paidObjectOf(payment)
    const live = environment === 'live'
    const paid = payment.state === 'paid'
    const awaiting = intent.state === 'awaiting_funds'
    const status = paid
      ? html`<div class="notice" role="status"><h2>Payment received</h2><p>${amount} arrived on ${(payment.paid_at ?? '').slice(0, 19).replace('T', ' ')} UTC. Thank you.</p></div>`
      : awaiting && live
        ? html`<div class="alert" role="status"><h2>Live payments are not received yet</h2><p>${LIVE_NOT_WATCHED}</p></div>`
        : awaiting
          ? html`<div role="status"><p>Waiting for your payment. Reload this page once you have sent it.</p></div>`
          : html`<div class="alert" role="status"><p>This payment is ${intent.state.replaceAll('_', ' ')}.</p></div>`
    // A live payment is never offered the sandbox's button, whatever else is true.
    const sandbox =
      !paid && awaiting && !live
        ? html`<form method="post" action="/checkout/${payment.transfer_id}/complete" class="sandbox">
<h2>Sandbox</h2>
<p id="sandbox-help">No real money moves here. This button makes the ${amount} arrive as if you had sent it.</p>
<button type="submit" aria-describedby="sandbox-help">Complete payment (sandbox)</button>
</form>`
        : html``
    // Where to send live funds is not shown while no one watches for them: they would be lost.
    const howToPay =
      paid || live
        ? ''
        : html`<h2>How to pay</h2>
<p>Send exactly <strong>${amount}</strong> on <strong>Base</strong> to this address:</p>
<p><code id="deposit-address">${instructions?.to_address ?? ''}</code></p>
<dl>
<dt>Amount</dt><dd>${amount}</dd>
<dt>Token</dt><dd>${cur}</dd>
<dt>Network</dt><dd>Base</dd>
<dt>Payment reference</dt><dd><code>${payment.transfer_id}</code></dd>
</dl>`
    const main = html`<h1>Pay ${amount}</h1>
${alertOf(refusal?.message)}
<p>For ${what}.</p>
${status}
${howToPay}
${sandbox}`
    return sendPage(reply, refusal?.status ?? 200, `Pay ${amount}`, main, environment)
  }

  /** The payment a page's address names, unless its application is deleted: then, like its invoices' pages, it does not exist. */
  async function findPayment(id: string): Promise<CheckoutPaymentRow | undefined> {
    if (!UUID.test(id)) return undefined
    return new CheckoutRepository(app.db).findPayable(id)
  }

  app.get<{ Params: { intentId: string } }>('/checkout/:intentId', hidden, async (request, reply) => {
    const payment = await findPayment(request.params.intentId)
    if (payment === undefined) return notFound(reply)
    return paymentPage(reply, payment)
  })

  app.post<{ Params: { intentId: string } }>('/checkout/:intentId/complete', hidden, async (request, reply) => {
    const payment = await findPayment(request.params.intentId)
    if (payment === undefined) return notFound(reply)
    const publicUrl = options.publicUrl()
    if (crossSite(request, publicUrl)) return paymentPage(reply, payment, new Refusal(403, CROSS_SITE))
    if ((await paidObjectOf(payment)).environment === 'live') return paymentPage(reply, payment, new Refusal(403, LIVE_NO_SANDBOX))
    try {
      await app.transact((tx) => receiveFunds(tx, context, 'payment_intent', 'sandbox', payment.app_id, payment.transfer_id, undefined))
    } catch (error) {
      if (!(error instanceof DomainError)) throw error
      return paymentPage(reply, payment, new Refusal(domainErrorStatus(error), error.message))
    }
    return reply.code(303).header('location', `/checkout/${payment.transfer_id}`).send()
  })
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
