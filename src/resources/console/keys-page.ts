import type { FastifyRequest } from 'fastify'
import { type ApiKey, DEFAULT_GRACE_SECONDS, expireKey, keysOfApp, rescopeKey, rotateKey } from '../../apps/key-management.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import { consolePage, csrfField, html, type Html, timeOf } from './html.js'
import { type Answer, type ConsoleRoute, type Form, type PageContext, PageRefusal } from './page-context.js'

/**
 * The API-keys page (docs/console.md#api-keys): the environment's keys, never a secret; an admin
 * rotates one with a grace (the new secret shown once, on the answer), sets when it expires and
 * replaces its scopes, with the rules `devplatform keys …` applies (src/apps/key-management.ts).
 */

const HOUR = 3600
const DAY = 24 * HOUR
const GRACES: readonly [number, string][] = [
  [0, 'none: the old secret stops now'],
  [HOUR, '1 hour'],
  [DAY, '24 hours'],
  [7 * DAY, '7 days'],
]
const EXPIRIES: readonly [string, string][] = [
  ['never', 'Never (remove the expiry)'],
  ['0', 'Now'],
  [String(HOUR), 'In 1 hour'],
  [String(DAY), 'In 24 hours'],
  [String(7 * DAY), 'In 7 days'],
  [String(30 * DAY), 'In 30 days'],
  [String(90 * DAY), 'In 90 days'],
]

function stateOf(key: ApiKey, now: string): Html {
  if (!key.active) return html`<span class="badge">deactivated</span>`
  if (key.expires_at !== null && key.expires_at <= now) return html`<span class="badge bad">expired</span>`
  return html`<span class="badge good">active</span>`
}

function usable(key: ApiKey, now: string): boolean {
  return key.active && (key.expires_at === null || key.expires_at > now)
}

function keyForms(context: PageContext, key: ApiKey): Html {
  const base = `/console/${context.environment}/keys/${key.id}`
  const csrf = csrfField(context.session.csrfToken)
  const scopes = context.scopes.map(
    (scope) => html`<label class="scope"><input type="checkbox" name="scope-${scope}" value="on"${key.scopes.includes(scope) ? html` checked` : ''}> <code>${scope}</code></label>`,
  )
  return html`<details><summary>Change this key</summary>
<form method="post" action="${base}/rotate" class="filters">${csrf}<div><label for="grace-${key.id}">Old secret keeps working for</label><select id="grace-${key.id}" name="grace">${GRACES.map(([seconds, name]) => html`<option value="${seconds}"${seconds === DEFAULT_GRACE_SECONDS ? html` selected` : ''}>${name}</option>`)}</select></div><button type="submit" class="primary">Rotate secret</button></form>
<form method="post" action="${base}/expire" class="filters">${csrf}<div><label for="expire-${key.id}">Stops working</label><select id="expire-${key.id}" name="in">${EXPIRIES.map(([value, name]) => html`<option value="${value}">${name}</option>`)}</select></div><button type="submit" class="danger">Set expiry</button></form>
<form method="post" action="${base}/scopes" class="filters">${csrf}<fieldset><legend>Scopes</legend><div style="columns: 13rem">${scopes}</div></fieldset><button type="submit">Save scopes</button></form>
</details>`
}

async function keysPage(context: PageContext, notice?: Html): Promise<Answer> {
  const now = new Date().toISOString()
  const keys = (await keysOfApp(context.app.db, context.session.appId)).filter((key) => ledgerEnvironmentOf(key.environment) === context.environment)
  const admin = context.session.role === 'admin'
  const rows = keys.map(
    (key) => html`<tr id="k-${key.id}"><th scope="row"><code>${key.client_key}</code><br><span class="muted">id <code>${key.id}</code></span>${admin && usable(key, now) ? keyForms(context, key) : ''}</th>
<td>${stateOf(key, now)}</td><td>${key.environment}</td><td>${key.scopes.length === context.scopes.length ? 'every scope' : key.scopes.join(', ')}</td>
<td>${timeOf(key.created_at)}</td><td>${timeOf(key.expires_at)}</td><td>${timeOf(key.previous_secret_expires_at)}</td></tr>`,
  )
  const main = html`${notice === undefined ? '' : html`<div class="notice" role="status">${notice}</div>`}
<p class="muted">The keys of this environment (${context.environment === 'live' ? 'production' : 'development'} keys). A secret is shown only once, when it is made; it is stored as a digest and never shown here.${admin ? '' : ' Changing a key needs an admin’s console link.'}</p>
${
  keys.length === 0
    ? html`<div class="panel"><p>No keys in this environment.</p></div>`
    : html`<div class="table-scroll"><table><caption>API keys</caption>
<thead><tr><th scope="col">Client key</th><th scope="col">State</th><th scope="col">Environment</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Old secret works until</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}`
  return { status: 200, body: consolePage('API keys', await context.frame('/keys', '/keys'), main) }
}

function keyIdOf(request: FastifyRequest): string {
  return (request.params as Record<string, string | undefined>).keyId ?? ''
}

function graceOf(form: Form): number {
  const text = form.grace ?? ''
  if (!/^\d{1,9}$/.test(text)) throw new PageRefusal(400, 'Choose how long the old secret keeps working; nothing was changed.')
  return Number(text)
}

function expiryOf(form: Form): string | null {
  const text = form.in ?? ''
  if (text === 'never') return null
  if (!/^\d{1,9}$/.test(text)) throw new PageRefusal(400, 'Choose when the key stops working; nothing was changed.')
  return new Date(Date.now() + Number(text) * 1000).toISOString()
}

/** The checked scopes: one field per scope (`scope-<name>`), as the form has one value per name. */
function scopesOf(context: PageContext, form: Form): string[] {
  return context.scopes.filter((scope) => form[`scope-${scope}`] === 'on')
}

function done(context: PageContext, query: Record<string, string>): Answer {
  return { status: 303, body: '', redirectTo: `/console/${context.environment}/keys?${new URLSearchParams(query).toString()}` }
}

function noticeOf(request: FastifyRequest): Html | undefined {
  const query = request.query as Record<string, string | undefined>
  const id = /^[0-9a-f-]{36}$/.test(query.key ?? '') ? (query.key ?? '') : undefined
  if (id === undefined) return undefined
  if (query.done === 'expire') return html`<p>The expiry of key <code>${id}</code> was changed.</p>`
  if (query.done === 'scopes') return html`<p>The scopes of key <code>${id}</code> were replaced.</p>`
  return undefined
}

export const keysRoutes: readonly ConsoleRoute[] = [
  { method: 'GET', path: '/keys', handle: (context, request) => keysPage(context, noticeOf(request)) },
  {
    method: 'POST',
    path: '/keys/:keyId/rotate',
    admin: true,
    handle: async (context, request, form) => {
      const rotated = await rotateKey(context.app.db, context.session.appId, keyIdOf(request), graceOf(form))
      // The one answer that shows the secret: not a redirect, and never cached (no-store).
      const old = rotated.previous_secret_expires_at === null ? 'The old secret has stopped working.' : `The old secret keeps working until ${timeOf(rotated.previous_secret_expires_at)}.`
      const main = html`<div class="notice" role="status"><p>The secret of <code>${rotated.client_key}</code> was rotated. ${old}</p></div>
<div class="panel"><dl class="facts"><dt>Client key</dt><dd><code>${rotated.client_key}</code></dd><dt>New client secret</dt><dd><code id="new-secret">${rotated.client_secret}</code></dd></dl>
<p><strong>This is the only time the new secret is shown</strong>: store it now (it is kept only as a digest).</p></div>
<p><a href="/console/${context.environment}/keys">Back to the keys</a></p>`
      return { status: 200, body: consolePage('New secret', await context.frame('/keys', '/keys'), main) }
    },
  },
  {
    method: 'POST',
    path: '/keys/:keyId/expire',
    admin: true,
    handle: async (context, request, form) => {
      const key = await expireKey(context.app.db, context.session.appId, keyIdOf(request), expiryOf(form))
      return done(context, { done: 'expire', key: key.id })
    },
  },
  {
    method: 'POST',
    path: '/keys/:keyId/scopes',
    admin: true,
    handle: async (context, request, form) => {
      const key = await rescopeKey(context.app.db, context.session.appId, keyIdOf(request), scopesOf(context, form), context.scopes)
      return done(context, { done: 'scopes', key: key.id })
    },
  },
]
