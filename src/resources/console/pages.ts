import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { findBrand } from '../branding/public.js'
import { DomainError } from '../../errors.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import type { MoneyContext } from '../../ledger/money-context.js'
import { CONSOLE_HEADERS, type Frame, html, plainPage, type Section } from './html.js'
import { type Answer, type ConsoleRoute, type Form, type PageContext, PageRefusal, refusalPage } from './page-context.js'
import { type ConsoleRole, CONSOLE_PREFIX, csrfMatches, endSession, openConsoleLink, sessionOf } from './sessions.js'

/**
 * The console's pages (docs/console.md), under /console, never /api/v0:
 *
 *   GET  /console/open/{token}     opens a link once: a session cookie, then the overview
 *   POST /console/logout           ends the session
 *   GET  /console/{environment}... the sections, sandbox or live (never both on one page)
 *
 * Every page but a link's needs a session; every POST carries the session's CSRF token; an
 * action an admin may take answers a viewer 403.
 */

const COOKIE = 'console_session'
const FORM_LIMIT = 16 * 1024
export interface ConsolePagesOptions {
  publicUrl: () => string
  scopes: readonly string[]
  money: MoneyContext
}

function cookieOf(request: FastifyRequest): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=')
    if (name === COOKIE) return value.join('=')
  }
  return undefined
}

function cookieHeader(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : ''
  return `${COOKIE}=${value}; Path=${CONSOLE_PREFIX}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`
}

function send(reply: FastifyReply, answer: Answer): FastifyReply {
  if (answer.redirectTo !== undefined) return reply.headers(CONSOLE_HEADERS).redirect(answer.redirectTo, 303)
  return reply.code(answer.status).headers(CONSOLE_HEADERS).send(answer.body)
}

function formFields(body: string | Buffer): Form {
  const form: Form = {}
  for (const [name, value] of new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))) form[name] ??= value
  return form
}

const ENVIRONMENTS: readonly LedgerEnvironment[] = ['sandbox', 'live']
const environmentOf = (text: string): LedgerEnvironment | undefined => ENVIRONMENTS.find((environment) => environment === text)

const SIGNED_OUT = 'Ask the application’s owner for a new console link: they make one with `devplatform console link` or the API (POST /api/v0/console/links).'

function signedOutPage(status: number, title: string, why: string): Answer {
  return { status, body: plainPage(title, html`<p>${why}</p><p class="muted">${SIGNED_OUT}</p>`) }
}

export function consolePagesOf(routes: readonly ConsoleRoute[]): FastifyPluginAsync<ConsolePagesOptions> {
  return async (app, options) => {
    const hidden = { schema: { hide: true } }
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) => done(null, formFields(body)))

    app.get<{ Params: { token: string } }>(`${CONSOLE_PREFIX}/open/:token`, hidden, async (request, reply) => {
      const opened = await openConsoleLink(app.db, request.params.token)
      if (opened.outcome === 'used') return send(reply, signedOutPage(410, 'This link was already used', 'A console link opens one session, once. This one has been opened already, so it cannot sign anyone in again.'))
      if (opened.outcome === 'expired') return send(reply, signedOutPage(410, 'This link has expired', 'A console link works only for a short time after it is made (15 minutes unless asked otherwise), and only while its application has a working key.'))
      if (opened.outcome !== 'opened') return send(reply, signedOutPage(404, 'This link does not exist', 'The address is not a console link: check it was copied whole.'))
      const to = `${CONSOLE_PREFIX}/sandbox`
      // A page of this site moves on to the console: the Strict cookie is sent on that same-site navigation, not on a redirect from the mail or chat the link was opened from.
      reply.header('set-cookie', cookieHeader(request, opened.cookie, Math.floor((Date.parse(opened.session.expiresAt) - Date.now()) / 1000)))
      const brand = await findBrand(app.db, opened.session.appId)
      return send(reply, { status: 200, body: plainPage('Signed in', html`<p>You are signed in to ${brand.display_name}'s console as ${opened.session.role === 'admin' ? 'an admin' : 'a viewer'}.</p><p><a href="${to}">Open the console</a></p>`, { brand, refreshTo: to }) })
    })

    app.get(CONSOLE_PREFIX, hidden, async (_request, reply) => reply.redirect(`${CONSOLE_PREFIX}/sandbox`, 303))

    app.post<{ Body: unknown }>(`${CONSOLE_PREFIX}/logout`, hidden, async (request, reply) => {
      const session = await sessionOf(app.db, cookieOf(request))
      if (session === undefined) return send(reply, signedOutPage(401, 'Signed out', 'This browser has no console session.'))
      if (!csrfMatches(session, formOf(request.body)._csrf)) return send(reply, signedOutPage(403, 'Refused', 'The form did not carry this session’s token, so nothing was done. Sign out from a console page.'))
      await endSession(app.db, session)
      reply.header('set-cookie', cookieHeader(request, '', 0))
      return send(reply, signedOutPage(200, 'Signed out', 'Your console session has ended.'))
    })

    for (const route of routes) {
      const url = `${CONSOLE_PREFIX}/:environment${route.path}`
      app.route<{ Params: Record<string, string>; Body: unknown }>({
        method: route.method,
        url,
        ...hidden,
        handler: async (request, reply) => {
          const session = await sessionOf(app.db, cookieOf(request))
          if (session === undefined) return send(reply, signedOutPage(401, 'Not signed in', 'Your console session has ended, or this browser never had one.'))
          const environment = environmentOf(request.params.environment ?? '')
          const frame = async (section: Section, switchPath: string): Promise<Frame> => ({
            brand: await findBrand(app.db, session.appId),
            environment: environment ?? 'sandbox',
            role: session.role,
            csrfToken: session.csrfToken,
            section,
            switchPath,
          })
          if (environment === undefined) return send(reply, refusalPage(await frame('', ''), 404, 'Not found', 'The console has two environments: sandbox and live.'))
          const context: PageContext = { app, session, environment, frame, publicUrl: options.publicUrl, scopes: options.scopes, money: options.money }
          const form = route.method === 'POST' ? formOf(request.body) : {}
          if (route.method === 'POST' && !csrfMatches(session, form._csrf)) {
            return send(reply, refusalPage(await frame('', ''), 403, 'Refused', 'This form did not carry your session’s token (it may come from another site, or an older session), so nothing was done. Go back, reload the page and try again.'))
          }
          if (route.admin === true && !isAdmin(session.role)) {
            return send(reply, refusalPage(await frame('', ''), 403, 'Admins only', 'You are signed in as a viewer: you can look, but this action needs a console link made with --role admin.'))
          }
          try {
            return send(reply, await route.handle(context, request, form))
          } catch (error) {
            if (error instanceof PageRefusal) return send(reply, refusalPage(await frame('', ''), error.status, error.status === 404 ? 'Not found' : 'Refused', error.message))
            // The domain's refusals, as the API maps them: nothing was changed.
            if (error instanceof DomainError) return send(reply, refusalPage(await frame('', ''), DOMAIN_STATUS[error.kind], error.kind === 'not-found' ? 'Not found' : 'Refused', error.message))
            throw error
          }
        },
      })
    }
  }
}

const DOMAIN_STATUS: Readonly<Record<DomainError['kind'], number>> = { 'invalid-request': 400, 'not-found': 404, conflict: 409 }

function isAdmin(role: ConsoleRole): boolean {
  return role === 'admin'
}

function formOf(body: unknown): Form {
  if (typeof body !== 'object' || body === null) return {}
  const form: Form = {}
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') form[name] = value
  return form
}

