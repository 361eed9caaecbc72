/**
 * The API reference at /docs: one HTML page rendered on the server from the OpenAPI document, with
 * no script. Each tag is a section and each operation an anchor (its operationId) with its
 * parameters, its request body's fields and example, and each response's fields and example; the
 * events follow under Webhooks, then the named schemas. The contents list at the top links them all.
 */

/** The parts of an OpenAPI 3.1 schema the page shows. */
export interface ReferenceSchema {
  type?: string | string[]
  $ref?: string
  properties?: Record<string, ReferenceSchema>
  required?: string[]
  items?: ReferenceSchema
  anyOf?: ReferenceSchema[]
  oneOf?: ReferenceSchema[]
  allOf?: ReferenceSchema[]
  enum?: unknown[]
  const?: unknown
  default?: unknown
  examples?: unknown[]
  format?: string
  description?: string
  pattern?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  minItems?: number
  maxItems?: number
  contentMediaType?: string
  additionalProperties?: boolean | ReferenceSchema
}

interface ReferenceMedia {
  schema?: ReferenceSchema
  example?: unknown
}

interface ReferenceParameter {
  $ref?: string
  name?: string
  in?: string
  required?: boolean
  description?: string
  schema?: ReferenceSchema
  example?: unknown
}

interface ReferenceOperation {
  operationId?: string
  summary?: string
  description?: string
  tags?: string[]
  security?: Record<string, string[]>[]
  parameters?: ReferenceParameter[]
  requestBody?: { required?: boolean; description?: string; content?: Record<string, ReferenceMedia> }
  responses?: Record<string, { description?: string; content?: Record<string, ReferenceMedia> }>
}

export interface ReferenceDocument {
  info: { title: string; version: string; description?: string; license?: { name: string } }
  tags?: { name: string; description?: string }[]
  paths?: Record<string, Record<string, ReferenceOperation> | undefined>
  webhooks?: Record<string, Record<string, ReferenceOperation> | undefined>
  components?: {
    schemas?: Record<string, ReferenceSchema>
    parameters?: Record<string, ReferenceParameter>
    securitySchemes?: Record<string, { type?: string; in?: string; name?: string }>
  }
  security?: Record<string, string[]>[]
}

/** What the page needs besides the document. */
export interface ReferenceOptions {
  /** Where the raw document is served. */
  documentUrl: string
  /** The favicon's URL. */
  iconUrl: string
  /** The stylesheet, inlined (the CSP allows it by its hash). */
  style: string
  /** The scope an operation requires, by operationId (undefined: none named). */
  scopeOf: (operationId: string) => string | undefined
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character] ?? character)
}

/** Inline Markdown of the document's descriptions: `code` only, the rest as text. */
function prose(text: string): string {
  return escape(text).replace(/`([^`]+)`/g, '<code>$1</code>')
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
const SCHEMA_PREFIX = '#/components/schemas/'
const PARAMETER_PREFIX = '#/components/parameters/'

/** The anchor of a tag's section (`liquidation addresses` → `tag-liquidation-addresses`). */
export function tagAnchor(tag: string): string {
  return `tag-${tag.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`
}

/** The anchor of a named schema. */
export function schemaAnchor(name: string): string {
  return `schema-${name}`
}

class Renderer {
  constructor(
    private readonly document: ReferenceDocument,
    private readonly options: ReferenceOptions,
  ) {}

  private resolve(schema: ReferenceSchema): ReferenceSchema {
    if (schema.$ref === undefined || !schema.$ref.startsWith(SCHEMA_PREFIX)) return schema
    return this.document.components?.schemas?.[schema.$ref.slice(SCHEMA_PREFIX.length)] ?? {}
  }

  private parameter(parameter: ReferenceParameter): ReferenceParameter {
    if (parameter.$ref === undefined || !parameter.$ref.startsWith(PARAMETER_PREFIX)) return parameter
    return this.document.components?.parameters?.[parameter.$ref.slice(PARAMETER_PREFIX.length)] ?? parameter
  }

  /** A schema's example as a client would send it: its own example, else its default or first enum value, else built from its parts. */
  sample(schema: ReferenceSchema, depth = 0): unknown {
    const resolved = this.resolve(schema)
    if (resolved.examples !== undefined) return resolved.examples[0]
    if (resolved.const !== undefined) return resolved.const
    if (resolved.default !== undefined) return resolved.default
    if (resolved.enum !== undefined) return resolved.enum[0]
    if (depth > 8) return null
    const branch = resolved.anyOf?.[0] ?? resolved.oneOf?.[0]
    if (branch !== undefined) return this.sample(branch, depth + 1)
    if (resolved.allOf !== undefined) return Object.assign({}, ...resolved.allOf.map((part) => this.sample(part, depth + 1)))
    const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type
    if (type === 'boolean') return true
    if (type === 'integer' || type === 'number') return 0
    if (type === 'string') return 'string'
    if (type === 'null') return null
    if (type === 'array') return resolved.items === undefined ? [] : [this.sample(resolved.items, depth + 1)]
    if (type === 'object' || resolved.properties !== undefined) {
      return Object.fromEntries(Object.entries(resolved.properties ?? {}).map(([name, property]) => [name, this.sample(property, depth + 1)]))
    }
    return null
  }

  /** A schema's type in a few words, a named schema as a link to it. */
  private typeOf(schema: ReferenceSchema): string {
    if (schema.$ref?.startsWith(SCHEMA_PREFIX) === true) {
      const name = schema.$ref.slice(SCHEMA_PREFIX.length)
      return `<a href="#${escape(schemaAnchor(name))}">${escape(name)}</a>`
    }
    if (schema.const !== undefined) return `<code>${escape(JSON.stringify(schema.const))}</code>`
    if (schema.enum !== undefined) return `one of ${schema.enum.map((value) => `<code>${escape(JSON.stringify(value))}</code>`).join(', ')}`
    const branches = schema.anyOf ?? schema.oneOf
    if (branches !== undefined) return branches.map((branch) => this.typeOf(branch)).join(' or ')
    if (schema.allOf !== undefined) return schema.allOf.map((part) => this.typeOf(part)).join(' and ')
    const type = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? (schema.properties !== undefined ? 'object' : 'any'))
    if (type === 'array' && schema.items !== undefined) return `array of ${this.typeOf(schema.items)}`
    const format = schema.format ?? schema.contentMediaType
    return escape(format === undefined ? type : `${type} (${format})`)
  }

  /** What a field accepts besides its type: its description, default, bounds and pattern. */
  private notes(schema: ReferenceSchema): string {
    const notes: string[] = []
    const resolved = schema.anyOf?.find((branch) => branch.type !== 'null') ?? schema
    if (schema.description !== undefined) notes.push(prose(schema.description))
    else if (resolved.description !== undefined && resolved.$ref === undefined) notes.push(prose(resolved.description))
    if (schema.default !== undefined) notes.push(`default <code>${escape(JSON.stringify(schema.default))}</code>`)
    const bound = (name: string, low: number | undefined, high: number | undefined) => {
      if (low !== undefined && high !== undefined) notes.push(`${name} ${low}–${high}`)
      else if (low !== undefined) notes.push(`${name} at least ${low}`)
      else if (high !== undefined) notes.push(`${name} at most ${high}`)
    }
    bound('length', resolved.minLength, resolved.maxLength)
    bound('value', resolved.minimum, resolved.maximum)
    bound('items', resolved.minItems, resolved.maxItems)
    if (resolved.pattern !== undefined) notes.push(`pattern <code>${escape(resolved.pattern)}</code>`)
    return notes.join('; ')
  }

  /** The object a schema describes, its parts merged (allOf), or undefined when it describes none. */
  private objectOf(schema: ReferenceSchema): ReferenceSchema | undefined {
    const resolved = this.resolve(schema)
    if (resolved.allOf !== undefined) {
      const parts = resolved.allOf.map((part) => this.objectOf(part) ?? {})
      return {
        type: 'object',
        properties: Object.assign({}, ...parts.map((part) => part.properties ?? {})) as Record<string, ReferenceSchema>,
        required: parts.flatMap((part) => part.required ?? []),
      }
    }
    return resolved.properties !== undefined ? resolved : undefined
  }

  /**
   * One row per field, nested fields by their dotted path (`items[].price`): the name, whether it
   * is required, its type and its notes. A named schema inside is a link, not repeated.
   */
  private fieldRows(schema: ReferenceSchema, prefix = '', depth = 0): string[] {
    const object = this.objectOf(schema)
    if (object === undefined || depth > 6) return []
    const rows: string[] = []
    for (const [name, property] of Object.entries(object.properties ?? {})) {
      const path = `${prefix}${name}`
      const required = object.required?.includes(name) === true
      rows.push(`<tr><td><code>${escape(path)}</code></td><td>${required ? 'yes' : 'no'}</td><td>${this.typeOf(property)}</td><td>${this.notes(property)}</td></tr>`)
      if (property.$ref !== undefined) continue
      const inner = property.anyOf?.find((branch) => branch.type !== 'null') ?? property
      if (inner.$ref !== undefined) continue
      if (inner.items !== undefined && inner.items.$ref === undefined) rows.push(...this.fieldRows(inner.items, `${path}[].`, depth + 1))
      else rows.push(...this.fieldRows(inner, `${path}.`, depth + 1))
    }
    return rows
  }

  /** The fields table of a schema, or a line naming its type when it is not an object. */
  private fields(schema: ReferenceSchema, caption: string): string {
    const rows = this.fieldRows(schema)
    if (rows.length === 0) return `<p>${escape(caption)}: ${this.typeOf(schema)}</p>`
    const named = schema.$ref?.startsWith(SCHEMA_PREFIX) === true ? ` (${this.typeOf(schema)})` : ''
    return `<table class="fields"><caption>${escape(caption)}${named}</caption><thead><tr><th scope="col">field</th><th scope="col">required</th><th scope="col">type</th><th scope="col">notes</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
  }

  private example(value: unknown, label: string): string {
    return `<p class="example-label">${escape(label)}</p><pre><code>${escape(JSON.stringify(value, null, 2))}</code></pre>`
  }

  private parameters(operation: ReferenceOperation): string {
    const parameters = (operation.parameters ?? []).map((parameter) => this.parameter(parameter))
    if (parameters.length === 0) return ''
    const rows = parameters.map((parameter) => {
      const schema = parameter.schema ?? {}
      const description = [parameter.description === undefined ? '' : prose(parameter.description), this.notes({ ...schema, description: undefined })].filter((part) => part !== '').join('; ')
      return `<tr><td><code>${escape(parameter.name ?? '')}</code></td><td>${escape(parameter.in ?? '')}</td><td>${parameter.required === true ? 'yes' : 'no'}</td><td>${this.typeOf(schema)}</td><td>${description}</td></tr>`
    })
    return `<table class="parameters"><caption>Parameters</caption><thead><tr><th scope="col">name</th><th scope="col">in</th><th scope="col">required</th><th scope="col">type</th><th scope="col">notes</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
  }

  private requestBody(operation: ReferenceOperation): string {
    const body = operation.requestBody
    if (body?.content === undefined) return ''
    const parts = [`<h4>Request body${body.required === true ? '' : ' (optional)'}</h4>`]
    if (body.description !== undefined) parts.push(`<p>${prose(body.description)}</p>`)
    for (const [type, media] of Object.entries(body.content)) {
      const schema = media.schema
      if (schema === undefined || (type !== 'application/json' && this.fieldRows(schema).length === 0)) {
        parts.push(`<p>As <code>${escape(type)}</code>${schema === undefined ? '' : `: ${this.typeOf(schema)}`}${schema?.description === undefined ? '' : ` (${prose(schema.description)})`}</p>`)
        continue
      }
      parts.push(this.fields(schema, `Fields (${type})`))
      if (type === 'application/json') parts.push(this.example(media.example ?? this.sample(schema), 'Example body'))
    }
    return parts.join('')
  }

  private responses(operation: ReferenceOperation): string {
    const entries = Object.entries(operation.responses ?? {})
    if (entries.length === 0) return ''
    const successes: string[] = []
    const errorRows: string[] = []
    for (const [status, response] of entries) {
      const media = response.content?.['application/json']
      const other = Object.keys(response.content ?? {}).filter((type) => type !== 'application/json')
      const described = `${prose(response.description ?? '')}${other.length === 0 ? '' : ` (${other.map((type) => `<code>${escape(type)}</code>`).join(', ')})`}`
      if (/^[45]/.test(status) && media?.schema?.$ref === `${SCHEMA_PREFIX}Error`) {
        const example = media.example ?? this.sample(media.schema)
        errorRows.push(`<tr><td>${escape(status)}</td><td>${described}</td><td><code>${escape(JSON.stringify(example))}</code></td></tr>`)
        continue
      }
      const parts = [`<h5>${escape(status)}</h5><p>${described === '' ? 'No description' : described}</p>`]
      if (media?.schema !== undefined) {
        parts.push(this.example(media.example ?? this.sample(media.schema), 'Example answer'))
        parts.push(`<details><summary>Fields of the answer</summary>${this.fields(media.schema, 'Fields')}</details>`)
      }
      successes.push(parts.join(''))
    }
    const errors =
      errorRows.length === 0
        ? ''
        : `<table class="errors"><caption>Errors (each body an <a href="#${schemaAnchor('Error')}">Error</a>)</caption><thead><tr><th scope="col">status</th><th scope="col">when</th><th scope="col">example</th></tr></thead><tbody>${errorRows.join('')}</tbody></table>`
    return `<h4>Responses</h4>${successes.join('')}${errors}`
  }

  private security(operation: ReferenceOperation): string {
    const security = operation.security ?? this.document.security ?? []
    const scope = operation.operationId === undefined ? undefined : this.options.scopeOf(operation.operationId)
    if (security.length === 0 || security.every((requirement) => Object.keys(requirement).length === 0)) return '<p class="auth">No API key.</p>'
    const headers = security
      .flatMap((requirement) => Object.keys(requirement))
      .map((name) => this.document.components?.securitySchemes?.[name]?.name ?? name)
    const named = [...new Set(headers)].map((header) => `<code>${escape(header)}</code>`).join(' and ')
    return `<p class="auth">API key: ${named}${scope === undefined ? '' : `; scope <code>${escape(scope)}</code>`}.</p>`
  }

  /** One operation: its anchor is its operationId. */
  operation(method: string, path: string, operation: ReferenceOperation, anchor: string): string {
    const verb = method.toUpperCase()
    return [
      `<section class="operation" id="${escape(anchor)}">`,
      `<h3 id="${escape(anchor)}-title"><span class="method method-${escape(method)}">${escape(verb)}</span> <code class="path">${escape(path)}</code></h3>`,
      `<p class="summary">${prose(operation.summary ?? '')} <span class="operation-id">(<code>${escape(operation.operationId ?? anchor)}</code>)</span></p>`,
      operation.description === undefined ? '' : `<p>${prose(operation.description)}</p>`,
      this.security(operation),
      this.parameters(operation),
      this.requestBody(operation),
      this.responses(operation),
      '</section>',
    ].join('')
  }

  /** Every operation of `items` (paths or webhooks), in the document's order. */
  private operations(items: Record<string, Record<string, ReferenceOperation> | undefined> | undefined) {
    return Object.entries(items ?? {}).flatMap(([path, item]) =>
      Object.entries(item ?? {})
        .filter(([method]) => HTTP_METHODS.includes(method))
        .map(([method, operation]) => ({ method, path, operation, anchor: operation.operationId ?? `${method}-${path}` })),
    )
  }

  render(): string {
    const { info } = this.document
    const operations = this.operations(this.document.paths)
    // The declared tags in their order, then the others in the order their first operation appears.
    const tags = new Map((this.document.tags ?? []).map((tag) => [tag.name, { description: tag.description, operations: [] as typeof operations }]))
    for (const entry of operations) {
      const tag = entry.operation.tags?.[0] ?? 'other'
      if (!tags.has(tag)) tags.set(tag, { description: undefined, operations: [] })
      tags.get(tag)?.operations.push(entry)
    }
    const used = [...tags].filter(([, tag]) => tag.operations.length > 0)
    const events = this.operations(this.document.webhooks)
    const schemas = Object.entries(this.document.components?.schemas ?? {})
    const link = (entry: (typeof operations)[number], label: string) =>
      `<li><a href="#${escape(entry.anchor)}"><span class="method method-${escape(entry.method)}">${escape(entry.method.toUpperCase())}</span> ${label}</a></li>`
    const contents = [
      '<nav class="contents" aria-label="Operations">',
      '<h2 id="contents">Operations</h2>',
      '<ul class="tags">',
      ...used.map(
        ([name, tag]) =>
          `<li><a class="tag-link" href="#${escape(tagAnchor(name))}">${escape(name)}</a><ul>${tag.operations.map((entry) => link(entry, escape(entry.operation.summary ?? entry.path))).join('')}</ul></li>`,
      ),
      events.length === 0 ? '' : `<li><a class="tag-link" href="#webhooks">Webhooks (events)</a><ul>${events.map((entry) => link(entry, `<code>${escape(entry.path)}</code>`)).join('')}</ul></li>`,
      schemas.length === 0 ? '' : `<li><a class="tag-link" href="#schemas">Schemas</a><ul>${schemas.map(([name]) => `<li><a href="#${escape(schemaAnchor(name))}">${escape(name)}</a></li>`).join('')}</ul></li>`,
      '</ul>',
      '</nav>',
    ]
    const sections = used.map(
      ([name, tag]) =>
        `<section class="tag" id="${escape(tagAnchor(name))}"><h2 id="${escape(tagAnchor(name))}-title">${escape(name)}</h2>${tag.description === undefined ? '' : `<p>${prose(tag.description)}</p>`}${tag.operations.map((entry) => this.operation(entry.method, entry.path, entry.operation, entry.anchor)).join('')}</section>`,
    )
    const webhooks =
      events.length === 0
        ? ''
        : `<section class="tag" id="webhooks"><h2 id="webhooks-title">Webhooks</h2><p>The requests this API sends to a webhook's URL, one per event type.</p>${events.map((entry) => this.operation(entry.method, entry.path, entry.operation, entry.anchor)).join('')}</section>`
    const schemaSection =
      schemas.length === 0
        ? ''
        : `<section class="tag" id="schemas"><h2 id="schemas-title">Schemas</h2>${schemas
            .map(
              ([name, schema]) =>
                `<section class="schema" id="${escape(schemaAnchor(name))}"><h3 id="${escape(schemaAnchor(name))}-title">${escape(name)}</h3>${schema.description === undefined ? '' : `<p>${prose(schema.description)}</p>`}${this.fields(schema, 'Fields')}${this.example(this.sample(schema), 'Example')}</section>`,
            )
            .join('')}</section>`
    const title = `${info.title} reference`
    return [
      '<!doctype html>',
      '<html lang="en">',
      '<head>',
      '<meta charset="utf-8">',
      '<meta name="viewport" content="width=device-width, initial-scale=1">',
      `<title>devplatform API reference</title>`,
      `<link rel="icon" type="image/svg+xml" sizes="any" href="${escape(this.options.iconUrl)}">`,
      `<style>${this.options.style}</style>`,
      '</head>',
      '<body>',
      `<header class="topbar"><span class="name">devplatform</span> <a href="${escape(this.options.documentUrl)}">OpenAPI document (JSON)</a></header>`,
      '<div class="layout">',
      ...contents,
      '<main>',
      `<h1>${escape(title)}</h1>`,
      `<p class="version">Version ${escape(info.version)}, OpenAPI 3.1${info.license === undefined ? '' : `, ${escape(info.license.name)} licence`}. The raw document: <a href="${escape(this.options.documentUrl)}">${escape(this.options.documentUrl)}</a>.</p>`,
      info.description === undefined ? '' : `<p>${prose(info.description)}</p>`,
      ...sections,
      webhooks,
      schemaSection,
      '</main>',
      '</div>',
      '</body>',
      '</html>',
    ].join('\n')
  }
}

/** The reference page for `document`. */
export function renderReference(document: ReferenceDocument, options: ReferenceOptions): string {
  return new Renderer(document, options).render()
}

/**
 * The page's stylesheet: one column on a phone, the contents beside the reference on a wide
 * screen. Long paths, codes and examples wrap rather than widen the page. The browser lays out only
 * the operations in view (content-visibility), which is most of what a reload costs.
 */
export const REFERENCE_STYLE = `
:root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.5; color: #1f2328; background: #fff; }
* { box-sizing: border-box; }
body { margin: 0; }
a { color: #0b57d0; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 0.875em; }
code { overflow-wrap: anywhere; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 0.5rem 0.75rem; white-space: pre-wrap; overflow-wrap: anywhere; margin: 0 0 1rem; }
.topbar { background: #1b1b1b; color: #fff; display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.25rem 1.5rem; padding: 0.5rem 1rem; }
.topbar .name { font: 700 1.5rem/2.5rem sans-serif; letter-spacing: 0.02em; }
.topbar a { color: #fff; }
.layout { max-width: 90rem; margin: 0 auto; }
.contents { padding: 0 1rem; border-bottom: 1px solid #d0d7de; }
.contents ul { list-style: none; margin: 0; padding: 0; }
.contents .tags > li { margin: 0.5rem 0; }
.contents .tags ul { padding-left: 0.75rem; font-size: 0.875rem; }
.contents li a { display: inline-block; padding: 0.125rem 0; overflow-wrap: anywhere; }
.tag-link { font-weight: 600; text-transform: capitalize; }
main { padding: 0 1rem 2rem; min-width: 0; }
h1 { font-size: 1.75rem; margin: 1rem 0 0.5rem; }
h2 { font-size: 1.5rem; margin: 2.5rem 0 0.5rem; padding-bottom: 0.25rem; border-bottom: 2px solid #d0d7de; text-transform: capitalize; }
h3 { font-size: 1.125rem; margin: 0 0 0.25rem; overflow-wrap: anywhere; }
h4 { font-size: 1rem; margin: 1rem 0 0.25rem; }
h5 { font-size: 0.9375rem; margin: 0.75rem 0 0; }
.operation, .schema { border: 1px solid #d0d7de; border-radius: 8px; padding: 0.75rem; margin: 1rem 0; scroll-margin-top: 0.5rem; content-visibility: auto; contain-intrinsic-size: auto 40rem; }
.operation:target, .schema:target { border-color: #0b57d0; box-shadow: 0 0 0 2px #0b57d0; }
.method { display: inline-block; min-width: 4.25rem; text-align: center; border-radius: 4px; padding: 0 0.375rem; color: #fff; font: 700 0.8125rem/1.5 ui-monospace, monospace; }
.method-get { background: #0a5bb5; }
.method-post { background: #116329; }
.method-put, .method-patch { background: #8a4600; }
.method-delete { background: #a40e26; }
.contents .method { min-width: 3.75rem; font-size: 0.75rem; }
.summary, .auth, .version { margin: 0.25rem 0; }
.operation-id, .auth { color: #57606a; }
.example-label { margin: 0.5rem 0 0.25rem; font-weight: 600; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; margin: 0.5rem 0 1rem; font-size: 0.875rem; }
caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
th, td { border: 1px solid #d0d7de; padding: 0.25rem 0.375rem; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { background: #f6f8fa; }
.fields th:nth-child(2), .parameters th:nth-child(3) { width: 5.75rem; }
.parameters th:nth-child(2) { width: 4.5rem; }
.errors th:first-child { width: 3.75rem; }
details { margin: 0 0 0.5rem; }
summary { cursor: pointer; color: #0b57d0; }
@media (min-width: 64rem) {
  .layout { display: grid; grid-template-columns: 20rem minmax(0, 1fr); gap: 1.5rem; }
  .contents { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow-y: auto; border-bottom: 0; border-right: 1px solid #d0d7de; }
}
`
