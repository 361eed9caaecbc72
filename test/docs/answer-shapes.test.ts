// vitest: sqlite project only — it compares text with the served document, which no backend changes.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type Document, type Schema, SECTION_START } from '../../scripts/operation-examples.js'
import { startTestServer, type TestServer } from '../helper.js'
import { ROOT } from '../processes.js'
import { fences } from './markdown.js'

/**
 * The answers the guides show by hand (a JSON object in a ```json block, outside the rendered
 * "Every operation" sections, which are the document's own) have the fields of a served schema:
 * each is compared with the schema of the document whose fields it shares most, and a field that
 * schema does not have is a disagreement. A block that is not an answer (a file's format) says
 * so after its info string: ```json not-an-answer.
 */

let server: TestServer
let document: Document
beforeAll(async () => {
  server = await startTestServer()
  document = (await server.request<Document>('GET', '/api/v0/openapi.json')).body
})
afterAll(async () => server.close())

function resolve(schema: Schema): Schema {
  if (schema.$ref === undefined) return schema
  return document.components.schemas[schema.$ref.replace('#/components/schemas/', '')] ?? {}
}

/** Every object schema an answer may be: the components, each 2xx answer's, their items and nested objects. */
function answerSchemas(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>()
  const add = (name: string, schema: Schema, depth: number) => {
    const resolved = resolve(schema)
    if (depth > 3) return
    for (const branch of [...(resolved.anyOf ?? []), ...(resolved.allOf ?? [])]) add(name, branch, depth + 1)
    if (resolved.items !== undefined) add(`${name}[]`, resolved.items, depth + 1)
    if (resolved.properties === undefined) return
    found.set(name, new Set([...(found.get(name) ?? []), ...Object.keys(resolved.properties)]))
    for (const [field, property] of Object.entries(resolved.properties)) add(`${name}.${field}`, property, depth + 1)
  }
  for (const [name, schema] of Object.entries(document.components.schemas)) add(name, schema, 0)
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      for (const [code, response] of Object.entries(operation.responses)) {
        const schema = response.content?.['application/json']?.schema
        if (/^2/.test(code) && schema !== undefined) add(`${method.toUpperCase()} ${path} ${code}`, schema, 0)
      }
    }
  }
  return found
}

it("each guide's hand-written answers have only the fields of the served schema they show", () => {
  const schemas = answerSchemas()
  const disagreements: string[] = []
  let compared = 0
  for (const file of readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md'))) {
    const text = readFileSync(join(ROOT, 'docs', file), 'utf8')
    const start = text.indexOf(SECTION_START)
    for (const fence of fences(start === -1 ? text : text.slice(0, start))) {
      if (fence.info !== 'json' || fence.meta.includes('not-an-answer')) continue
      let value: unknown
      try {
        value = JSON.parse(fence.text)
      } catch {
        continue
      }
      const answer: unknown = Array.isArray(value) ? value[0] : value
      if (answer === null || typeof answer !== 'object') continue
      const fields = Object.keys(answer)
      // Too few fields to say which schema it shows.
      if (fields.length < 3) continue
      let best: { name: string; shared: number; unknown: string[] } = { name: '', shared: 0, unknown: fields }
      for (const [name, known] of schemas) {
        const shared = fields.filter((field) => known.has(field)).length
        if (shared > best.shared) best = { name, shared, unknown: fields.filter((field) => !known.has(field)) }
      }
      compared++
      if (best.unknown.length > 0) disagreements.push(`docs/${file}:${fence.line}: ${best.unknown.join(', ')} not in ${best.name || 'any served schema'}`)
    }
  }
  expect(disagreements).toEqual([])
  expect(compared).toBeGreaterThanOrEqual(8)
})
