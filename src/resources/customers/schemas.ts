import { Type, type Static } from 'typebox'
import { Pagination, Timestamp, UuidParam } from '../../schemas/common.js'

export const CUSTOMER_TYPES = ['Individual', 'Startup', 'Small Business', 'Medium Business', 'Enterprise', 'Non-Profit', 'Government'] as const
export const CUSTOMER_STATUSES = ['ACTIVE', 'BLACKLISTED', 'DEACTIVATED', 'DELETED'] as const

/** The customer the docs page shows (the schemas' examples). */
export const CUSTOMER_EXAMPLE = {
  id: 'ecc58e04-2544-46c2-85ff-05567e53cf9d',
  first_name: 'Ada',
  last_name: 'Lovelace',
  phone_number: '+14155550123',
  email: 'ada.lovelace@example.com',
} as const

const customerType = Type.Enum([...CUSTOMER_TYPES])
const status = Type.Enum([...CUSTOMER_STATUSES])

export const CustomerSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', examples: [CUSTOMER_EXAMPLE.id] }),
    first_name: Type.String({ examples: [CUSTOMER_EXAMPLE.first_name] }),
    last_name: Type.String({ examples: [CUSTOMER_EXAMPLE.last_name] }),
    phone_number: Type.String({ examples: [CUSTOMER_EXAMPLE.phone_number] }),
    email: Type.Union([Type.String({ examples: [CUSTOMER_EXAMPLE.email] }), Type.Null()]),
    customer_type: Type.Union([customerType, Type.Null()]),
    status,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Customer' },
)
export type Customer = Static<typeof CustomerSchema>

const fields = {
  first_name: Type.String({ minLength: 1, maxLength: 100, examples: [CUSTOMER_EXAMPLE.first_name] }),
  last_name: Type.String({ minLength: 1, maxLength: 100, examples: [CUSTOMER_EXAMPLE.last_name] }),
  phone_number: Type.String({ minLength: 1, maxLength: 20, examples: [CUSTOMER_EXAMPLE.phone_number] }),
  email: Type.String({ format: 'email', maxLength: 255, examples: [CUSTOMER_EXAMPLE.email] }),
  customer_type: customerType,
  status,
}

export const CreateCustomerBody = Type.Object(
  {
    first_name: fields.first_name,
    last_name: fields.last_name,
    phone_number: fields.phone_number,
    email: Type.Optional(fields.email),
    customer_type: Type.Optional(fields.customer_type),
    status: Type.Optional(Type.Enum([...CUSTOMER_STATUSES], { default: 'ACTIVE' })),
  },
  { additionalProperties: false },
)
export type CreateCustomerBody = Static<typeof CreateCustomerBody>

export const UpdateCustomerBody = Type.Object(
  {
    first_name: Type.Optional(fields.first_name),
    last_name: Type.Optional(fields.last_name),
    phone_number: Type.Optional(fields.phone_number),
    email: Type.Optional(fields.email),
    customer_type: Type.Optional(fields.customer_type),
    status: Type.Optional(fields.status),
  },
  { additionalProperties: false },
)
export type UpdateCustomerBody = Static<typeof UpdateCustomerBody>

export const CustomerParams = Type.Object({ id: UuidParam('customer') })

export const ListCustomersQuery = Type.Object({
  ...Pagination,
  status: Type.Optional(status),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'partial, case-insensitive match on the full name ("first last")' })),
  email: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'exact, case-insensitive match' })),
})
export type ListCustomersQuery = Static<typeof ListCustomersQuery>

export const CustomerListSchema = Type.Object(
  {
    data: Type.Array(CustomerSchema),
    total: Type.Integer(),
    skip: Type.Integer(),
    take: Type.Integer(),
  },
  { $id: 'CustomerList' },
)
export type CustomerList = Static<typeof CustomerListSchema>
