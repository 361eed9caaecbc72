import { livemodeOf } from '../../ledger/environment.js'
import { formatCents } from './money.js'
import { type InvoiceRow, linesOf, paymentMethodsOf, taxOf } from './repository.js'
import type { Invoice } from './schemas.js'

/** The API's invoice object from its row: kept out of the repository, which knows no API schema. */
/** The invoice as the API shows it; `publicUrl` makes its page's URL absolute. */
export function toInvoice(row: InvoiceRow, publicUrl: string): Invoice {
  const tax = taxOf(row)
  const total = BigInt(row.total)
  const paid = BigInt(row.amount_paid)
  const lines = linesOf(row)
  return {
    id: row.id,
    customer_id: row.customer_id,
    name: row.name,
    email: row.email,
    currency: row.currency as Invoice['currency'],
    status: row.status as Invoice['status'],
    lines: lines.map((line) => ({
      product_id: line.product_id,
      name: line.name,
      quantity: line.quantity,
      unit_price: formatCents(line.unit_price),
      amount: formatCents(line.amount),
    })),
    // What the published client's model reads (CreateInvoiceDto's items and taxId), so a client
    // that reads an invoice and sends it back keeps its lines and tax.
    items: lines.map((line) => ({ product_id: line.product_id, quantity: line.quantity })),
    subtotal: formatCents(BigInt(row.subtotal)),
    tax: tax === null ? null : { id: tax.id, name: tax.name, percentage: Number(tax.percentage) },
    taxId: tax === null ? null : tax.id,
    tax_amount: formatCents(BigInt(row.tax_amount)),
    total: formatCents(total),
    amount_paid: formatCents(paid),
    amount_due: formatCents(total - paid),
    due_date: row.due_date,
    send_date: row.send_date,
    delivery: row.delivery as Invoice['delivery'],
    payment_methods: paymentMethodsOf(row) as Invoice['payment_methods'],
    payment_link: row.payment_link === 1,
    payment_link_id: row.payment_link_id,
    hosted_invoice_url: row.status === 'DRAFT' ? null : `${publicUrl}/invoices/${row.id}/pay`,
    partial_payment: row.partial_payment === 1,
    livemode: livemodeOf(row.environment),
    address: row.address,
    phone_number: row.phone_number,
    logo: row.logo,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}
