/**
 * Every operation's example in docs/, rendered from the served OpenAPI document: the request
 * body is the document's example of it (the schemas' `examples`, as the docs page's example
 * body builds it), the answer the document's example of the first 2xx, the fields table and
 * the errors table the document's schema and responses. `npm run docs:examples` writes them into
 * the guides; test/docs/examples.test.ts fails when a guide's section is not what this renders,
 * and runs every example against a server.
 */
import type { ReferenceSchema } from '../src/http/reference-page.js'

/** A schema of the document: the shape the reference page reads (one description of it). */
export type Schema = ReferenceSchema

export interface Media {
  schema?: Schema
  example?: unknown
}

export interface Parameter {
  in?: string
  name?: string
  required?: boolean
  $ref?: string
  schema?: Schema
  example?: unknown
  examples?: Record<string, { value?: unknown }>
}

export interface Operation {
  operationId: string
  summary?: string
  tags?: string[]
  parameters?: Parameter[]
  requestBody?: { content: Record<string, Media> }
  responses: Record<string, { description?: string; content?: Record<string, Media> }>
}

export interface Document {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Schema> }
}

/** The guide each tag's operations are in. */
export const GUIDE_OF_TAG: Readonly<Record<string, string>> = {
  health: 'api.md',
  customers: 'api.md',
  'liquidation addresses': 'api.md',
  taxes: 'api.md',
  branding: 'api.md',
  webhooks: 'webhook-delivery.md',
  events: 'events.md',
  wallets: 'wallets-and-balances.md',
  balances: 'wallets-and-balances.md',
  'balance transactions': 'wallets-and-balances.md',
  'exchange rates': 'exchange-rates.md',
  drains: 'drains.md',
  deposits: 'drains.md',
  'receiving addresses': 'chains.md',
  transfers: 'transfers.md',
  'payment intents': 'transfers.md',
  'test payments': 'test-payments.md',
  products: 'products.md',
  invoices: 'invoices.md',
  'payment links': 'payment-links.md',
  console: 'console.md',
  held: 'operations.md',
}

export const SECTION_START = '<!-- operation examples: rendered from the OpenAPI document by `npm run docs:examples`; edit the schemas\' examples, not this section -->'
export const SECTION_END = '<!-- end of operation examples -->'

/** An operation as its guide shows it. */
export interface OperationExample {
  operationId: string
  method: string
  path: string
  guide: string
  /** the sh block, as the reader copies it */
  command: string
  /** the shell variables it reads besides BASE, KEY and SECRET (ids of the reader's own objects) */
  variables: string[]
  /** those of its path's parameters, in order */
  pathVariables: string[]
  /** the body sent, undefined without one */
  body: unknown
  status: number
  /** the documented answer, undefined when it has no JSON body */
  answer: unknown
  markdown: string
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function resolve(document: Document, schema: Schema): Schema {
  if (schema.$ref === undefined) return schema
  const target = document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]
  if (target === undefined) throw new Error(`unresolved ${schema.$ref}`)
  return target
}

/** The value the docs page's example body shows for a schema: its example, else its default or first enum value, else built from its parts. */
export function sample(document: Document, schema: Schema): unknown {
  const resolved = resolve(document, schema)
  if (resolved.examples !== undefined) return resolved.examples[0]
  if (resolved.const !== undefined) return resolved.const
  if (resolved.default !== undefined) return resolved.default
  if (resolved.enum !== undefined) return resolved.enum[0]
  if (resolved.anyOf?.[0] !== undefined) return sample(document, resolved.anyOf[0])
  if (resolved.allOf !== undefined) return Object.assign({}, ...resolved.allOf.map((part) => sample(document, part)))
  const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type
  if (type === 'boolean') return true
  if (type === 'integer' || type === 'number') return 0
  if (type === 'string') return 'string'
  if (type === 'null') return null
  if (type === 'array') return resolved.items === undefined ? [] : [sample(document, resolved.items)]
  if (type === 'object' || resolved.properties !== undefined) {
    return Object.fromEntries(Object.entries(resolved.properties ?? {}).map(([name, property]) => [name, sample(document, property)]))
  }
  return null
}

/** A body's example: the body's own (a schema's `examples` is given as its media type's `example`), else built from its fields. */
export function bodyExample(document: Document, operation: Operation): unknown {
  const media = operation.requestBody?.content['application/json']
  if (media?.schema === undefined) return undefined
  return media.example ?? sample(document, media.schema)
}

/** The first 2xx status (else the first status) and its JSON answer's example (undefined: no JSON body). */
export function answerExample(document: Document, operation: Operation): { status: number; answer: unknown } {
  // An operation that only refuses (the tax guards) documents its refusal.
  const codes = Object.keys(operation.responses).filter((candidate) => /^\d{3}$/.test(candidate)).sort()
  const code = codes.find((candidate) => candidate.startsWith('2')) ?? codes[0]
  if (code === undefined) throw new Error(`${operation.operationId} has no answer`)
  const media = operation.responses[code]?.content?.['application/json']
  return { status: Number(code), answer: media?.schema === undefined ? undefined : (media.example ?? sample(document, media.schema)) }
}

/** `customerId`, `customer_id`, `sourceWalletId` → CUSTOMER_ID, CUSTOMER_ID, WALLET_ID; `id` under the tag "payment intents" → PAYMENT_INTENT_ID. */
export function variableOf(name: string, tag: string): string {
  const singular = /(x|ss)es$/.test(tag) ? tag.slice(0, -2) : tag.replace(/s$/, '')
  const base = name === 'id' ? `${singular} id` : name.replace(/^source(?=[A-Z])/, '')
  return base
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[ -]/g, '_')
    .toUpperCase()
}

/** The body with each id of another object (a uuid under a name ending in id) as the shell variable the reader sets. */
function withVariables(value: unknown, tag: string, name: string, found: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => withVariables(item, tag, name, found))
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withVariables(item, tag, key, found)]))
  if (typeof value === 'string' && UUID.test(value) && /(Id|_id)$/.test(name)) {
    const variable = variableOf(name, tag)
    found.add(variable)
    return `$${variable}`
  }
  return value
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`
}

/** Each field of a body, nested fields by their dotted path: required, default, type, casing. */
function fieldRows(document: Document, schema: Schema, prefix = ''): string[] {
  const resolved = resolve(document, schema)
  const rows: string[] = []
  for (const [name, property] of Object.entries(resolved.properties ?? {})) {
    const field = resolve(document, property)
    const path = `${prefix}${name}`
    const casing = /_/.test(name) ? 'snake_case' : /[a-z][A-Z]/.test(name) ? 'camelCase' : 'one word'
    const required = resolved.required?.includes(name) === true ? 'yes' : 'no'
    const fallback = field.default === undefined ? '' : `\`${JSON.stringify(field.default)}\``
    rows.push(`| \`${path}\` | ${required} | ${fallback} | ${typeName(document, field)} | ${casing} |`)
    const nested = field.items !== undefined ? resolve(document, field.items) : field
    if (nested.properties !== undefined) rows.push(...fieldRows(document, nested, `${path}${field.items !== undefined ? '[]' : ''}.`))
  }
  return rows
}

function typeName(document: Document, schema: Schema): string {
  const resolved = resolve(document, schema)
  if (resolved.enum !== undefined) return resolved.enum.map((value) => `\`${String(value)}\``).join(', ').replace(/^(.{60}).+$/, '$1…')
  if (resolved.anyOf !== undefined) return resolved.anyOf.map((branch) => typeName(document, branch)).join(' or ')
  if (resolved.const !== undefined) return `\`${JSON.stringify(resolved.const)}\``
  const type = Array.isArray(resolved.type) ? resolved.type.join(' or ') : (resolved.type ?? (resolved.properties !== undefined ? 'object' : 'any'))
  if (type === 'array' && resolved.items !== undefined) return `array of ${typeName(document, resolved.items)}`
  return resolved.format === undefined ? type : `${type} (${resolved.format})`
}

/** Every casing a body's fields use, nested ones included. */
export function casingsOf(document: Document, schema: Schema): Set<string> {
  const found = new Set<string>()
  for (const row of fieldRows(document, schema)) found.add(row.split('|').at(-2)?.trim() ?? '')
  found.delete('one word')
  return found
}

function errorRows(operation: Operation): string[] {
  return Object.entries(operation.responses)
    .filter(([code]) => /^[45]\d\d$/.test(code))
    .map(([code, response]) => {
      const example = response.content?.['application/json']?.example as { message?: string } | undefined
      const message = example?.message === undefined ? '' : ` (e.g. \`${example.message.replace(/\|/g, '\\|')}\`)`
      return `| ${code} | ${(response.description ?? '').replace(/\|/g, '\\|')}${message} |`
    })
}

/** A parameter's example: its own (OpenAPI's example, or the first of its named examples), else its schema's. */
function parameterExample(document: Document, parameter: Parameter): unknown {
  if (parameter.example !== undefined) return parameter.example
  const named = Object.values(parameter.examples ?? {})[0]
  return named === undefined ? sample(document, parameter.schema ?? {}) : named.value
}

/** The file an example that uploads one sends, by its type (test/docs/examples.test.ts puts one there). */
export const FILE_OF_TYPE: Readonly<Record<string, string>> = { 'image/png': 'logo.png', 'image/jpeg': 'logo.jpg', 'image/webp': 'logo.webp' }

/** One operation's example and its markdown. */
export function renderOperation(document: Document, method: string, path: string, operation: Operation): OperationExample {
  const tag = operation.tags?.[0] ?? ''
  const guide = GUIDE_OF_TAG[tag]
  if (guide === undefined) throw new Error(`${operation.operationId}: no guide for the tag "${tag}" (add it to GUIDE_OF_TAG)`)
  const variables = new Set<string>()
  const pathVariables: string[] = []
  const parameters = (operation.parameters ?? []).filter((parameter) => parameter.$ref === undefined)
  let url = path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const variable = variableOf(name, tag)
    variables.add(variable)
    pathVariables.push(variable)
    return `$${variable}`
  })
  const query = parameters.filter((parameter) => parameter.in === 'query' && parameter.required === true && parameter.schema !== undefined)
  if (query.length > 0) url += `?${query.map((parameter) => `${parameter.name ?? ''}=${String(parameterExample(document, parameter))}`).join('&')}`
  const idempotencyRequired = (operation.parameters ?? []).some((parameter) => parameter.$ref === '#/components/parameters/RequiredIdempotencyKey')
  const rawBody = bodyExample(document, operation)
  const body = rawBody === undefined ? undefined : withVariables(rawBody, tag, '', variables)
  const verb = method.toUpperCase()
  const lines = [`curl -s${verb === 'GET' || (verb === 'POST' && rawBody !== undefined) ? '' : ` -X ${verb}`} "$BASE${url}" -H "x-client-key: $KEY" -H "x-client-secret: $SECRET"`]
  if (idempotencyRequired) lines.push(`  -H "idempotency-key: $(date +%s%N)"`)
  // A body that is a file (an image): sent from a file of that name in the current folder.
  const types = rawBody === undefined ? Object.keys(operation.requestBody?.content ?? {}) : []
  const fileType = types.includes('image/png') ? 'image/png' : types.find((type) => type.startsWith('image/'))
  if (fileType !== undefined) lines.push(`  -H 'content-type: ${fileType}' --data-binary @${FILE_OF_TYPE[fileType] ?? 'file'}`)
  const bodyText = body === undefined ? undefined : JSON.stringify(body, null, 2)
  // A body with variables is a here-document the shell fills in; one without is quoted as it is.
  const command =
    bodyText === undefined
      ? lines.join(' \\\n')
      : variables.size > 0 && /\$[A-Z]/.test(bodyText)
        ? `${lines.join(' \\\n')} \\\n  --json @- <<JSON\n${bodyText}\nJSON`
        : `${lines.join(' \\\n')} \\\n  --json ${shellQuote(JSON.stringify(body))}`
  const { status, answer } = answerExample(document, operation)
  const schema = operation.requestBody?.content['application/json']?.schema
  const otherTypes = Object.keys(operation.requestBody?.content ?? {}).filter((type) => type !== 'application/json' && type !== fileType)
  const markdown = [
    `### ${verb} ${path}`,
    '',
    `${operation.summary ?? operation.operationId} (\`${operation.operationId}\`).${fileType === undefined ? '' : ` The body is a file, here \`${FILE_OF_TYPE[fileType] ?? 'file'}\` in the current folder.`}${otherTypes.length === 0 ? '' : ` The body may also be sent as ${otherTypes.map((type) => `\`${type}\``).join(' or ')}.`}`,
    '',
    '```sh',
    command,
    '```',
    ...(schema === undefined ? [] : ['', '| field | required | default | type | casing |', '|---|---|---|---|---|', ...fieldRows(document, schema)]),
    '',
    answer === undefined ? `Answers ${status} with no JSON body.` : `Answers ${status}:`,
    ...(answer === undefined ? [] : ['', '```json', JSON.stringify(answer, null, 2), '```']),
    ...(errorRows(operation).length === 0 ? [] : ['', '| status | when |', '|---|---|', ...errorRows(operation)]),
    '',
  ].join('\n')
  return { operationId: operation.operationId, method: verb, path, guide, command, variables: [...variables], pathVariables, body, status, answer, markdown }
}

/** Every operation of the document, in its order. */
export function operationExamples(document: Document): OperationExample[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => renderOperation(document, method, path, operation)),
  )
}

/** Each guide's section: the operations of its tags, in the document's order. */
export function guideSections(document: Document): Map<string, string> {
  const byGuide = new Map<string, OperationExample[]>()
  for (const example of operationExamples(document)) byGuide.set(example.guide, [...(byGuide.get(example.guide) ?? []), example])
  const sections = new Map<string, string>()
  for (const [guide, examples] of byGuide) {
    sections.set(
      guide,
      [
        SECTION_START,
        '## Every operation, with an example',
        '',
        'Each example runs as written once `BASE`, `KEY` and `SECRET` are set (see the [README\'s Quickstart](../README.md#quickstart); a development key) and each `…_ID` it names holds the id of one of your objects; `test/docs/examples.test.ts` runs every one against a server and checks its status. Which fields are required, their defaults and their casing are in each table; where one body mixes casings, [api.md](api.md#field-casing) lists it.',
        '',
        ...(guide === 'api.md'
          ? [
              '### Field casing',
              '',
              'Most bodies are snake_case or camelCase throughout, as the published client sends them; these mix the two, and each field must be sent in the casing named here (a field in the other casing is unknown):',
              '',
              '| body | camelCase fields | snake_case fields |',
              '|---|---|---|',
              ...mixedCasingRows(document),
              '',
            ]
          : []),
        ...examples.map((example) => example.markdown),
        SECTION_END,
      ].join('\n'),
    )
  }
  return sections
}

/** The guide with its section replaced (or appended at the end when it has none). */
export function withSection(markdown: string, section: string): string {
  const start = markdown.indexOf(SECTION_START)
  if (start === -1) return `${markdown.trimEnd()}\n\n${section}\n`
  const end = markdown.indexOf(SECTION_END, start)
  if (end === -1) throw new Error('a section start without its end')
  return `${markdown.slice(0, start)}${section}${markdown.slice(end + SECTION_END.length)}`
}

/** The guide's section as it is now, undefined when it has none. */
export function sectionIn(markdown: string): string | undefined {
  const start = markdown.indexOf(SECTION_START)
  const end = markdown.indexOf(SECTION_END, start)
  return start === -1 || end === -1 ? undefined : markdown.slice(start, end + SECTION_END.length)
}

/** The bodies that mix casings, for api.md's one table. */
export function mixedCasingRows(document: Document): string[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).flatMap(([method, operation]) => {
      const schema = operation.requestBody?.content['application/json']?.schema
      if (schema === undefined) return []
      const casings = casingsOf(document, schema)
      if (casings.size < 2) return []
      const fields = (casing: string) =>
        fieldRows(document, schema)
          .filter((row) => row.split('|').at(-2)?.trim() === casing)
          .map((row) => row.split('|')[1]?.trim() ?? '')
          .join(', ')
      return [`| ${method.toUpperCase()} ${path} | ${fields('camelCase')} | ${fields('snake_case')} |`]
    }),
  )
}
