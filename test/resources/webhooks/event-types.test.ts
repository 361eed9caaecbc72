import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EVENT_TYPES } from '../../../src/resources/index.js'
import type { CreatedWebhook as Webhook } from '../../../src/resources/webhooks/schemas.js'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'

// event_types: the event types a webhook receives (null: all of them), on create and PATCH,
// checked against the catalogue of the manifests. What the fan-out does with it is in
// test/delivery/event-type-filters.test.ts.

let server: TestServer
let key: TestKey
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
})
afterAll(async () => server.close())

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

async function createWebhook(body: Record<string, unknown> = {}): Promise<Webhook> {
  const res = await server.request<Webhook>('POST', '/api/v0/webhooks', { key, body: { name: 'orders', url: 'https://example.com/hooks', ...body } })
  expect(res.status, res.text).toBe(201)
  return res.body
}

const storedColumn = async (id: string) => (await server.app.db.selectFrom('webhooks').select('event_types').where('id', '=', id).executeTakeFirstOrThrow()).event_types
const webhookCount = async () => (await server.app.db.selectFrom('webhooks').select('id').where('app_id', '=', key.appId).execute()).length
const get = async (id: string) => (await server.request<Webhook>('GET', `/api/v0/webhooks/${id}`, { key })).body
const patch = (id: string, body: Record<string, unknown>) => server.request<Webhook & { message?: string }>('PATCH', `/api/v0/webhooks/${id}`, { key, body })

describe('the catalogue', () => {
  it('is EVENT_TYPES, derived from RESOURCES: the document lists every event type, and only them', async () => {
    const res = await server.request<{ components: { schemas: Record<string, unknown> }; paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: { event_types: { items: { enum: string[] } } } } }> } }>> }>('GET', '/api/v0/openapi.json')
    const body = res.body.paths['/api/v0/webhooks']?.post?.requestBody?.content['application/json']?.schema
    expect(body?.properties.event_types.items.enum).toEqual(EVENT_TYPES)
  })
})

describe('POST /api/v0/webhooks with event_types', () => {
  it('201 with the list, as GET and the list answer it; stored as a JSON array', async () => {
    const created = await createWebhook({ event_types: ['tax.created', 'customer.created'] })
    expect(created.event_types).toEqual(['tax.created', 'customer.created'])
    expect((await get(created.id)).event_types).toEqual(['tax.created', 'customer.created'])
    const listed = await server.request<Webhook[]>('GET', '/api/v0/webhooks?take=100', { key })
    expect(listed.body.find((webhook) => webhook.id === created.id)?.event_types).toEqual(['tax.created', 'customer.created'])
    expect(await storedColumn(created.id)).toBe('["tax.created","customer.created"]')
  })

  it('absent or null: every event type (event_types null), stored as NULL', async () => {
    for (const body of [{}, { event_types: null }]) {
      const created = await createWebhook(body)
      expect(created.event_types).toBeNull()
      expect((await get(created.id)).event_types).toBeNull()
      expect(await storedColumn(created.id)).toBeNull()
    }
  })

  it('accepts every catalogue type, alone and all in one list', async () => {
    for (const type of EVENT_TYPES) expect((await createWebhook({ event_types: [type] })).event_types).toEqual([type])
    expect((await createWebhook({ event_types: [...EVENT_TYPES] })).event_types).toEqual([...EVENT_TYPES])
  })

  const refused: [string, unknown, string][] = [
    ['an unknown type', ['tax.created', 'tax.exploded'], 'event_types[1] is not an event type: "tax.exploded"'],
    ['two unknown types', ['nope', 'customer.created', 'Tax.Created'], 'event_types[0] is not an event type: "nope"; event_types[2] is not an event type: "Tax.Created"'],
    ['a type twice', ['tax.created', 'customer.created', 'tax.created'], 'event_types[2] lists "tax.created" again: list each event type once'],
    [
      'an empty list',
      [],
      'event_types must list at least one event type: leave it out or send null to receive every event type (to receive none, set isActive to false)',
    ],
    ['an empty string', [''], 'event_types[0] is not an event type: ""'],
    ['a string, not a list', 'tax.created', 'event_types must be an array of event types (strings), or null for every event type'],
    ['an object, not a list', { 'tax.created': true }, 'event_types must be an array of event types (strings), or null for every event type'],
    ['a number in the list', [1], 'event_types[0] must be a string'],
    ['more items than the catalogue holds', [...EVENT_TYPES, 'tax.created'], `event_types must contain no more than ${EVENT_TYPES.length} elements`],
  ]
  it.each(refused)('400 for %s, naming it, and nothing is stored', async (_name, eventTypes, message) => {
    const before = await webhookCount()
    const res = await server.request<{ statusCode: number; message: string }>('POST', '/api/v0/webhooks', {
      key,
      body: { name: 'orders', url: 'https://example.com/hooks', event_types: eventTypes },
    })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain(message)
    expect(await webhookCount()).toBe(before)
  })

  it('an unknown type: the message lists the event types there are', async () => {
    const res = await server.request<{ message: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'o', url: 'https://example.com/h', event_types: ['order.paid'] } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: `event_types[0] is not an event type: "order.paid" (event types: ${EVENT_TYPES.join(', ')})` })
  })

  it('a duplicate names the type, without the catalogue', async () => {
    const res = await server.request<{ message: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'o', url: 'https://example.com/h', event_types: ['tax.updated', 'tax.updated'] } })
    expect(res.body.message).toBe('event_types[1] lists "tax.updated" again: list each event type once')
  })
})

describe('PATCH /api/v0/webhooks/{id} with event_types', () => {
  it('sets, changes and (with null) clears the list; a PATCH without it leaves it as it is', async () => {
    const created = await createWebhook()
    await new Promise((resolve) => setTimeout(resolve, 5))
    const set = await patch(created.id, { event_types: ['customer.updated'] })
    expect(set.status).toBe(200)
    expect(set.body).toMatchObject({ event_types: ['customer.updated'], updated_at: expect.stringMatching(ISO_MS) })
    expect(set.body.updated_at > created.updated_at).toBe(true)

    const changed = await patch(created.id, { event_types: ['tax.deleted', 'liquidation_address.created'] })
    expect(changed.body.event_types).toEqual(['tax.deleted', 'liquidation_address.created'])

    const renamed = await patch(created.id, { name: 'renamed' })
    expect(renamed.body).toMatchObject({ name: 'renamed', event_types: ['tax.deleted', 'liquidation_address.created'] })

    const cleared = await patch(created.id, { event_types: null })
    expect(cleared.status).toBe(200)
    expect(cleared.body.event_types).toBeNull()
    expect((await get(created.id)).event_types).toBeNull()
    expect(await storedColumn(created.id)).toBeNull()
  })

  it('400 for an unknown type, a repeat or an empty list, and the list stays as it was', async () => {
    const created = await createWebhook({ event_types: ['tax.created'] })
    for (const [eventTypes, message] of [
      [['tax.created', 'tax.gone'], 'event_types[1] is not an event type: "tax.gone"'],
      [['customer.created', 'customer.created'], 'event_types[1] lists "customer.created" again'],
      [[], 'event_types must list at least one event type'],
    ] as const) {
      const res = await patch(created.id, { event_types: eventTypes, name: 'changed' })
      expect(res.status).toBe(400)
      expect(res.body.message).toContain(message)
      expect(await get(created.id)).toMatchObject({ name: 'orders', event_types: ['tax.created'], updated_at: created.updated_at })
    }
  })
})

describe('the OpenAPI document', () => {
  interface SchemaNode {
    type?: string | string[]
    properties?: Record<string, SchemaNode>
    items?: SchemaNode
    enum?: string[]
    anyOf?: SchemaNode[]
    minItems?: number
    maxItems?: number
    uniqueItems?: boolean
    $ref?: string
  }
  interface Document {
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: SchemaNode }> } }>>
    components: { schemas: Record<string, SchemaNode> }
  }

  it('shows event_types on the webhook object and in the create and update bodies, with the catalogue as its enum', async () => {
    const document = (await server.request<Document>('GET', '/api/v0/openapi.json')).body
    const webhook = document.components.schemas.Webhook?.properties?.event_types
    expect(webhook?.anyOf?.map((branch) => branch.type)).toEqual(['array', 'null'])
    for (const method of ['post', 'patch']) {
      const path = method === 'post' ? '/api/v0/webhooks' : '/api/v0/webhooks/{id}'
      const body = document.paths[path]?.[method]?.requestBody?.content['application/json']?.schema
      expect(body?.properties?.event_types, method).toMatchObject({
        type: ['array', 'null'],
        items: { type: 'string', enum: [...EVENT_TYPES] },
        minItems: 1,
        maxItems: EVENT_TYPES.length,
        uniqueItems: true,
      })
    }
  })
})
