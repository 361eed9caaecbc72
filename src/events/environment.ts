/**
 * The environment an event belongs to, from its data: 'live' or 'sandbox' for an object that
 * carries `livemode` (money, and what takes it: docs/webhook-delivery.md#livemode-sandbox-or-live-money),
 * null for an object of the application itself (a customer, a webhook), which both environments see.
 */
export function eventEnvironmentOf(data: unknown): 'sandbox' | 'live' | null {
  if (data === null || typeof data !== 'object' || !('livemode' in data)) return null
  return data.livemode === true ? 'live' : data.livemode === false ? 'sandbox' : null
}
