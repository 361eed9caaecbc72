import type { TaxRow } from './repository.js'
import type { Tax } from './schemas.js'

/** The API's tax object from its row: kept out of the repository, which knows no API schema. */
export function toTax(row: TaxRow): Tax {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    percentage: row.percentage,
    active: row.active === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}
