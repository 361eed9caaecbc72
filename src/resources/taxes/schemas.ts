import { Type, type Static } from 'typebox'
import { Pagination, Timestamp, UuidParam } from '../../schemas/common.js'

/** The tax the docs page shows. */
const EXAMPLE = {
  id: '953850ec-e363-4e91-b1da-adc738d68836',
  name: 'California sales tax',
  description: 'State sales tax on taxable goods',
  percentage: 7.25,
  appId: 'ee60ee84-f6d9-41a4-9f72-41c7646070b7',
} as const

export const TaxSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', examples: [EXAMPLE.id] }),
    name: Type.String({ examples: [EXAMPLE.name] }),
    description: Type.Union([Type.String({ examples: [EXAMPLE.description] }), Type.Null()]),
    percentage: Type.Number({ examples: [EXAMPLE.percentage] }),
    active: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Tax' },
)
export type Tax = Static<typeof TaxSchema>

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100, examples: [EXAMPLE.name] }),
  // Free text: tab and line breaks allowed.
  description: Type.String({ maxLength: 255, 'x-free-text': true, examples: [EXAMPLE.description] }),
  percentage: Type.Number({ minimum: 0, maximum: 100, examples: [EXAMPLE.percentage] }),
  active: Type.Boolean(),
  appIds: Type.Array(Type.String({ minLength: 1, maxLength: 100, examples: [EXAMPLE.appId] }), { maxItems: 100 }),
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
