import type { Db } from '../../db/database.js'
import { InvalidRequest } from '../../errors.js'
import { findProduct, formatPrice, PRODUCT_CURRENCY_DECIMALS, type ProductCurrency } from '../products/public.js'
import { findCustomer } from '../customers/public.js'
import { findTax } from '../taxes/public.js'
import type { PaymentLinkFields, ProductLine } from './repository.js'
import { type LinkCurrency, MAX_CUSTOM_FIELDS_BYTES } from './schemas.js'
import { MAX_AMOUNT_UNITS } from '../../ledger/amount.js'

/** 3-64 lower-case letters, digits and hyphens, starting and ending with a letter or a digit. */
const SLUG = /^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$/
const URL_WITH_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//

export const INVALID_URL = 'url must be a slug (3-64 lower-case letters, digits and hyphens, starting and ending with a letter or a digit) or an http(s) URL whose last path segment is one'

/**
 * The slug a link's `url` names: the value itself, or the last path segment of an http(s) URL
 * (query and fragment ignored). Upper-case letters are taken as lower-case: two slugs that differ
 * only in case would be one address to a person reading them.
 */
export function slugOf(url: string): string {
  let candidate = url
  if (URL_WITH_SCHEME.test(url)) {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      throw new InvalidRequest(INVALID_URL)
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new InvalidRequest(INVALID_URL)
    candidate = parsed.pathname.split('/').filter((segment) => segment !== '').at(-1) ?? ''
  }
  candidate = candidate.toLowerCase()
  if (!SLUG.test(candidate)) throw new InvalidRequest(INVALID_URL)
  return candidate
}

export function checkedCoverImage(value: string): string {
  let parsed: URL | undefined
  try {
    parsed = new URL(value)
  } catch {
    parsed = undefined
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) throw new InvalidRequest('coverImage must be an http or https URL')
  return value
}

/** An expiration date as stored (ISO, UTC, milliseconds); it must lie ahead. */
export function checkedExpiration(value: string, now: Date): string {
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) throw new InvalidRequest('expiration_date is not a valid date')
  if (date.getTime() <= now.getTime()) throw new InvalidRequest('expiration_date must be in the future')
  return date.toISOString()
}

export function checkedCustomFields(value: Record<string, unknown>): Record<string, unknown> {
  if (Buffer.byteLength(JSON.stringify(value)) > MAX_CUSTOM_FIELDS_BYTES) throw new InvalidRequest(`customFields must be at most ${MAX_CUSTOM_FIELDS_BYTES} bytes as JSON`)
  return value
}

/**
 * The rules between fields, on the link as it will be (a create's body, or an update merged into
 * the link): what each linkType needs and refuses, tax, and the payment limit.
 */
export function checkLinkRules(link: PaymentLinkFields): void {
  const hasProducts = link.products.length > 0
  if (link.linkType === 'PRODUCT') {
    if (hasProducts && link.isForAllProducts) throw new InvalidRequest('paymentLinkProducts and isForAllProduct: true cannot be used together')
    if (!hasProducts && !link.isForAllProducts) throw new InvalidRequest('a PRODUCT link needs paymentLinkProducts or isForAllProduct: true')
    if (link.amount !== null) throw new InvalidRequest("amount is not allowed on a PRODUCT link: its products' prices make the total")
  } else {
    if (hasProducts || link.isForAllProducts) throw new InvalidRequest(`paymentLinkProducts and isForAllProduct are only for PRODUCT links (this one is ${link.linkType})`)
    if (link.allowQuantityAdjustment) throw new InvalidRequest(`allowQuantityAdjustment is only for PRODUCT links (this one is ${link.linkType})`)
  }
  if (link.linkType === 'INVOICE') {
    if (link.paymentForId === null) throw new InvalidRequest('an INVOICE link needs paymentForId (what it is paid for)')
    if (link.amount === null) throw new InvalidRequest('an INVOICE link needs amount (the sum due)')
  }
  const seen = new Set<string>()
  for (const line of link.products) {
    if (seen.has(line.productId)) throw new InvalidRequest(`paymentLinkProducts names product ${line.productId} more than once`)
    seen.add(line.productId)
  }
  if (link.collectTax && link.taxId === null) throw new InvalidRequest('taxId is required when collectTax is true')
  if (link.limitPayments && link.maxPayments === null) throw new InvalidRequest('maxPayments is required when limitPayments is true')
  if (!link.limitPayments && link.maxPayments !== null) throw new InvalidRequest('maxPayments needs limitPayments: true')
}

/** The fiat currency a link's stablecoin stands for, one to one: the only currency its products may be priced in. */
export const FIAT_OF: Readonly<Record<LinkCurrency, ProductCurrency>> = { usdc: 'USD', eurc: 'EUR' }

/**
 * The references of a link to other resources of the application, read in the transaction that
 * writes it. A reference to another application's resource answers like a missing one.
 */
export class LinkReferences {
  constructor(
    private readonly db: Db,
    private readonly appId: string,
  ) {}

  async checkCustomer(customerId: string): Promise<void> {
    if ((await findCustomer(this.db, this.appId, customerId)) === undefined) {
      throw new InvalidRequest(`customerId: no customer ${customerId} in this application`)
    }
  }

  async checkTax(taxId: string): Promise<void> {
    const tax = await findTax(this.db, this.appId, taxId)
    if (tax === undefined) throw new InvalidRequest(`taxId: no tax ${taxId} in this application`)
    if (tax.active !== 1) throw new InvalidRequest(`taxId: the tax ${taxId} is inactive`)
  }

  /**
   * Each line's product is the application's, ACTIVE, and priced in the link currency's fiat
   * (USD on usdc, EUR on eurc); the lines' total stays within what one payment may move.
   */
  async checkProducts(lines: readonly ProductLine[], currency: LinkCurrency): Promise<void> {
    const fiat = FIAT_OF[currency]
    let total = 0n
    for (const [index, line] of lines.entries()) {
      const product = await findProduct(this.db, this.appId, line.productId)
      if (product === undefined) throw new InvalidRequest(`paymentLinkProducts[${index}].productId: no product ${line.productId} in this application`)
      if (product.status !== 'ACTIVE') throw new InvalidRequest(`paymentLinkProducts[${index}]: product ${line.productId} is ${product.status}`)
      if (product.currency !== fiat) {
        throw new InvalidRequest(
          `paymentLinkProducts[${index}]: product ${line.productId} is priced in ${product.currency}; a ${currency} link sells only ${fiat}-priced products (1 ${fiat} = 1 ${currency.toUpperCase()})`,
        )
      }
      total += BigInt(product.price) * BigInt(line.quantity)
    }
    const limit = MAX_AMOUNT_UNITS * 10n ** BigInt(PRODUCT_CURRENCY_DECIMALS[fiat])
    if (total > limit) throw new InvalidRequest(`the products' total (${formatPrice(total, fiat)} ${fiat}) must be at most ${MAX_AMOUNT_UNITS}`)
  }
}
