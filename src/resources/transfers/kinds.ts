/** What a transfer row is: the five transfers of the published client, and the two payment intents. */
export const TRANSFER_KINDS = ['direct_bank', 'direct_wallet', 'external_bank', 'external_stablecoin', 'stablecoin_conversion'] as const
export const PAYMENT_INTENT_KINDS = ['payment_intent_bank', 'payment_intent_stablecoin'] as const
export type TransferKind = (typeof TRANSFER_KINDS)[number] | (typeof PAYMENT_INTENT_KINDS)[number]
