import type { Db } from '../../db/database.js'
import { Conflict, InvalidRequest } from '../../errors.js'
import { CURRENCY_DECIMALS, MAX_AMOUNT_UNITS } from '../../ledger/amount.js'
import { exactPercent, type InvoiceRow, linesOf, parsePercentText, percentText, taxOf, taxOn, UNITS_PER_CENT } from '../invoices/public.js'
import { FIAT_OF, type LinkCurrency, MAX_QUANTITY, type PaymentLinkRow, productLinesOf } from '../payment-links/public.js'
import { activeProducts, findProduct, type ProductCurrency, type ProductRow } from '../products/public.js'
import { findTax } from '../taxes/public.js'

/**
 * What a page charges: its lines, tax and total. Invoice amounts are cents (frozen on the
 * invoice); a PRODUCT link's are priced from its products now, the tax once on the subtotal,
 * rounded half up to the cent (the invoices' rule). The total is in ledger units (10⁻⁶).
 */

export interface ChargeLine {
  productId: string
  name: string
  quantity: number
  /** cents of the fiat (1:1 with the stablecoin) */
  unitPrice: bigint
  amount: bigint
}

export interface Charge {
  currency: LinkCurrency
  lines: ChargeLine[]
  /** whether the payer may change each line's quantity (0 leaves the product out) */
  adjustable: boolean
  /** cents; null without product lines */
  subtotal: bigint | null
  tax: { name: string; percentage: string; amount: bigint } | null
  /** ledger units; null when the payer names the amount */
  total: bigint | null
}

/** The most a payer may name: the most one request may move. */
export const MAX_PAYER_AMOUNT = MAX_AMOUNT_UNITS * 10n ** BigInt(CURRENCY_DECIMALS.usdc)

/** Most products an "all products" link offers on its page. */
const ALL_PRODUCTS_SHOWN = 100

export function invoiceCharge(row: InvoiceRow): Charge & { due: bigint; paid: bigint } {
  const tax = taxOf(row)
  const total = BigInt(row.total)
  const paid = BigInt(row.amount_paid)
  return {
    currency: row.currency as LinkCurrency,
    lines: linesOf(row).map((line) => ({ productId: line.product_id, name: line.name, quantity: line.quantity, unitPrice: line.unit_price, amount: line.amount })),
    adjustable: false,
    subtotal: BigInt(row.subtotal),
    tax: tax === null ? null : { name: tax.name, percentage: tax.percentage, amount: BigInt(row.tax_amount) },
    total: total * UNITS_PER_CENT,
    paid,
    due: total - paid,
  }
}

/**
 * A link's charge, with the payer's quantities where the link lets them choose (`quantities`,
 * by product id; absent: the link's own, or 0 on an "all products" link). A product that is gone,
 * inactive or repriced in another currency since the link was made cannot be bought: 409 naming it.
 */
export async function linkCharge(db: Db, link: PaymentLinkRow, quantities?: ReadonlyMap<string, number>): Promise<Charge> {
  const currency = link.currency as LinkCurrency
  if (link.link_type !== 'PRODUCT') return { currency, lines: [], adjustable: false, subtotal: null, tax: null, total: link.amount === null ? null : BigInt(link.amount) }
  const fiat: ProductCurrency = FIAT_OF[currency]
  const forAll = link.is_for_all_products === 1
  const adjustable = forAll || link.allow_quantity_adjustment === 1
  // An "all products" link offers the active products of its currency as they are listed now;
  // another link its own lines, each product read again to check it can still be bought.
  const offered: { product: ProductRow | undefined; productId: string; quantity: number }[] = forAll
    ? (await activeProducts(db, link.app_id, fiat, ALL_PRODUCTS_SHOWN)).map((row) => ({ product: row, productId: row.id, quantity: 0 }))
    : await Promise.all(productLinesOf(link).map(async (line) => ({ ...line, product: await findProduct(db, link.app_id, line.productId) })))
  const lines: ChargeLine[] = []
  for (const line of offered) {
    const product = line.product
    if (product === undefined || product.status !== 'ACTIVE' || product.currency !== fiat) throw new Conflict(`A product of this link (${product?.name ?? line.productId}) is no longer available`)
    const quantity = adjustable ? (quantities?.get(product.id) ?? line.quantity) : line.quantity
    if (!Number.isInteger(quantity) || quantity < 0 || quantity > MAX_QUANTITY) throw new InvalidRequest(`The quantity of ${product.name} must be a whole number from 0 to ${MAX_QUANTITY}`)
    const unitPrice = BigInt(product.price)
    lines.push({ productId: product.id, name: product.name, quantity, unitPrice, amount: unitPrice * BigInt(quantity) })
  }
  const subtotal = lines.reduce((sum, line) => sum + line.amount, 0n)
  let tax: Charge['tax'] = null
  if (link.collect_tax === 1 && link.tax_id !== null) {
    const row = await findTax(db, link.app_id, link.tax_id)
    if (row === undefined || row.active !== 1) throw new Conflict("This link's tax is no longer available: it cannot be paid until the link is updated")
    const percentage = percentText(exactPercent(row.percentage))
    tax = { name: row.name, percentage, amount: taxOn(subtotal, parsePercentText(percentage)) }
  }
  return { currency, lines, adjustable, subtotal, tax, total: (subtotal + (tax?.amount ?? 0n)) * UNITS_PER_CENT }
}
