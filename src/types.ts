import type { Environment } from './auth/credentials.js'
import type { Db } from './db/database.js'
import type { AppsRepository } from './db/repositories/apps.js'
import type { CustomersRepository } from './resources/customers/repository.js'
import type { DeliveriesRepository } from './db/repositories/deliveries.js'
import type { DeliveryLogRepository } from './resources/webhooks/delivery-log-repository.js'
import type { EventsRepository } from './db/repositories/events.js'
import type { LiquidationAddressesRepository } from './resources/liquidation-addresses/repository.js'
import type { TaxesRepository } from './resources/taxes/repository.js'
import type { WebhooksRepository } from './resources/webhooks/repository.js'
import type { DeliveryNotifier } from './delivery/notifier.js'

/** Who is calling: set by the auth hook on every authenticated route. */
export interface AuthContext {
  appId: string
  keyId: string
  environment: Environment
  /** the scopes the key was given (src/resources/index.ts lists them all) */
  scopes: readonly string[]
}

export interface Repositories {
  apps: AppsRepository
  webhooks: WebhooksRepository
  customers: CustomersRepository
  liquidationAddresses: LiquidationAddressesRepository
  taxes: TaxesRepository
  deliveryLog: DeliveryLogRepository
}

/** The repositories inside one write transaction, with the outbox and the delivery queue. */
export interface TransactionRepositories extends Repositories {
  events: EventsRepository
  deliveries: DeliveriesRepository
}

declare module 'fastify' {
  interface FastifyInstance {
    db: Db
    /** reads; writes go through `transact` */
    repos: Repositories
    /** runs `work` in one write transaction; wakes the dispatcher when it wrote deliveries */
    transact<T>(work: (tx: TransactionRepositories) => Promise<T>): Promise<T>
    /** tells the dispatcher in this process (if any) about commits it must act on at once */
    notifier: DeliveryNotifier
  }
  interface FastifyRequest {
    /** null only on public routes; authenticated handlers read it through `callerOf`. */
    auth: AuthContext | null
  }
  interface FastifyContextConfig {
    /** the scope an API key needs for this route, from its resource's manifest (or ANY_VALID_KEY, PUBLIC) */
    scope?: string
  }
}
