import { formatAmount } from '../../ledger/amount.js'
import { livemodeOf } from '../../ledger/environment.js'
import { customFieldsOf, type PaymentLinkRow, productLinesOf } from './repository.js'
import type { LinkCurrency, LinkType, PaymentLink } from './schemas.js'

/** Where a payer opens the link: the hosted checkout page on this server (a slug is unique within its application only). */
export function checkoutPath(appId: string, slug: string): string {
  return `/pay/${appId}/${slug}`
}

/**
 * The API's payment link object from its row. `publicUrl` (Platform.publicUrl) makes
 * checkout_url absolute; `now` decides whether it has expired (computed on read).
 */
export function toPaymentLink(row: PaymentLinkRow, publicUrl: string, now: Date = new Date()): PaymentLink {
  const currency = row.currency as LinkCurrency
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    url: row.slug,
    checkout_url: `${publicUrl}${checkoutPath(row.app_id, row.slug)}`,
    coverImage: row.cover_image,
    linkType: row.link_type as LinkType,
    currency,
    amount: row.amount === null ? null : formatAmount(BigInt(row.amount), currency),
    paymentForId: row.payment_for_id,
    customerId: row.customer_id,
    paymentLinkProducts: productLinesOf(row),
    isForAllProduct: row.is_for_all_products === 1,
    allowQuantityAdjustment: row.allow_quantity_adjustment === 1,
    collectTax: row.collect_tax === 1,
    taxId: row.tax_id,
    collectAddress: row.collect_address === 1,
    allowMobilePayment: row.allow_mobile_payment === 1,
    limitPayments: row.limit_payments === 1,
    maxPayments: row.max_payments,
    payments_count: row.payments_count,
    livemode: livemodeOf(row.environment),
    customFields: customFieldsOf(row),
    // ISO timestamps of one format compare as text.
    status: row.expires_at !== null && row.expires_at <= now.toISOString() ? 'expired' : 'active',
    expiration_date: row.expires_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}
