import { recentCustomers } from '../customers/public.js'
import { consolePage, html, scrollingTable } from './html.js'
import type { Answer, ConsoleRoute, PageContext } from './page-context.js'

/**
 * Customers (docs/console.md#customers): the application's newest. A customer belongs to the
 * application, not to an environment (its sandbox and live money name the same customer), so both
 * environments list the same ones.
 */

const LIST_SIZE = 50

export async function customersPage(context: PageContext): Promise<Answer> {
  const { rows, total } = await recentCustomers(context.app.db, context.session.appId, LIST_SIZE)
  const main = html`<p class="muted">A customer is the application’s, in both environments: this list is the same in sandbox and live.</p>
${
  rows.length === 0
    ? html`<div class="table-scroll"><p class="empty">No customer yet.</p></div>`
    : scrollingTable('Customers', html`<table><caption>${total} customer${total === 1 ? '' : 's'}, the newest ${Math.min(total, LIST_SIZE)} shown</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Phone</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
<tbody>${rows.map(
        (customer) =>
          html`<tr><th scope="row">${customer.first_name} ${customer.last_name}<br><code>${customer.id}</code></th><td>${customer.email ?? ''}</td><td>${customer.phone_number}</td><td>${customer.status.toLowerCase()}</td><td>${customer.created_at.slice(0, 10)}</td></tr>`,
      )}</tbody></table>`)
}`
  return { status: 200, body: consolePage('Customers', await context.frame('/customers', '/customers'), main) }
}

export const customersRoutes: readonly ConsoleRoute[] = [{ method: 'GET', path: '/customers', handle: customersPage }]
