import { Type, type Static } from 'typebox'

const EXAMPLE = { display_name: 'Acme Widgets', brand_color: '#0f766e', support_email: 'billing@acme.example', logo_url: 'https://pay.example.com/brand-logos/0b6f1c52-4d0e-4a55-9f6c-9a1f2b3c4d5e' } as const

/** The merchant a payer sees on the hosted pages: each field as set, or its default (null for none). */
export const BrandingSchema = Type.Object(
  {
    display_name: Type.String({ description: "The name the pages show: the application's name until one is set", examples: [EXAMPLE.display_name] }),
    brand_color: Type.String({ pattern: '^#[0-9a-f]{6}$', description: 'The colour of the pages’ header band and Pay button (#1d4ed8 until one is set)', examples: [EXAMPLE.brand_color] }),
    support_email: Type.Union([Type.String({ format: 'email', examples: [EXAMPLE.support_email] }), Type.Null()], { description: 'Where the pages tell a payer to write with a question' }),
    logo_url: Type.Union([Type.String({ format: 'uri', examples: [EXAMPLE.logo_url] }), Type.Null()], { description: "The logo's URL on this server (PUT /branding/logo), or null: the pages show the name's initial" }),
  },
  { $id: 'Branding' },
)
export type Branding = Static<typeof BrandingSchema>

/** A field given as null (or an empty string) goes back to its default; a field left out stays. */
export const UpdateBrandingBody = Type.Object(
  {
    display_name: Type.Optional(Type.Union([Type.String({ maxLength: 80, examples: [EXAMPLE.display_name] }), Type.Null()])),
    brand_color: Type.Optional(Type.Union([Type.String({ maxLength: 7, examples: [EXAMPLE.brand_color] }), Type.Null()])),
    support_email: Type.Optional(Type.Union([Type.String({ maxLength: 254, examples: [EXAMPLE.support_email] }), Type.Null()])),
  },
  { additionalProperties: false },
)
export type UpdateBrandingBody = Static<typeof UpdateBrandingBody>
