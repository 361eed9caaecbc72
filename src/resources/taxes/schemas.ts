import { Type, type Static } from 'typebox'
import { Pagination, Timestamp, UuidParam } from '../../schemas/common.js'

export const TaxSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    percentage: Type.Number(),
    active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Tax' },
)
export type Tax = Static<typeof TaxSchema>

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  // Free text: tab and line breaks allowed.
  description: Type.String({ maxLength: 255, 'x-free-text': true }),
  percentage: Type.Number({ minimum: 0, maximum: 100 }),
  active: Type.Boolean(),
  appIds: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 }),
}

export const CreateTaxBody = Type.Object(
  {
    name: fields.name,
    percentage: fields.percentage,
    description: Type.Optional(fields.description),
    active: Type.Optional(Type.Boolean({ default: true })),
    appIds: Type.Optional(fields.appIds),
  },
  { additionalProperties: false },
)
export type CreateTaxBody = Static<typeof CreateTaxBody>

export const UpdateTaxBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    percentage: Type.Optional(fields.percentage),
    description: Type.Optional(fields.description),
    active: Type.Optional(fields.active),
    appIds: Type.Optional(fields.appIds),
  },
  { additionalProperties: false },
)
export type UpdateTaxBody = Static<typeof UpdateTaxBody>

export const TaxParams = Type.Object({ id: UuidParam('tax') })

export const ListTaxesQuery = Type.Object({
  ...Pagination,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'partial, case-insensitive match' })),
  active: Type.Optional(Type.Boolean()),
})
export type ListTaxesQuery = Static<typeof ListTaxesQuery>
