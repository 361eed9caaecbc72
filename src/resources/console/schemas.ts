import { Type, type Static } from 'typebox'

const EXAMPLE = { url: 'https://pay.example.com/console/open/Vn2o1Jm9yP3qEo4p0m8qY1h0f3u7TqC1cK5rX9b2Z6w', role: 'viewer', expires_at: '2026-11-29T12:45:00.000Z' } as const

/** What a console link request asks for: who the session acts as, and how long the link may wait to be opened. */
export const CreateConsoleLinkBody = Type.Object(
  {
    role: Type.Optional(Type.Union([Type.Literal('viewer'), Type.Literal('admin')], { default: 'viewer', description: 'viewer reads; admin also resends, replays and changes keys', examples: ['admin'] })),
    ttl: Type.Optional(Type.String({ maxLength: 10, default: '15m', description: 'How long the link may wait to be opened: 1 minute to 24 hours, as seconds or with a unit (90s, 15m, 1h)', examples: ['15m'] })),
  },
  { additionalProperties: false },
)
export type CreateConsoleLinkBody = Static<typeof CreateConsoleLinkBody>

/** A single-use link to the application's console, shown this once. */
export const ConsoleLinkSchema = Type.Object(
  {
    url: Type.String({ format: 'uri', description: 'Opens one console session, once, before expires_at; give it to one person', examples: [EXAMPLE.url] }),
    role: Type.Union([Type.Literal('viewer'), Type.Literal('admin')], { examples: [EXAMPLE.role] }),
    expires_at: Type.String({ format: 'date-time', description: 'After this the link is refused', examples: [EXAMPLE.expires_at] }),
  },
  { $id: 'ConsoleLink' },
)
export type ConsoleLink = Static<typeof ConsoleLinkSchema>
