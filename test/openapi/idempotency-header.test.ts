// vitest: sqlite project only — the served document is built from the schemas, whatever the backend.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OPERATIONS } from '../../src/resources/index.js'
import { PUBLIC } from '../../src/resources/manifest.js'
import { startTestServer, type TestServer } from '../helper.js'

interface Operation {
  parameters?: { $ref?: string; name?: string }[]
  responses: Record<string, unknown>
  security?: unknown[]
}

interface Document {
  paths: Record<string, Record<string, Operation>>
  components: { parameters?: Record<string, { name: string; in: string; required: boolean; schema: unknown }> }
}

let server: TestServer
let document: Document
beforeAll(async () => {
  server = await startTestServer()
  document = (await server.request<Document>('GET', '/api/v0/openapi.json')).body
})
afterAll(async () => server.close())

describe('the document declares Idempotency-Key where the server takes it', () => {
  it('every authenticated POST takes the optional header and lists 409 and 422; no other operation does', async () => {
    expect(document.components.parameters?.IdempotencyKey).toMatchObject({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    })
    let posts = 0
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const declares = (operation.parameters ?? []).some((parameter) => parameter.$ref === '#/components/parameters/IdempotencyKey')
        const requires = (operation.parameters ?? []).some((parameter) => parameter.$ref === '#/components/parameters/RequiredIdempotencyKey')
        const label = `${method.toUpperCase()} ${path}`
        if (method === 'post') {
          posts++
          const manifestRequires = [...OPERATIONS.values()].some((known) => known.operationId === (operation as { operationId?: string }).operationId && known.idempotencyKey === 'required')
          expect(declares, label).toBe(!manifestRequires)
          expect(requires, label).toBe(manifestRequires)
          expect(Object.keys(operation.responses), label).toEqual(expect.arrayContaining(['409', '422']))
        } else {
          expect(declares || requires, label).toBe(false)
        }
      }
    }
    expect(document.components.parameters?.RequiredIdempotencyKey).toMatchObject({ name: 'idempotency-key', in: 'header', required: true })
    // every authenticated POST of the manifests is in the document
    expect(posts).toBe([...OPERATIONS.values()].filter((operation) => operation.method === 'POST' && operation.scope !== PUBLIC).length)
  })
})
