import type { FastifyRequest } from 'fastify'
import { type EventPlace, findEvent, pageOfEvents } from '../events/public.js'
import { consolePage, type Html, html, scrollingTable } from './html.js'
import { type Answer, type ConsoleRoute, type PageContext, PageRefusal } from './page-context.js'

/**
 * Events (docs/console.md#events): the objects GET /api/v0/events answers, of this environment and
 * of the application's own objects, newest first, paged by the same cursor (starting_after,
 * ending_before), optionally of one type; each with a page showing its JSON envelope as its
 * webhooks received it.
 */

const PAGE_SIZE = 25
const TYPE = /^[a-z_]+(\.[a-z_]+)+$/

interface Envelope {
  id: string
  type: string
  created_at: string
  data: unknown
}

function text(request: FastifyRequest, name: string): string | undefined {
  const value = ((request.query ?? {}) as Record<string, unknown>)[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** The object an event is about, as a link label: its data's id. */
function subjectOf(envelope: Envelope): string {
  const data = envelope.data
  return typeof data === 'object' && data !== null && 'id' in data && typeof data.id === 'string' ? data.id : ''
}

export async function eventsPage(context: PageContext, request: FastifyRequest): Promise<Answer> {
  const { app, environment, session } = context
  const type = text(request, 'type')
  if (type !== undefined && !TYPE.test(type)) throw new PageRefusal(400, `type must be an event type such as transfer.created: ${type}`)
  const startingAfter = text(request, 'starting_after')
  const endingBefore = text(request, 'ending_before')
  const place = async (id: string | undefined): Promise<EventPlace | undefined> => {
    if (id === undefined) return undefined
    const found = await findEvent(app.db, session.appId, environment, id)
    if (found === undefined) throw new PageRefusal(400, `No event ${id} of this application in ${environment} to page from.`)
    return found
  }
  const { rows, more } = await pageOfEvents(app.db, session.appId, environment, {
    types: type === undefined ? undefined : [type],
    olderThan: await place(startingAfter),
    newerThan: endingBefore === undefined ? undefined : await place(endingBefore),
    take: PAGE_SIZE,
  })
  const base = `/console/${environment}/events`
  const keep = type === undefined ? '' : `type=${encodeURIComponent(type)}&`
  const first = rows[0]
  const last = rows[rows.length - 1]
  // Going back, `more` says whether newer ones remain; going forward, whether older ones do.
  const newer = endingBefore !== undefined ? more : startingAfter !== undefined
  const older = endingBefore !== undefined ? true : more
  const pager: Html[] = []
  if (newer && first !== undefined) pager.push(html`<a href="${base}?${keep}ending_before=${first.id}">Newer</a>`)
  if (older && last !== undefined) pager.push(html`<a href="${base}?${keep}starting_after=${last.id}">Older</a>`)
  const form = html`<form class="filters" method="get" action="${base}" aria-label="Filter events">
<div><label for="type">Event type</label><input id="type" name="type" value="${type ?? ''}" placeholder="transfer.created"></div>
<div><button type="submit" class="primary">Filter</button> <a href="${base}">Clear</a></div></form>`
  const table =
    rows.length === 0
      ? html`<div class="table-scroll"><p class="empty">No event here.</p></div>`
      : scrollingTable('Events', html`<table><caption>Newest first, ${PAGE_SIZE} a page</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Type</th><th scope="col">About</th><th scope="col">Created</th></tr></thead>
<tbody>${rows.map((row) => {
          const envelope = JSON.parse(row.payload) as Envelope
          return html`<tr><th scope="row"><a href="${base}/${row.id}"><code>${row.id}</code></a></th><td>${envelope.type}</td><td><code>${subjectOf(envelope)}</code></td><td>${row.created_at.slice(0, 19).replace('T', ' ')}</td></tr>`
        })}</tbody></table>`)
  const nav = pager.length === 0 ? '' : html`<nav class="actions" aria-label="Pages">${pager}</nav>`
  return { status: 200, body: consolePage('Events', await context.frame('/events', '/events'), html`${form}${table}${nav}`) }
}

export async function eventPage(context: PageContext, request: FastifyRequest): Promise<Answer> {
  const { id } = request.params as { id: string }
  const found = await findEvent(context.app.db, context.session.appId, context.environment, id)
  if (found === undefined) throw new PageRefusal(404, `No event ${id} of this application in ${context.environment}.`)
  const envelope = JSON.parse(found.payload) as Envelope
  const main = html`<p><a href="/console/${context.environment}/events">All events</a></p>
<div class="panel"><dl class="facts"><dt>Type</dt><dd>${envelope.type}</dd><dt>Created</dt><dd>${envelope.created_at}</dd><dt>About</dt><dd><code>${subjectOf(envelope)}</code></dd></dl></div>
<h2>Payload</h2>
<pre tabindex="0" aria-label="The event as its webhooks received it">${JSON.stringify(envelope, null, 2)}</pre>`
  return { status: 200, body: consolePage(`Event ${envelope.id}`, await context.frame('/events', '/events'), main) }
}

export const eventsRoutes: readonly ConsoleRoute[] = [
  { method: 'GET', path: '/events', handle: eventsPage },
  { method: 'GET', path: '/events/:id', handle: eventPage },
]
