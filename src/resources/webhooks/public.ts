/*
 * What other modules may use of webhooks (the only file of this folder they import): the owner's
 * tools, as the console's webhooks page uses them.
 */
export {
  attemptsPerDayOf,
  deliveryLogOf,
  type LoggedDelivery,
  type OwnerEnvironment,
  ownedWebhook,
  replayFailedSince,
  resendDelivery,
  sendTestEvent,
  type WebhookRow,
  webhooksOf,
} from './owner-tools.js'
