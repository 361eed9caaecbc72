import { Ajv2020 } from 'ajv/dist/2020.js'
import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventDeclarationProblems, eventOperationId } from '../../src/http/openapi.js'
import { EVENT_TYPES, RESOURCES } from '../../src/resources/index.js'
import { defineManifest } from '../../src/resources/manifest.js'
import { defineResource } from '../../src/resources/resource.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * The document's `webhooks` section (OpenAPI 3.1): one entry per event type of RESOURCES, each the
 * POST a webhook receives, its body the envelope (component Event) with the `data` schema its
 * resource declares (Resource.events). An event type without a declared schema fails here.
 */

interface SchemaObject {
  $ref?: string
  allOf?: SchemaObject[]
  properties?: Record<string, SchemaObject>
  const?: unknown
  [keyword: string]: unknown
}

interface WebhookEntry {
  post: {
    operationId: string
    summary: string
    security: unknown[]
    parameters: { name: string; in: string; required: boolean }[]
    requestBody: { required: boolean; content: Record<string, { schema: SchemaObject }> }
    responses: Record<string, unknown>
  }
}

interface Document {
  webhooks: Record<string, WebhookEntry>
  components: { schemas: Record<string, SchemaObject> }
}

let server: TestServer
let key: TestKey
let document: Document
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
  document = (await server.request<Document>('GET', '/api/v0/openapi.json')).body
})
afterAll(async () => server.close())

/** The schema of the body an event of `type` is delivered with, as the document says. */
function bodySchema(type: string): SchemaObject {
  const schema = document.webhooks[type]?.post.requestBody.content['application/json']?.schema
  if (schema === undefined) throw new Error(`the document has no webhooks entry for ${type}`)
  return schema
}

describe("the resources' event declarations", () => {
  it('every event type of every resource declares the schema of its data, and none declares a type its manifest does not list', () => {
    expect(eventDeclarationProblems(RESOURCES)).toEqual([])
  })

  it('an event type without a declared data schema is named, with what to add and where; a schema for an unlisted type too', () => {
    const manifest = defineManifest({ name: 'gadgets', scopes: ['gadget:read'], eventTypes: ['gadget.created', 'gadget.updated'], operations: [] })
    const gadgets = defineResource({ manifest, routes: async () => {}, events: { 'gadget.created': Type.Object({}), 'gadget.exploded': Type.Object({}) } })
    expect(eventDeclarationProblems([gadgets])).toEqual([
      "resource gadgets emits gadget.updated but declares no schema for its data: add events: { 'gadget.updated': <the schema of its data, usually the resource's response schema> } to its Resource (src/resources/gadgets/index.ts)",
      "resource gadgets declares a data schema for gadget.exploded, which its manifest's eventTypes does not list (src/resources/gadgets/manifest.ts)",
    ])
    expect(eventDeclarationProblems([defineResource({ manifest, routes: async () => {} })])).toHaveLength(2)
  })
})

describe("the document's webhooks section", () => {
  it('has exactly the event types of RESOURCES, in their order', () => {
    expect(Object.keys(document.webhooks)).toEqual([...EVENT_TYPES])
  })

  it("each is a POST without an API key, with the Standard Webhooks headers, the envelope and its resource's data schema", () => {
    for (const resource of RESOURCES) {
      for (const type of resource.manifest.eventTypes) {
        const entry = document.webhooks[type]
        if (entry === undefined) throw new Error(`no entry for ${type}`)
        expect(entry.post.operationId).toBe(eventOperationId(type))
        expect(entry.post.security).toEqual([])
        expect(entry.post.parameters.map((parameter) => [parameter.name, parameter.in, parameter.required])).toEqual([
          ['webhook-id', 'header', true],
          ['webhook-timestamp', 'header', true],
          ['webhook-signature', 'header', true],
        ])
        expect(Object.keys(entry.post.requestBody.content)).toEqual(['application/json', 'application/jose'])
        const [envelope, specific] = bodySchema(type).allOf ?? []
        expect(envelope).toEqual({ $ref: '#/components/schemas/Event' })
        expect(specific?.properties?.type?.const).toBe(type)
        const declared = resource.events?.[type]
        const id = declared !== undefined && '$id' in declared ? declared.$id : undefined
        expect(typeof id, `${type}: declare the schema of its data, with an $id, in src/resources/${resource.manifest.name}/index.ts (Resource.events)`).toBe('string')
        expect(specific?.properties?.data).toEqual({ $ref: `#/components/schemas/${String(id)}` })
        expect(entry.post.summary).toBe(`data: ${String(id)}`)
        expect(document.components.schemas[String(id)], `component ${String(id)}`).toBeDefined()
      }
    }
  })

  it('the envelope names every event type and requires id, type, created_at and data', () => {
    const envelope = document.components.schemas.Event
    expect(envelope).toMatchObject({ type: 'object', required: ['id', 'type', 'created_at', 'data'] })
    expect(envelope?.properties?.type).toMatchObject({ enum: [...EVENT_TYPES] })
  })

  it('the events the API really emits (every resource in reach, both backends) validate against their entry', async () => {
    const webhook = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'all events', url: 'https://example.com/hook' } })
    expect(webhook.status).toBe(201)
    expect((await server.request('PATCH', `/api/v0/webhooks/${webhook.body.id}`, { key, body: { name: 'renamed' } })).status).toBe(200)
    expect((await server.request('POST', `/api/v0/webhooks/${webhook.body.id}/test`, { key })).status).toBe(202)
    const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', {
      key,
      body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+14155550123', email: 'ada@example.com' },
    })
    expect(customer.status).toBe(201)
    expect((await server.request('PATCH', `/api/v0/customers/${customer.body.id}`, { key, body: { customer_type: 'Startup' } })).status).toBe(200)
    // The sandbox's: a live liquidation address takes a receiving address of the platform, which this server has none of.
    const sandboxKey = await server.createKey({ appId: key.appId, environment: 'development' })
    const address = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses`, {
      key: sandboxKey,
      body: { chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_acct_1' },
    })
    expect(address.status).toBe(201)
    const deposit = await server.request('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses/${address.body.id}/simulate_deposit`, {
      key: sandboxKey,
      body: { amount: '12.5' },
    })
    expect(deposit.status).toBe(201)
    const tax = await server.request<{ id: string }>('POST', '/api/v0/taxes', { key, body: { name: 'VAT', percentage: 20, description: null } })
    expect(tax.status).toBe(201)
    expect((await server.request('PUT', `/api/v0/taxes/${tax.body.id}`, { key, body: { percentage: 21 } })).status).toBe(200)
    expect((await server.request('DELETE', `/api/v0/taxes/${tax.body.id}`, { key })).status).toBe(200)

    const events = await server.app.db.selectFrom('events').select(['type', 'payload']).where('app_id', '=', key.appId).execute()
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true })
    const seen = new Set<string>()
    for (const event of events) {
      const validate = ajv.compile({ ...bodySchema(event.type), components: document.components })
      const body: unknown = JSON.parse(event.payload)
      expect(validate(body) ? [] : validate.errors, `${event.type}: ${event.payload}`).toEqual([])
      seen.add(event.type)
    }
    expect([...seen].sort()).toEqual(
      [
        'customer.created',
        'customer.updated',
        'liquidation_address.created',
        'liquidation_address.drain.created',
        'tax.created',
        'tax.deleted',
        'tax.updated',
        'webhook.created',
        'webhook.test',
        'webhook.updated',
      ].sort(),
    )
  })
})
