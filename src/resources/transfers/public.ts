/*
 * What other modules may use of transfers (the only file of this folder they import): payment
 * intents are transfers of their own family, created by the same routes and run by the same
 * lifecycle, so they share its requests' fields, its routes and its schemas.
 */

export type { NewTransfer, TransferContext } from './lifecycle.js'
export { bankInstructions, checkAchReference, depositAddress, FIATS, INBOUND_NETWORKS, oneOf, railFor, STABLECOINS } from './requests.js'
export { creationRoutes, followRoutes } from './routes.js'
export { type CustomerDetails, PAYER_EXAMPLE, PaymentIntentSchema } from './schemas.js'
