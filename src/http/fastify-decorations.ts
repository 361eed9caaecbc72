import type { Db } from '../db/database.js'
import type { AppsRepository } from '../apps/repository.js'
import type { AuthContext } from '../auth/context.js'
import type { Transaction } from '../events/transact.js'
import type { DeliveryNotifier } from '../delivery/notifier.js'
import type { Operation } from '../resources/manifest.js'

/** The platform's own repositories; each resource makes its own from `app.db` (src/resources/<name>/repository.ts). */
export interface Repositories {
  apps: AppsRepository
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
    /** the manifest's operation the route is registered from (`operation(manifest, operationId)`) */
    operation?: Operation
    /** the scope an API key needs for this route, from its resource's manifest (or ANY_VALID_KEY, PUBLIC) */
    scope?: string
    /** the manifest requires an Idempotency-Key on this POST */
    idempotencyKeyRequired?: boolean
  }
}
