/** What the dispatcher running in this process wants to hear from the API, as it happens. */
export interface DeliveryListener {
  /** new deliveries were committed: claim them now rather than at the next poll */
  deliveriesCommitted(): void
  /** the webhook was deleted or deactivated (committed): abort its attempts on the wire */
  webhookStopped(webhookId: string): void
}

/**
 * The in-process link from the API to the dispatcher. Without a dispatcher in this process
 * (WEBHOOK_DISPATCHER=off and a separate `devplatform worker`) both calls do nothing; the
 * worker then finds the same facts in the database.
 */
export class DeliveryNotifier {
  private listener: DeliveryListener | undefined

  attach(listener: DeliveryListener): void {
    this.listener = listener
  }

  detach(): void {
    this.listener = undefined
  }

  deliveriesCommitted(): void {
    this.listener?.deliveriesCommitted()
  }

  webhookStopped(webhookId: string): void {
    this.listener?.webhookStopped(webhookId)
  }
}
