import { Conflict, InvalidRequest } from '../../errors.js'
import type { InvoiceStatus } from './schemas.js'

/**
 * Which statuses a caller sets, and which only payments do (docs/invoices.md has the table).
 * A caller creates an invoice as DRAFT or OPEN and moves it among DRAFT, OPEN and PASTDUE;
 * PAID and PARTIALLYPAID are set by payments alone, and a PAID invoice is final.
 */

export const CREATE_STATUSES: readonly InvoiceStatus[] = ['DRAFT', 'OPEN']
const SET_BY_PAYMENTS: readonly InvoiceStatus[] = ['PAID', 'PARTIALLYPAID']

/** The 400 for a create asking for a status other than DRAFT or OPEN. */
export function createRefusal(status: InvoiceStatus): InvalidRequest | undefined {
  if (CREATE_STATUSES.includes(status)) return undefined
  return new InvalidRequest(`status must be DRAFT or OPEN when an invoice is created (${status} is ${SET_BY_PAYMENTS.includes(status) ? 'set by payments' : 'set by a PUT on an OPEN invoice'})`)
}

/**
 * Why a PUT may not move the invoice from `from` to `to` (undefined when it may): 409 for what
 * the invoice's state forbids, 400 for a status only payments set.
 */
export function transitionRefusal(from: InvoiceStatus, to: InvoiceStatus, amountPaid: bigint): InvalidRequest | Conflict | undefined {
  if (from === 'PAID') return new Conflict('A PAID invoice cannot be changed')
  if (from === to) return undefined
  if (SET_BY_PAYMENTS.includes(to)) return new InvalidRequest(`status ${to} is set by payments, not by a PUT`)
  if (from === 'PARTIALLYPAID') return new Conflict(`A PARTIALLYPAID invoice cannot be moved to ${to}: part of it is paid`)
  if (from === 'DRAFT' && to === 'PASTDUE') return new Conflict('A DRAFT invoice cannot be PASTDUE: open it first')
  if (to === 'DRAFT' && amountPaid > 0n) return new Conflict(`An invoice that is ${from} and has payments cannot go back to DRAFT`)
  return undefined
}
