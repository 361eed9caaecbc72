import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * The examples the docs page shows are real: every field of the core resources' schemas has one
 * (no "string" placeholders), the request bodies built from them the way Swagger UI builds its
 * "Example Value" are accepted by the server, and each documented error example is what the
 * server answers for that status.
 */

/** The tags whose schemas carry examples everywhere (the core resources; TAG_ORDER in src/plugins/openapi.ts). */
const EXAMPLED_TAGS = ['health', 'customers', 'liquidation addresses', 'webhooks', 'taxes']

interface Schema {
  type?: string | string[]
  $ref?: string
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  anyOf?: Schema[]
  allOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  default?: unknown
  examples?: unknown[]
  format?: string
}

interface Media {
  schema?: Schema
  example?: Record<string, unknown>
}

interface Operation {
  operationId: string
  tags?: string[]
  parameters?: { in: string; name: string; schema?: Schema }[]
  requestBody?: { content: Record<string, Media> }
  responses: Record<string, { content?: Record<string, Media> }>
}

interface Document {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Schema> }
  webhooks: Record<string, { post: Operation }>
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

/** Every operation of the core tags: [method, path, operation]. */
function coreOperations(): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => operation.tags?.some((tag) => EXAMPLED_TAGS.includes(tag)) === true)
      .map(([method, operation]): [string, string, Operation] => [method.toUpperCase(), path, operation]),
  )
}

function resolve(schema: Schema): Schema {
  if (schema.$ref === undefined) return schema
  const target = document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]
  if (target === undefined) throw new Error(`unresolved ${schema.$ref}`)
  return target
}

/** Where a schema would show a placeholder ("string", 0.0) instead of a real value: the JSON pointers of its fields without an example. */
function placeholders(schema: Schema, at: string): string[] {
  const resolved = resolve(schema)
  if (resolved.examples !== undefined || resolved.enum !== undefined || resolved.const !== undefined) return []
  if (resolved.anyOf !== undefined) return resolved.anyOf.flatMap((branch, i) => placeholders(branch, `${at}/anyOf/${i}`))
  if (resolved.allOf !== undefined) return resolved.allOf.flatMap((branch, i) => placeholders(branch, `${at}/allOf/${i}`))
  const types = Array.isArray(resolved.type) ? resolved.type : [resolved.type]
  if (types.includes('string') || types.includes('number')) return [at]
  if (types.includes('array') && resolved.items !== undefined) return placeholders(resolved.items, `${at}/items`)
  return Object.entries(resolved.properties ?? {}).flatMap(([name, property]) => placeholders(property, `${at}/${name}`))
}

/** The value Swagger UI's "Example Value" shows for a schema: its example, else its default or first enum value, else built from its parts. */
function sample(schema: Schema): unknown {
  const resolved = resolve(schema)
  if (resolved.examples !== undefined) return resolved.examples[0]
  if (resolved.const !== undefined) return resolved.const
  if (resolved.default !== undefined) return resolved.default
  if (resolved.enum !== undefined) return resolved.enum[0]
  if (resolved.anyOf?.[0] !== undefined) return sample(resolved.anyOf[0])
  const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type
  if (type === 'boolean') return true
  if (type === 'array') return resolved.items === undefined ? [] : [sample(resolved.items)]
  if (type === 'object' || resolved.properties !== undefined) {
    return Object.fromEntries(Object.entries(resolved.properties ?? {}).map(([name, property]) => [name, sample(property)]))
  }
  throw new Error(`no sample for ${JSON.stringify(resolved)}`)
}

/** A body's "Example Value": the body's own example (a schema's `examples` is given as its media type's `example`), else built from its fields. */
function bodySample(method: string, path: string): unknown {
  const media = document.paths[path]?.[method.toLowerCase()]?.requestBody?.content['application/json']
  if (media?.schema === undefined) throw new Error(`${method} ${path} has no JSON body`)
  return media.example ?? sample(media.schema)
}

describe('every field of the core schemas has an example', () => {
  it('request bodies and responses of every operation of health, customers, liquidation addresses, webhooks and taxes', () => {
    const missing = coreOperations().flatMap(([method, path, operation]) => [
      ...Object.entries(operation.requestBody?.content ?? {}).flatMap(([type, media]) =>
        media.schema === undefined ? [] : placeholders(media.schema, `${method} ${path} body ${type}`),
      ),
      ...Object.entries(operation.responses).flatMap(([code, response]) =>
        Object.values(response.content ?? {}).flatMap((media) => (media.schema === undefined ? [] : placeholders(media.schema, `${method} ${path} ${code}`))),
      ),
    ])
    expect(missing).toEqual([])
    expect(coreOperations().length).toBeGreaterThanOrEqual(25)
  })

  it('the error body, and each event of the webhooks section with its envelope and data', () => {
    expect(placeholders({ $ref: '#/components/schemas/Error' }, 'Error')).toEqual([])
    const events = Object.entries(document.webhooks)
      .filter(([type]) => ['webhook.', 'customer.', 'liquidation_address.created', 'tax.'].some((prefix) => type.startsWith(prefix)))
      .flatMap(([type, entry]) => placeholders(entry.post.requestBody?.content['application/json']?.schema ?? {}, type))
    expect(events).toEqual([])
  })
})

describe("the docs page's example bodies are accepted as they are", () => {
  it('create a customer, a liquidation address for it, a webhook and a tax; update each; rotate the secret', async () => {
    const customer = await server.request<{ id: string; first_name: string }>('POST', '/api/v0/customers', { key, body: bodySample('POST', '/api/v0/customers') })
    expect(customer.status, JSON.stringify(customer.body)).toBe(201)
    expect(customer.body.first_name).toBe('Ada')
    const addressBody = bodySample('POST', '/api/v0/customers/{customerId}/liquidation_addresses')
    const address = await server.request<{ address: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses`, { key, body: addressBody })
    expect(address.status, JSON.stringify(address.body)).toBe(201)
    expect(address.body.address).toBe((addressBody as { address: string }).address)
    const customerUpdate = await server.request('PATCH', `/api/v0/customers/${customer.body.id}`, { key, body: bodySample('PATCH', '/api/v0/customers/{id}') })
    expect(customerUpdate.status, JSON.stringify(customerUpdate.body)).toBe(200)

    const webhook = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: bodySample('POST', '/api/v0/webhooks') })
    expect(webhook.status, JSON.stringify(webhook.body)).toBe(201)
    const webhookUpdate = await server.request('PATCH', `/api/v0/webhooks/${webhook.body.id}`, { key, body: bodySample('PATCH', '/api/v0/webhooks/{id}') })
    expect(webhookUpdate.status, JSON.stringify(webhookUpdate.body)).toBe(200)
    const rotate = await server.request('POST', `/api/v0/webhooks/${webhook.body.id}/secret/rotate`, { key, body: bodySample('POST', '/api/v0/webhooks/{id}/secret/rotate') })
    expect(rotate.status, JSON.stringify(rotate.body)).toBe(200)

    const tax = await server.request<{ id: string }>('POST', '/api/v0/taxes', { key, body: bodySample('POST', '/api/v0/taxes') })
    expect(tax.status, JSON.stringify(tax.body)).toBe(201)
    const taxUpdate = await server.request('PUT', `/api/v0/taxes/${tax.body.id}`, { key, body: bodySample('PUT', '/api/v0/taxes/{id}') })
    expect(taxUpdate.status, JSON.stringify(taxUpdate.body)).toBe(200)
  })
})

describe('each documented error example is what the server answers', () => {
  /** The operation's path with `id` for its last path parameter and MISSING_UUID for the others. */
  function pathWith(path: string, id: string): string {
    const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1])
    return names.reduce<string>((built, name, i) => built.replace(`{${name}}`, i === names.length - 1 ? id : MISSING_UUID), path)
  }

  function example(operation: Operation, status: number): Record<string, unknown> | undefined {
    return operation.responses[String(status)]?.content?.['application/json']?.example
  }

  it('401 for a wrong secret, 403 for a key without the scope (an inactive key where any valid key will do)', async () => {
    const wrong: TestKey = { ...key, clientSecret: 'sk_wrong', headers: { ...key.headers, 'x-client-secret': 'sk_wrong' } }
    const scopeless = await server.createKey({ scopes: [] })
    const inactive = await server.createKey()
    await server.deactivate(inactive)
    let checked = 0
    for (const [method, path, operation] of coreOperations()) {
      const url = pathWith(path, MISSING_UUID)
      for (const [status, as] of [
        [401, wrong],
        [403, scopeless],
        [403, inactive],
      ] as const) {
        const expected = example(operation, status)
        if (expected === undefined) continue
        const isInactiveExample = expected.message === 'API key is inactive'
        if ((as === inactive) !== isInactiveExample) continue
        const res = await server.request(method, url, { key: as, ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} }) })
        expect(res.body, `${method} ${path} ${status}`).toEqual(expected)
        checked++
      }
    }
    expect(checked).toBeGreaterThanOrEqual(40)
  })

  it('400 for a malformed id or a body without its first required field; 404 for a missing resource (operations with one id)', async () => {
    let checked = 0
    for (const [method, path, operation] of coreOperations()) {
      const badRequest = example(operation, 400)
      if (badRequest !== undefined) {
        const hasId = path.includes('{')
        // A malformed id with the example body; without an id, the example body without its first required field.
        const firstRequired = operation.requestBody?.content['application/json']?.schema?.required?.[0]
        const body = operation.requestBody === undefined ? undefined : { ...(bodySample(method, path) as Record<string, unknown>) }
        if (!hasId && body !== undefined && firstRequired !== undefined) delete body[firstRequired]
        const res = await server.request(method, hasId ? pathWith(path, 'not-a-uuid') : path, { key, ...(body === undefined ? {} : { body }) })
        expect(res.body, `${method} ${path} 400`).toEqual(badRequest)
        checked++
      }
      const notFound = example(operation, 404)
      if (notFound !== undefined && path.split('{').length === 2) {
        const body = operation.requestBody === undefined ? {} : { body: bodySample(method, path) }
        const res = await server.request(method, pathWith(path, MISSING_UUID), { key, ...body })
        expect(res.body, `${method} ${path} 404`).toEqual(notFound)
        checked++
      }
    }
    expect(checked).toBeGreaterThanOrEqual(25)
  })
})
