import { randomUUID } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { actOnHeld, HELD_ACTIONS, HELD_KINDS, type HeldAction, type HeldActionName, type HeldItem, type HeldKind, listHeld, listHeldActions } from '../held/public.js'
import { listWallets, type WalletRow } from '../wallets/public.js'
import { consolePage, csrfField, html, type Html, scrollingTable, timeOf } from './html.js'
import { type Answer, type ConsoleRoute, type Form, type PageContext, PageRefusal } from './page-context.js'

/**
 * Held money (docs/console.md#held-money): what of the environment's money waits in clearing for a
 * person, and the audit of what was done with it. An admin retries, refunds or releases one with
 * the actions of src/resources/held/ (one ledger entry and one audit record each, docs/operations.md#held-money);
 * each form carries its own idempotency key, so a form sent twice acts once.
 */

const LABELS: Readonly<Record<HeldActionName, string>> = { retry: 'Retry', refund: 'Refund', release: 'Release to a wallet' }
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function amountOf(item: { amount: string; currency: string }): string {
  return `${item.amount} ${item.currency.toUpperCase()}`
}

function actionForm(context: PageContext, item: HeldItem, action: HeldActionName, wallets: readonly WalletRow[]): Html {
  const id = `${action}-${item.id}`
  const extra =
    action === 'refund'
      ? html`<div><label for="${id}-address">Return address <span class="muted">(when it has none)</span></label><input id="${id}-address" name="return_address" maxlength="128" autocomplete="off"></div>`
      : action === 'release'
        ? html`<div><label for="${id}-wallet">Wallet</label><select id="${id}-wallet" name="wallet_id" required>${wallets.map((wallet) => html`<option value="${wallet.id}">${wallet.chain} · ${wallet.id.slice(0, 8)}</option>`)}</select></div>`
        : ''
  return html`<form method="post" action="/console/${context.environment}/held/${item.type}/${item.id}/${action}" class="filters">${csrfField(context.session.csrfToken)}<input type="hidden" name="idempotency_key" value="${randomUUID()}">
<div><label for="${id}-by">Your name</label><input id="${id}-by" name="by" required maxlength="190" autocomplete="name"></div>
<div><label for="${id}-reason">Why</label><input id="${id}-reason" name="reason" required maxlength="1000"></div>${extra}
<button type="submit"${action === 'retry' ? html` class="primary"` : ''}>${LABELS[action]}</button></form>`
}

/** A drain's page; money in may be a transfer or a payment intent, which its held record does not say, so it is named, not linked. */
function paymentLink(context: PageContext, type: HeldKind, id: string, text: Html | string): Html {
  return type === 'drain' ? html`<a href="/console/${context.environment}/payments/drain/${id}">drain ${text}</a>` : html`money in ${text}`
}

function heldRow(context: PageContext, item: HeldItem, wallets: readonly WalletRow[]): Html {
  const admin = context.session.role === 'admin'
  const forms = admin ? html`<details><summary>Act on it</summary>${item.actions.map((action) => actionForm(context, item, action, wallets))}</details>` : ''
  return html`<tr id="h-${item.id}"><th scope="row">${paymentLink(context, item.type, item.id, html`<code>${item.id}</code>`)}${forms}</th>
<td><span class="badge bad">${item.state}</span></td><td>${item.reason ?? '—'}</td><td class="num">${amountOf(item)}</td><td>${timeOf(item.held_since)}</td></tr>`
}

function auditRow(context: PageContext, action: HeldAction): Html {
  const where = action.return_address !== undefined ? html`to <code>${action.return_address}</code>` : action.wallet_id !== undefined ? html`to wallet <code>${action.wallet_id}</code>` : ''
  return html`<tr><td>${timeOf(action.created_at)}</td><td>${action.by}</td><td>${action.action} ${where}</td>
<td>${paymentLink(context, action.target_type, action.target_id, html`<code>${action.target_id.slice(0, 8)}</code>`)}</td>
<td>${action.from_state} → ${action.to_state}</td><td class="num">${amountOf(action)}</td><td>${action.reason}</td></tr>`
}

async function heldPage(context: PageContext, notice: Html | undefined): Promise<Answer> {
  const { db } = context.app
  const [items, actions, wallets] = await Promise.all([
    listHeld(db, context.environment, context.session.appId),
    listHeldActions(db, context.environment, context.session.appId, 50),
    listWallets(db, context.environment, context.session.appId),
  ])
  const admin = context.session.role === 'admin'
  const main = html`${notice === undefined ? '' : html`<div class="notice" role="status">${notice}</div>`}
<p class="muted">Money that waits in clearing for a person: a drain or money in that ended in error or could not be delivered, or whose refund failed. Retry sends it again (only from error), refund sends it back to its return address, release puts it in one of the application's wallets; each writes one ledger entry and an audit record.${admin ? '' : ' Acting on it needs an admin’s console link.'}</p>
${
  items.length === 0
    ? html`<div class="panel"><p>Nothing is held in this environment.</p></div>`
    : scrollingTable(
        'Held now',
        html`<table><caption>Held now, longest held first</caption>
<thead><tr><th scope="col">Payment</th><th scope="col">State</th><th scope="col">Why</th><th scope="col" class="num">Amount</th><th scope="col">Held since</th></tr></thead>
<tbody>${items.map((item) => heldRow(context, item, wallets))}</tbody></table>`,
      )
}
<h2>What was done</h2>
${
  actions.length === 0
    ? html`<div class="panel"><p>No action on held money yet.</p></div>`
    : scrollingTable(
        'Actions on held money',
        html`<table><caption>Actions on held money, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Payment</th><th scope="col">State</th><th scope="col" class="num">Amount</th><th scope="col">Why</th></tr></thead>
<tbody>${actions.map((action) => auditRow(context, action))}</tbody></table>`,
      )
}`
  return { status: 200, body: consolePage('Held money', await context.frame('/held', '/held'), main) }
}

function noticeOf(request: FastifyRequest): Html | undefined {
  const query = request.query as Record<string, string | undefined>
  const action = HELD_ACTIONS.find((name) => name === query.done)
  const id = UUID.test(query.id ?? '') ? query.id : undefined
  if (action === undefined || id === undefined) return undefined
  return html`<p>${LABELS[action]}: done for <code>${id}</code>; its audit record is below.</p>`
}

function heldTarget(request: FastifyRequest): { kind: HeldKind; id: string; action: HeldActionName } {
  const params = request.params as Record<string, string | undefined>
  const kind = HELD_KINDS.find((name) => name === params.kind)
  const action = HELD_ACTIONS.find((name) => name === params.action)
  const id = params.id ?? ''
  if (kind === undefined || action === undefined || !UUID.test(id)) throw new PageRefusal(404, 'There is no such held payment or action.')
  return { kind, id, action }
}

function optional(form: Form, name: string): string | undefined {
  const value = form[name]?.trim()
  return value === undefined || value === '' ? undefined : value
}

async function act(context: PageContext, request: FastifyRequest, form: Form): Promise<Answer> {
  const { kind, id, action } = heldTarget(request)
  const key = optional(form, 'idempotency_key')
  if (key === undefined || !UUID.test(key)) throw new PageRefusal(400, 'This form had no idempotency key: reload the page and try again; nothing was done.')
  const by = (form.by ?? '').trim()
  await context.app.transact((tx) =>
    actOnHeld(tx, context.money, {
      environment: context.environment,
      appId: context.session.appId,
      kind,
      id,
      action,
      by: by === '' ? '' : `${by} (console)`,
      reason: form.reason ?? '',
      idempotencyKey: `console:${key}`,
      returnAddress: optional(form, 'return_address'),
      walletId: optional(form, 'wallet_id'),
    }),
  )
  return { status: 303, body: '', redirectTo: `/console/${context.environment}/held?${new URLSearchParams({ done: action, id }).toString()}` }
}

export const heldRoutes: readonly ConsoleRoute[] = [
  { method: 'GET', path: '/held', handle: (context, request) => heldPage(context, noticeOf(request)) },
  { method: 'POST', path: '/held/:kind/:id/:action', admin: true, handle: act },
]
