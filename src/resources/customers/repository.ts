import { type Selectable, type Updateable, sql } from 'kysely'
import type { Db } from '../../db/database.js'
import { isUniqueViolation } from '../../db/errors.js'
import { containsIgnoringCase } from '../../db/like.js'
import { newestFirstPage } from '../../db/newest-first-page.js'
import { type BoundQuery, PreparedQuery } from '../../db/prepared.js'
import type { CustomersTable } from './tables.js'
import { newId, nowIso } from '../../db/time.js'
import { Conflict } from '../../errors.js'

export type CustomerRow = Selectable<CustomersTable>

/** A new customer, as create reads it (the route's validated body is one). */
export interface NewCustomer {
  first_name: string
  last_name: string
  phone_number: string
  email?: string | undefined
  customer_type?: string | undefined
  status?: string | undefined
}

/** The fields an update writes: every one it is given (a PATCH body names only those it changes). */
export interface CustomerChanges {
  first_name?: string | undefined
  last_name?: string | undefined
  phone_number?: string | undefined
  email?: string | undefined
  customer_type?: string | undefined
  status?: string | undefined
}

/** What list filters on, and the page it returns. */
export interface CustomerFilter {
  status?: string | undefined
  /** exact, case-insensitive */
  email?: string | undefined
  /** partial, case-insensitive match on "first last" */
  name?: string | undefined
  skip?: number | undefined
  take?: number | undefined
}

const DUPLICATE_EMAIL = 'Customer with this email already exists'

function ownedCustomers(db: Db, appId: string) {
  return db.selectFrom('customers').where('app_id', '=', appId)
}

/** Every customer route and POST liquidation address look the customer up: built once (PreparedQuery). */
const FIND_CUSTOMER = new PreparedQuery<CustomerRow>(2, (db, appId, id) => ownedCustomers(db, appId).selectAll().where('id', '=', id))

/** Customers of one application; every query starts from `owned` (`ownedCustomers`). */
export class CustomersRepository {
  constructor(private readonly db: Db) {}

  private owned(appId: string, db: Db = this.db) {
    return ownedCustomers(db, appId)
  }

  async create(appId: string, input: NewCustomer): Promise<CustomerRow> {
    const now = nowIso()
    const row: CustomerRow = {
      id: newId(),
      app_id: appId,
      first_name: input.first_name,
      last_name: input.last_name,
      phone_number: input.phone_number,
      email: input.email ?? null,
      email_key: input.email?.toLowerCase() ?? null,
      customer_type: input.customer_type ?? null,
      status: input.status ?? 'ACTIVE',
      created_at: now,
      updated_at: now,
    }
    try {
      await this.db.insertInto('customers').values(row).execute()
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(DUPLICATE_EMAIL)
      throw error
    }
    return row
  }

  /** A page and the total, read on one snapshot so they agree even while others write. */
  async list(appId: string, query: CustomerFilter): Promise<{ rows: CustomerRow[]; total: number }> {
    return newestFirstPage(this.db, (tx) => {
      let filtered = this.owned(appId, tx)
      if (query.status !== undefined) filtered = filtered.where('status', '=', query.status)
      if (query.email !== undefined) filtered = filtered.where('email_key', '=', query.email.toLowerCase())
      if (query.name !== undefined) {
        const name = query.name
        filtered = filtered.where(() => containsIgnoringCase(sql<string>`first_name || ' ' || last_name`, name))
      }
      return filtered
    }, { skip: query.skip ?? 0, take: query.take ?? 10 })
  }

  async find(appId: string, id: string): Promise<CustomerRow | undefined> {
    return FIND_CUSTOMER.executeTakeFirst(this.db, appId, id.toLowerCase())
  }

  /** `find` as a statement, to send with others (`pipelined`). */
  lookup(appId: string, id: string): BoundQuery<CustomerRow> {
    return FIND_CUSTOMER.bind(this.db, appId, id.toLowerCase())
  }

  async update(appId: string, id: string, patch: CustomerChanges): Promise<CustomerRow | undefined> {
    const changes: Updateable<CustomersTable> = { ...patch }
    if (patch.email !== undefined) changes.email_key = patch.email.toLowerCase()
    // An update that names no field changes nothing, not even updated_at.
    if (Object.keys(changes).length === 0) return this.find(appId, id)
    try {
      return await this.db
        .updateTable('customers')
        .set({ ...changes, updated_at: nowIso() })
        .where('app_id', '=', appId)
        .where('id', '=', id.toLowerCase())
        .returningAll()
        .executeTakeFirst()
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(DUPLICATE_EMAIL)
      throw error
    }
  }
}
