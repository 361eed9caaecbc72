import type { FastifyRequest } from 'fastify'
import { attemptsPerDayOf, deliveryLogOf, type LoggedDelivery, ownedWebhook, replayFailedSince, resendDelivery, sendTestEvent, type WebhookRow, webhooksOf } from '../webhooks/public.js'
import { barChart } from './charts.js'
import { consolePage, csrfField, html, type Html, timeOf } from './html.js'
import { type Answer, type ConsoleRoute, type Form, type PageContext, PageRefusal } from './page-context.js'

/**
 * The webhooks pages (docs/console.md#webhooks): the application's webhooks, and one webhook's
 * delivery log, success rate and an admin's actions (resend, test event, replay what failed
 * since a time). Every effect goes through the webhooks module's owner tools, as the API's do.
 */

const CHART_DAYS = 14
const DAY_MS = 86_400_000
const LOG_SIZE = 50
const EXCERPT = 300
const SUCCEEDED_COLOR = '#1a7f37'
const FAILED_COLOR = '#cf222e'

function paramOf(request: FastifyRequest, name: string): string {
  const value = (request.params as Record<string, string | undefined>)[name]
  return value ?? ''
}

function statusBadge(status: string): Html {
  const tone = status === 'succeeded' ? 'good' : status === 'failed' ? 'bad' : status === 'pending' ? 'wait' : ''
  return html`<span class="badge ${tone}">${status}</span>`
}

function rate(succeeded: number, total: number): string {
  return total === 0 ? '—' : `${((succeeded * 100) / total).toFixed(1)}%`
}

async function listPage(context: PageContext): Promise<Answer> {
  const webhooks = await webhooksOf(context.app.db, context.session.appId)
  const base = `/console/${context.environment}/webhooks`
  const rows = webhooks.map((webhook) => {
    const attempts = webhook.successful_deliveries + webhook.failed_deliveries
    return html`<tr><th scope="row"><a href="${base}/${webhook.id}">${webhook.name}</a></th><td><code>${webhook.url}</code></td><td>${statusBadge(webhook.is_active === 1 ? 'active' : 'inactive')}</td>
<td class="number">${webhook.total_events}</td><td class="number">${rate(webhook.successful_deliveries, attempts)}</td><td>${timeOf(webhook.last_delivery)}</td></tr>`
  })
  const main =
    webhooks.length === 0
      ? html`<div class="panel"><p>No webhooks yet: an application adds one with POST /api/v0/webhooks.</p></div>`
      : html`<div class="table-scroll"><table><caption>Webhooks of this application (both environments send to them)</caption>
<thead><tr><th scope="col">Name</th><th scope="col">URL</th><th scope="col">State</th><th scope="col" class="number">Events</th><th scope="col" class="number">Attempts succeeded</th><th scope="col">Last delivery</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
  return { status: 200, body: consolePage('Webhooks', await context.frame('/webhooks', '/webhooks'), main) }
}

async function successChart(context: PageContext, webhook: WebhookRow, now: number): Promise<Html> {
  const labels = Array.from({ length: CHART_DAYS }, (_, index) => new Date(now - (CHART_DAYS - 1 - index) * DAY_MS).toISOString().slice(0, 10))
  const days = await attemptsPerDayOf(context.app.db, context.session.appId, webhook.id, labels[0] ?? '', context.environment)
  const figures = labels.map((label) => days.get(label) ?? { succeeded: 0, failed: 0 })
  const succeeded = figures.reduce((total, day) => total + day.succeeded, 0)
  const total = figures.reduce((total, day) => total + day.succeeded + day.failed, 0)
  if (total === 0) return html`<p class="empty">No attempts in the last ${CHART_DAYS} days.</p>`
  const title = `Delivery attempts per day, ${labels[0] ?? ''} to ${labels[labels.length - 1] ?? ''}: ${rate(succeeded, total)} succeeded`
  const chart = barChart(title, labels, [
    { name: 'Succeeded', color: SUCCEEDED_COLOR, values: figures.map((day) => BigInt(day.succeeded)) },
    { name: 'Failed', color: FAILED_COLOR, values: figures.map((day) => BigInt(day.failed)) },
  ])
  const rows = labels.flatMap((label, index) => {
    const day = figures[index]
    return day === undefined || day.succeeded + day.failed === 0 ? [] : [html`<tr><th scope="row">${label}</th><td class="number">${day.succeeded}</td><td class="number">${day.failed}</td><td class="number">${rate(day.succeeded, day.succeeded + day.failed)}</td></tr>`]
  })
  return html`<p><strong>${rate(succeeded, total)}</strong> of ${total} attempts succeeded in the last ${CHART_DAYS} days.</p>${chart}
<details><summary>The figures</summary><div class="table-scroll"><table><caption>Attempts per day</caption><thead><tr><th scope="col">Day</th><th scope="col" class="number">Succeeded</th><th scope="col" class="number">Failed</th><th scope="col" class="number">Rate</th></tr></thead><tbody>${rows}</tbody></table></div></details>`
}

function attemptsOf(delivery: LoggedDelivery): Html {
  if (delivery.attempt_log.length === 0) return html`<p class="muted">No attempt yet${delivery.next_attempt_at === null ? '' : `; the next is due at ${timeOf(delivery.next_attempt_at)}`}.</p>`
  return html`<ol class="timeline">${delivery.attempt_log.map((attempt) => {
    const body = attempt.response_body ?? attempt.error ?? ''
    return html`<li><strong>Attempt ${attempt.attempt}</strong> ${statusBadge(attempt.outcome)} at ${timeOf(attempt.started_at)}, ${attempt.duration_ms} ms, ${attempt.status_code === null ? 'no HTTP answer' : `HTTP ${attempt.status_code}`}
${body === '' ? '' : html`<pre>${body.length > EXCERPT ? `${body.slice(0, EXCERPT)}…` : body}</pre>`}</li>`
  })}</ol>`
}

function deliveryLog(context: PageContext, webhook: WebhookRow, deliveries: readonly LoggedDelivery[]): Html {
  if (deliveries.length === 0) return html`<p class="empty">No deliveries in this environment yet.</p>`
  const admin = context.session.role === 'admin'
  const base = `/console/${context.environment}/webhooks/${webhook.id}`
  return html`<div class="table-scroll"><table><caption>The last ${LOG_SIZE} deliveries, newest first</caption>
<thead><tr><th scope="col">Event</th><th scope="col">State</th><th scope="col" class="number">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th>${admin ? html`<th scope="col">Action</th>` : ''}</tr></thead>
<tbody>${deliveries.map((delivery) => {
    const last = delivery.attempt_log[delivery.attempt_log.length - 1]
    const ended = delivery.status !== 'pending'
    return html`<tr id="d-${delivery.id}"><td><code>${delivery.event_type}</code><br><span class="muted">${delivery.event_id}</span>
<details><summary>Attempts and answers</summary>${attemptsOf(delivery)}</details></td>
<td>${statusBadge(delivery.status)}</td><td class="number">${delivery.attempts}</td>
<td>${last === undefined ? '—' : last.status_code === null ? (last.error ?? last.outcome) : `HTTP ${last.status_code}`}</td><td>${timeOf(delivery.created_at)}</td>
${admin ? html`<td>${ended && webhook.is_active === 1 ? html`<form class="inline" method="post" action="${base}/deliveries/${delivery.id}/resend">${csrfField(context.session.csrfToken)}<button type="submit">Resend</button></form>` : html`<span class="muted">—</span>`}</td>` : ''}</tr>`
  })}</tbody></table></div>`
}

function actions(context: PageContext, webhook: WebhookRow, now: number): Html {
  if (context.session.role !== 'admin') return html`<p class="muted">Resending, test events and replays need an admin’s console link.</p>`
  if (webhook.is_active === 0) return html`<p class="muted">This webhook is inactive: nothing can be sent to it until it is activated (PATCH /api/v0/webhooks/{id}).</p>`
  const base = `/console/${context.environment}/webhooks/${webhook.id}`
  const dayAgo = new Date(now - DAY_MS).toISOString().slice(0, 16)
  return html`<div class="actions">
<form method="post" action="${base}/test">${csrfField(context.session.csrfToken)}<button type="submit" class="primary">Send a test event</button></form>
<form method="post" action="${base}/replay" class="filters">${csrfField(context.session.csrfToken)}<div><label for="since">Replay every failed delivery since (UTC)</label><input id="since" name="since" type="datetime-local" value="${dayAgo}" required></div><button type="submit">Replay failed</button></form>
</div>`
}

async function webhookPage(context: PageContext, webhookId: string, notice?: Html): Promise<Answer> {
  const webhook = await ownedWebhook(context.app.db, context.session.appId, webhookId)
  const now = Date.now()
  const deliveries = await deliveryLogOf(context.app.db, context.session.appId, webhook.id, { take: LOG_SIZE, environment: context.environment })
  const path = `/webhooks/${webhook.id}`
  const main = html`${notice === undefined ? '' : html`<div class="notice" role="status">${notice}</div>`}
<p><a href="/console/${context.environment}/webhooks">All webhooks</a></p>
<div class="panel"><dl class="facts"><dt>URL</dt><dd><code>${webhook.url}</code></dd><dt>State</dt><dd>${statusBadge(webhook.is_active === 1 ? 'active' : 'inactive')}</dd>
<dt>Events</dt><dd>${webhook.event_types === null ? 'every type' : (JSON.parse(webhook.event_types) as string[]).join(', ')}</dd><dt>Id</dt><dd><code>${webhook.id}</code></dd></dl>
${actions(context, webhook, now)}</div>
<h2>Success rate</h2>
<div class="panel">${await successChart(context, webhook, now)}</div>
<h2>Delivery log</h2>
<p class="muted">This environment’s events and the application’s own (a customer, a webhook, a test event), which belong to both.</p>
${deliveryLog(context, webhook, deliveries)}`
  return { status: 200, body: consolePage(webhook.name, await context.frame('/webhooks', path), main) }
}

/** `since` from the replay form: a UTC time (the form's datetime-local, or ISO 8601), not in the future. */
function sinceOf(form: Form): string {
  const text = (form.since ?? '').trim()
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z?$/.test(text) ? Date.parse(text.endsWith('Z') ? text : `${text}Z`) : Number.NaN
  if (Number.isNaN(ms)) throw new PageRefusal(400, `"Since" must be a date and time, e.g. 2026-11-28T09:00 (got ${text === '' ? 'nothing' : text}); nothing was replayed.`)
  if (ms > Date.now()) throw new PageRefusal(400, '"Since" is in the future: nothing failed after it yet; nothing was replayed.')
  return new Date(ms).toISOString()
}

/**
 * The notice an action's redirect asks for (?done=…): the action has been done, so a reload of
 * the page it lands on repeats nothing. Only its known shapes are shown.
 */
function noticeOf(request: FastifyRequest): Html | undefined {
  const query = request.query as Record<string, string | undefined>
  const id = /^[0-9a-f-]{36}$/.test(query.delivery ?? '') ? (query.delivery ?? '') : undefined
  if (query.done === 'test' && id !== undefined) return html`<p>A <code>webhook.test</code> event is on its way (delivery <code>${id}</code>): reload to see its attempt.</p>`
  if (query.done === 'resend' && id !== undefined) return html`<p>Delivery <code>${id}</code> is being attempted once more: reload to see the answer.</p>`
  const count = /^\d{1,6}$/.test(query.count ?? '') ? Number(query.count) : undefined
  const since = /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(query.since ?? '') ? (query.since ?? '') : undefined
  if (query.done === 'replay' && count !== undefined && since !== undefined) {
    return html`<p>${count === 0 ? 'No delivery had failed' : `${count} failed ${count === 1 ? 'delivery is' : 'deliveries are'} being attempted once more`} since ${timeOf(since)}.</p>`
  }
  return undefined
}

function done(context: PageContext, webhookId: string, query: Record<string, string>): Answer {
  return { status: 303, body: '', redirectTo: `/console/${context.environment}/webhooks/${webhookId.toLowerCase()}?${new URLSearchParams(query).toString()}` }
}

export const webhooksRoutes: readonly ConsoleRoute[] = [
  { method: 'GET', path: '/webhooks', handle: listPage },
  { method: 'GET', path: '/webhooks/:webhookId', handle: (context, request) => webhookPage(context, paramOf(request, 'webhookId'), noticeOf(request)) },
  {
    method: 'POST',
    path: '/webhooks/:webhookId/test',
    admin: true,
    handle: async (context, request) => {
      const webhookId = paramOf(request, 'webhookId')
      const deliveryId = await sendTestEvent(context.app.transact, context.session.appId, webhookId)
      return done(context, webhookId, { done: 'test', delivery: deliveryId })
    },
  },
  {
    method: 'POST',
    path: '/webhooks/:webhookId/deliveries/:deliveryId/resend',
    admin: true,
    handle: async (context, request) => {
      const webhookId = paramOf(request, 'webhookId')
      const deliveryId = paramOf(request, 'deliveryId')
      await resendDelivery(context.app.transact, context.session.appId, webhookId, deliveryId)
      return done(context, webhookId, { done: 'resend', delivery: deliveryId.toLowerCase() })
    },
  },
  {
    method: 'POST',
    path: '/webhooks/:webhookId/replay',
    admin: true,
    handle: async (context, request, form) => {
      const webhookId = paramOf(request, 'webhookId')
      const since = sinceOf(form)
      const count = await replayFailedSince(context.app.transact, context.session.appId, webhookId, since, context.environment)
      return done(context, webhookId, { done: 'replay', count: String(count), since })
    },
  },
]
