import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import type { MoneyContext } from '../../ledger/money-context.js'
import { consolePage, type Frame, html, type Section } from './html.js'
import type { Session } from './sessions.js'

/** What a signed-in page is given and answers: the pages' own contract, apart from the plugin that serves them. */

export type Form = Record<string, string>

/** A page's answer: its status and document. */
export interface Answer {
  status: number
  body: string
  /** after an action: 303 to this page of the console, so reloading it repeats nothing */
  redirectTo?: string
}

/** What a signed-in page is given: who, where, and the database. */
export interface PageContext {
  app: FastifyInstance
  session: Session
  environment: LedgerEnvironment
  frame: (section: Section, switchPath: string) => Promise<Frame>
  publicUrl: () => string
  /** every scope a key may be given */
  scopes: readonly string[]
  /** what an action on held money moves money with */
  money: MoneyContext
}

export class PageRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/** A refusal inside a session, in the console's frame. */
export function refusalPage(frame: Frame, status: number, title: string, message: string): Answer {
  return { status, body: consolePage(title, frame, html`<div class="alert" role="alert"><p>${message}</p></div>`) }
}

/** A signed-in page's route: its path under /console/{environment}, and what it answers. */
export interface ConsoleRoute {
  method: 'GET' | 'POST'
  path: string
  /** POST: admins only (a viewer gets a 403 page) */
  admin?: boolean
  handle: (context: PageContext, request: FastifyRequest, form: Form) => Promise<Answer>
}

