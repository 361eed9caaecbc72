import type { CustomerRow } from './repository.js'
import type { Customer } from './schemas.js'

/** The API's customer object from its row: kept out of the repository, which knows no API schema. */
export function toCustomer(row: CustomerRow): Customer {
  return {
    id: row.id,
    first_name: row.first_name,
    last_name: row.last_name,
    phone_number: row.phone_number,
    email: row.email,
    customer_type: row.customer_type as Customer['customer_type'],
    status: row.status as Customer['status'],
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}
