import type { MoneyContext } from '../ledger/money-context.js'
import type { DomainEvent, DomainEventType } from './domain-events.js'
import type { DomainEventSink, Transaction } from './transact.js'

/** What a subscriber's handler is given beside the event: the settings of the process it runs in. */
export interface HookSettings {
  /** the origin of every URL a handler puts into an event (Platform.publicUrl, src/resources/resource.ts) */
  publicUrl: () => string
  /** what a handler that moves money runs it with (the scheduler's) */
  money: MoneyContext
}

/** A handler of one domain event type, run on the publisher's transaction. */
export type DomainEventHandler<T extends DomainEventType> = (tx: Transaction, event: Extract<DomainEvent, { type: T }>, settings: HookSettings) => Promise<void>

/**
 * The domain events one module subscribes to, with its handler of each: declared in its own
 * folder, in its Resource's `subscriptions` (src/resources/resource.ts).
 */
export type DomainSubscriptions = { readonly [T in DomainEventType]?: DomainEventHandler<T> }

/**
 * The subscribers of every domain event, in the order their modules are listed (RESOURCES); what
 * transactOn is given, so a publisher reaches its subscribers without importing them.
 */
export class DomainHooks implements DomainEventSink {
  constructor(
    private readonly subscriptions: readonly DomainSubscriptions[],
    private readonly settings: HookSettings,
  ) {}

  /** Runs each subscriber's handler of `event`, one after the other, on `tx`. */
  async publish(tx: Transaction, event: DomainEvent): Promise<void> {
    for (const subscription of this.subscriptions) await this.run(subscription, tx, event)
  }

  private async run<T extends DomainEventType>(subscription: DomainSubscriptions, tx: Transaction, event: Extract<DomainEvent, { type: T }>): Promise<void> {
    // The handler of the event's own type: indexing by a generic key keeps the pairing the compiler can't see through a union.
    const handler = subscription[event.type as T] as DomainEventHandler<T> | undefined
    if (handler !== undefined) await handler(tx, event, this.settings)
  }
}
