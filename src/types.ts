import type { Environment } from './keys/credentials.js'
import type { Db } from './db/database.js'
import type { AppsRepository } from './db/repositories/apps.js'
import type { DeliveriesRepository } from './db/repositories/deliveries.js'
import type { EventsRepository } from './db/repositories/events.js'
import type { UnitOfWork } from './db/unit-of-work.js'
import type { DeliveryNotifier } from './delivery/notifier.js'

/** Who is calling: set by the auth hook on every authenticated route. */
export interface AuthContext {
  appId: string
  keyId: string
  environment: Environment
  /** the scopes the key was given (src/resources/index.ts lists them all) */
  scopes: readonly string[]
}

/** The platform's own repositories; each resource makes its own from `app.db` (src/resources/<name>/repository.ts). */
export interface Repositories {
  apps: AppsRepository
}

/** One write transaction: its database handle and unit of work (for a resource's repositories), the outbox and the delivery queue. */
export interface Transaction {
  /** the transaction: every statement of the change runs on it */
  db: Db
  /** the commit's side effects (a webhook stopped, deliveries written) */
  unit: UnitOfWork
  events: EventsRepository
  deliveries: DeliveriesRepository
}

declare module 'fastify' {
  interface FastifyInstance {
    db: Db
    /** reads; writes go through `transact` */
    repos: Repositories
    /** runs `work` in one write transaction; wakes the dispatcher when it wrote deliveries */
    transact<T>(work: (tx: Transaction) => Promise<T>): Promise<T>
    /** tells the dispatcher in this process (if any) about commits it must act on at once */
    notifier: DeliveryNotifier
  }
  interface FastifyRequest {
    /** null only on public routes; authenticated handlers read it through `callerOf`. */
    auth: AuthContext | null
    /** the JSON body's text as received ('' for other bodies): amounts sent as numbers are read from it */
    jsonText: string
  }
  interface FastifyContextConfig {
    /** the scope an API key needs for this route, from its resource's manifest (or ANY_VALID_KEY, PUBLIC) */
    scope?: string
    /** the manifest requires an Idempotency-Key on this POST */
    idempotencyKeyRequired?: boolean
  }
}
