import { recentInvoices } from '../invoices/public.js'
import { recentPaymentLinks } from '../payment-links/public.js'
import { consolePage, html, scrollingTable } from './html.js'
import type { Answer, ConsoleRoute, PageContext } from './page-context.js'
import { stateBadge } from './payments.js'

/**
 * Invoices and payment links (docs/console.md#invoices-and-payment-links): the environment's
 * newest, each with a link to its hosted page (a draft invoice has none yet).
 */

const LIST_SIZE = 50

export async function invoicesPage(context: PageContext): Promise<Answer> {
  const invoices = await recentInvoices(context.app.db, context.session.appId, context.environment, LIST_SIZE, context.publicUrl())
  const main =
    invoices.length === 0
      ? html`<div class="table-scroll"><p class="empty">No invoice in this environment yet.</p></div>`
      : scrollingTable('Invoices', html`<table><caption>The newest ${LIST_SIZE} at most, newest first</caption>
<thead><tr><th scope="col">Billed to</th><th scope="col">Status</th><th scope="col" class="number">Total</th><th scope="col" class="number">Due</th><th scope="col">Due date</th><th scope="col">Hosted page</th></tr></thead>
<tbody>${invoices.map(
          (invoice) =>
            html`<tr><th scope="row">${invoice.name}<br><span class="muted">${invoice.email}</span><br><code>${invoice.id}</code></th><td>${stateBadge(invoice.status.toLowerCase())}</td><td class="number">${invoice.total} ${invoice.currency.toUpperCase()}</td><td class="number">${invoice.amount_due} ${invoice.currency.toUpperCase()}</td><td>${invoice.due_date.slice(0, 10)}</td><td>${invoice.hosted_invoice_url === null ? html`<span class="muted">none (draft)</span>` : html`<a href="${invoice.hosted_invoice_url}">Open<span class="muted"> the page of invoice ${invoice.id.slice(0, 8)}</span></a>`}</td></tr>`,
        )}</tbody></table>`)
  return { status: 200, body: consolePage('Invoices', await context.frame('/invoices', '/invoices'), main) }
}

export async function paymentLinksPage(context: PageContext): Promise<Answer> {
  const links = await recentPaymentLinks(context.app.db, context.session.appId, context.environment, LIST_SIZE, context.publicUrl())
  const main =
    links.length === 0
      ? html`<div class="table-scroll"><p class="empty">No payment link in this environment yet.</p></div>`
      : scrollingTable('Payment links', html`<table><caption>The newest ${LIST_SIZE} at most, newest first</caption>
<thead><tr><th scope="col">Link</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col" class="number">Amount</th><th scope="col" class="number">Payments</th><th scope="col">Hosted page</th></tr></thead>
<tbody>${links.map(
          (link) =>
            html`<tr><th scope="row">${link.title}<br><code>${link.id}</code></th><td>${link.linkType.toLowerCase()}</td><td>${stateBadge(link.status)}</td><td class="number">${link.amount === null ? 'payer chooses' : `${link.amount} ${link.currency.toUpperCase()}`}</td><td class="number">${link.payments_count}${link.maxPayments === null ? '' : ` of ${link.maxPayments}`}</td><td><a href="${link.checkout_url}">${link.url}</a></td></tr>`,
        )}</tbody></table>`)
  return { status: 200, body: consolePage('Payment links', await context.frame('/payment-links', '/payment-links'), main) }
}

export const invoicesRoutes: readonly ConsoleRoute[] = [
  { method: 'GET', path: '/invoices', handle: invoicesPage },
  { method: 'GET', path: '/payment-links', handle: paymentLinksPage },
]
