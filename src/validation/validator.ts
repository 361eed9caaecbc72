import { Ajv, type ErrorObject, type FuncKeywordDefinition, type Options, type ValidateFunction } from 'ajv'
import type { FastifySchemaCompiler } from 'fastify'
import type { RuleSet } from './rules.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
// Deliberately simple: one @, no spaces, a dot in the domain. RFC 5322 in full accepts more
// than any mail system delivers to.
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** What a compiled keyword checks each value with (Ajv does not export the name). */
type KeywordCheck = ReturnType<NonNullable<FuncKeywordDefinition['compile']>>

/** Schema annotation: a free-text field, where tab, LF and CR are allowed (other control characters never are). */
const FREE_TEXT = 'x-free-text'

function createAjv(options: Options, rules: RuleSet): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, removeAdditional: false, useDefaults: true, strict: false, ...options })
  ajv.addFormat('uuid', UUID)
  ajv.addFormat('email', EMAIL)
  ajv.addFormat('date-time', DATE_TIME)
  // OpenAPI's annotation of a raw file body (a logo): any bytes, nothing to check.
  ajv.addFormat('binary', true)
  // Annotations only: the whole 400 message used when this subschema fails; a free-text field.
  ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' })
  ajv.addKeyword({ keyword: FREE_TEXT, schemaType: 'boolean' })
  ajv.addKeyword({
    keyword: 'x-rules',
    type: 'object',
    schemaType: 'string',
    errors: true,
    // The rule is looked up when the schema is compiled (Fastify compiles route schemas when the
    // app gets ready), so a misspelt name stops start-up instead of failing the first request.
    compile(ruleName: string) {
      const rule = rules[ruleName]
      if (rule === undefined) {
        throw new Error(`x-rules names an unknown validation rule "${ruleName}" (known rules: ${Object.keys(rules).join(', ')})`)
      }
      const check: KeywordCheck = (data: Record<string, unknown>) => {
        const problems = rule(data)
        check.errors = problems.map((message) => ({ keyword: 'x-rules', message, params: {} }))
        return problems.length === 0
      }
      return check
    },
  })
  return ajv
}

/**
 * Bodies are validated strictly (no type coercion: 10.2 is not "10.2"); query strings and
 * path parameters arrive as text, so they are coerced ("10" → 10, "true" → true).
 */
export function createValidatorCompiler(rules: RuleSet): FastifySchemaCompiler<unknown> {
  const strict = createAjv({ coerceTypes: false }, rules)
  const coercing = createAjv({ coerceTypes: 'array' }, rules)
  return ({ schema, httpPart }) => {
    const unbounded = unboundedArray(schema, httpPart ?? 'request')
    // Checked when the app gets ready, like x-rules: an array without maxItems would let one
    // request make Ajv walk (and report) as many items as 1 MiB of JSON holds.
    if (unbounded !== undefined) throw new Error(`${unbounded} is an array without maxItems: give it one`)
    const isBody = httpPart === 'body'
    const validate = (isBody ? strict : coercing).compile(schema as object)
    return checked(validate, shapeOf(schema), isBody)
  }
}

/** Where in a request schema an array has no maxItems, if anywhere. */
function unboundedArray(schema: unknown, at: string): string | undefined {
  if (!isNode(schema)) return undefined
  const type = schema.type
  if ((type === 'array' || (Array.isArray(type) && type.includes('array'))) && typeof schema.maxItems !== 'number') return at
  const children: Array<[string, unknown]> = [
    ...Object.entries(isNode(schema.properties) ? schema.properties : {}).map(([name, child]): [string, unknown] => [`${at}.${name}`, child]),
    [`${at}[]`, schema.items],
    ...[...nodes(schema.anyOf), ...nodes(schema.oneOf), ...nodes(schema.allOf)].map((child): [string, unknown] => [at, child]),
  ]
  for (const [path, child] of children) {
    const found = unboundedArray(child, path)
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * What a schema says about one place in the data, read once when the schema is compiled so each
 * request only follows it: which null properties mean "absent", which strings must hold more
 * than white space, which may hold line breaks.
 */
interface Shape {
  /** optional properties whose schema does not allow null: a null there is dropped (bodies) */
  nullMeansAbsent: readonly string[]
  /** the properties (objects, or arrays of them) with nulls of their own to drop */
  nested: ReadonlyMap<string, Shape>
  properties: ReadonlyMap<string, Shape>
  items: Shape | undefined
  /** a string here must hold a non-white-space character (its schema asks for at least one character) */
  notBlank: boolean
  /** tab, LF and CR are allowed here */
  freeText: boolean
  /** an array here may hold at most this many items */
  maxItems: number | undefined
  /** an object here may hold only its listed properties (additionalProperties: false) */
  closed: boolean
}

type SchemaNode = Record<string, unknown>

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function nodes(value: unknown): SchemaNode[] {
  return Array.isArray(value) ? value.filter(isNode) : []
}

function allowsNull(schema: SchemaNode): boolean {
  const type = schema.type
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true
  if (schema.const === null || (Array.isArray(schema.enum) && schema.enum.includes(null))) return true
  return [...nodes(schema.anyOf), ...nodes(schema.oneOf)].some(allowsNull)
}

function hasNullsToDrop(shape: Shape): boolean {
  return shape.nullMeansAbsent.length > 0 || shape.nested.size > 0 || (shape.items !== undefined && hasNullsToDrop(shape.items))
}

/**
 * Properties and items are followed; a union's (anyOf/oneOf/allOf) string rules apply to its
 * strings, but nulls inside a union's objects are left as sent (which branch applies is not known
 * before validation). No body schema uses $ref.
 */
function shapeOf(schema: unknown): Shape {
  const node = isNode(schema) ? schema : {}
  const branches = [node, ...nodes(node.anyOf), ...nodes(node.oneOf), ...nodes(node.allOf)]
  const required = new Set(Array.isArray(node.required) ? node.required : [])
  const nullMeansAbsent: string[] = []
  const nested = new Map<string, Shape>()
  const properties = new Map<string, Shape>()
  for (const [name, propertySchema] of Object.entries(isNode(node.properties) ? node.properties : {})) {
    if (!isNode(propertySchema)) continue
    const shape = shapeOf(propertySchema)
    properties.set(name, shape)
    if (!required.has(name) && !allowsNull(propertySchema)) nullMeansAbsent.push(name)
    if (hasNullsToDrop(shape)) nested.set(name, shape)
  }
  return {
    nullMeansAbsent,
    nested,
    properties,
    items: isNode(node.items) ? shapeOf(node.items) : undefined,
    notBlank: branches.some((branch) => typeof branch.minLength === 'number' && branch.minLength >= 1),
    freeText: branches.some((branch) => branch[FREE_TEXT] === true),
    maxItems: typeof node.maxItems === 'number' ? node.maxItems : undefined,
    closed: node.additionalProperties === false,
  }
}

/** Failures listed in a 400 message; the rest are counted ("; and N more"). */
export const MAX_LISTED_FAILURES = 10
/** Longest single failure in a 400 message, in characters (a 100 KB property name is cut). */
export const MAX_FAILURE_LENGTH = 300
/** More unknown properties than this in one object and the body is refused for its size. */
export const MAX_UNKNOWN_PROPERTIES = 100

/** Keyword of a made-up error carrying how many more failures were found but not listed. */
const MORE = 'x-more'

/**
 * Refuses, before the schema runs, a body too big for its schema: an array over its maxItems (its
 * items are not walked) or an object with more than MAX_UNKNOWN_PROPERTIES unknown properties
 * (counted; the first MAX_LISTED_FAILURES named). Ajv with allErrors would report every failed
 * item of a 349,000-item array; past this check the errors it can find are bounded by the schema.
 * Only properties the schema knows are followed, and only arrays within their limit.
 */
function sizeErrors(data: unknown, shape: Shape, at: Array<string | number>, found: ErrorObject[]): void {
  if (typeof data !== 'object' || data === null) return
  if (Array.isArray(data)) {
    if (shape.maxItems !== undefined && data.length > shape.maxItems) {
      found.push({ keyword: 'maxItems', instancePath: pointer(at), schemaPath: '#', params: { limit: shape.maxItems } })
      return
    }
    if (shape.items === undefined) return
    for (let index = 0; index < data.length; index++) {
      at.push(index)
      sizeErrors(data[index], shape.items, at, found)
      at.pop()
    }
    return
  }
  // One enumeration (Object.keys), reused: listing a 95,000-key object costs about 25 ms each time.
  const keys = Object.keys(data)
  let unknown = 0
  for (const key of keys) {
    const child = shape.properties.get(key)
    if (child !== undefined) {
      at.push(key)
      sizeErrors((data as Record<string, unknown>)[key], child, at, found)
      at.pop()
    } else if (shape.closed) {
      unknown += 1
    }
  }
  if (unknown <= MAX_UNKNOWN_PROPERTIES) return
  const instancePath = pointer(at)
  let named = 0
  for (const key of keys) {
    if (shape.properties.has(key)) continue
    found.push({ keyword: 'additionalProperties', instancePath, schemaPath: '#', params: { additionalProperty: key } })
    if (++named === MAX_LISTED_FAILURES) break
  }
  found.push({ keyword: MORE, instancePath, schemaPath: '#', params: { count: unknown - named } })
}

/** The JSON pointer of a place in the data, built only when a failure is reported there. */
function pointer(at: ReadonlyArray<string | number>): string {
  return at.map((key) => `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('')
}

/** Drops the nulls the shape says mean "absent", in place, before the body is validated. */
function dropNulls(data: unknown, shape: Shape): void {
  if (typeof data !== 'object' || data === null) return
  if (Array.isArray(data)) {
    if (shape.items !== undefined) for (const item of data) dropNulls(item, shape.items)
    return
  }
  const record = data as Record<string, unknown>
  for (const name of shape.nullMeansAbsent) {
    if (Object.hasOwn(record, name) && record[name] === null) delete record[name]
  }
  for (const [name, child] of shape.nested) {
    if (Object.hasOwn(record, name)) dropNulls(record[name], child)
  }
}

// Any C0 control character, DEL, or half of a surrogate pair: one test per string finds every
// string that needs a closer look, and almost none do.
const SUSPECT = /[\u0000-\u001f\u007f\ud800-\udfff]/
const CONTROL = /[\u0000-\u001f\u007f]/
const CONTROL_BUT_LINE_BREAKS_AND_TABS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
const NOT_WHITE_SPACE = /\S/

function stringProblem(value: string, shape: Shape | undefined): string | undefined {
  if (SUSPECT.test(value)) {
    if ((shape?.freeText === true ? CONTROL_BUT_LINE_BREAKS_AND_TABS : CONTROL).test(value)) return 'must not contain control characters'
    if (LONE_SURROGATE.test(value)) return 'must be valid Unicode text'
  }
  if (shape?.notBlank === true && !NOT_WHITE_SPACE.test(value)) return 'should not be empty'
  return undefined
}

interface TextProblem {
  /** JSON pointer below the scanned value */
  path: string
  message: string
}

interface TextScan {
  /** the first MAX_LISTED_FAILURES problems, with their paths */
  listed: TextProblem[]
  /** every problem found */
  count: number
}

/**
 * Every string in `data` that is not text: control characters (tab, LF and CR allowed in
 * free-text fields), lone surrogates, or only white space where the schema asks for at least one
 * character. One pass, in place: only the first MAX_LISTED_FAILURES problems get a path (the
 * rest are counted), so a body full of them costs no more than a clean one.
 */
function scanText(data: unknown, shape: Shape | undefined, at: Array<string | number>, scan: TextScan): void {
  if (typeof data === 'string') {
    const message = stringProblem(data, shape)
    if (message === undefined) return
    if (scan.listed.length < MAX_LISTED_FAILURES) scan.listed.push({ path: pointer(at), message })
    scan.count += 1
    return
  }
  if (typeof data !== 'object' || data === null) return
  if (Array.isArray(data)) {
    for (let index = 0; index < data.length; index++) {
      at.push(index)
      scanText(data[index], shape?.items, at, scan)
      at.pop()
    }
  } else {
    for (const key of Object.keys(data)) {
      at.push(key)
      scanText((data as Record<string, unknown>)[key], shape?.properties.get(key), at, scan)
      at.pop()
    }
  }
}

/**
 * The compiled schema with what every request part goes through around it: in a body, nulls that
 * mean "absent" are dropped first (the published client sends unset fields as null); after the
 * schema passes, every string is checked to be text. No stored or compared text holds a control
 * character or a lone surrogate: PostgreSQL's text refuses NUL (an error mid-query) where SQLite
 * would store it, and a lone surrogate has no UTF-8 form (drivers would store U+FFFD in its
 * place). Refusing them here, for every body, query string and path parameter, makes both
 * backends answer the same 400 naming the field.
 */
function checked(validate: ValidateFunction, shape: Shape, isBody: boolean): ValidateFunction {
  const dropsNulls = isBody && hasNullsToDrop(shape)
  const check = ((data: unknown) => {
    const tooBig: ErrorObject[] = []
    sizeErrors(data, shape, [], tooBig)
    if (tooBig.length > 0) {
      check.errors = tooBig
      return false
    }
    if (dropsNulls) dropNulls(data, shape)
    if (!validate(data)) {
      check.errors = validate.errors
      return false
    }
    const scan: TextScan = { listed: [], count: 0 }
    scanText(data, shape, [], scan)
    if (scan.count === 0) {
      check.errors = null
      return true
    }
    const errors: ErrorObject[] = scan.listed.map(({ path, message }) => ({ keyword: 'x-text', instancePath: path, schemaPath: '#', params: {}, message }))
    if (scan.count > scan.listed.length) errors.push({ keyword: MORE, instancePath: '', schemaPath: '#', params: { count: scan.count - scan.listed.length } })
    check.errors = errors
    return false
  }) as ValidateFunction
  return check
}

function fieldName(instancePath: string, child?: string): string {
  const segments = instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (child !== undefined) segments.push(child)
  return segments.reduce((name, segment) => (/^\d+$/.test(segment) ? `${name}[${segment}]` : name === '' ? segment : `${name}.${segment}`), '')
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  boolean: 'a boolean value',
  integer: 'an integer number',
  number: 'a number',
  object: 'an object',
  array: 'an array',
}

function describeError(error: ErrorObject): string {
  const custom = (error.parentSchema as Record<string, unknown> | undefined)?.['x-message']
  if (typeof custom === 'string') return custom
  const params = error.params as Record<string, unknown>
  const field = fieldName(error.instancePath)
  switch (error.keyword) {
    case 'x-rules':
      return error.message ?? 'is invalid'
    case 'required':
      return `${fieldName(error.instancePath, String(params.missingProperty))} is required`
    case 'additionalProperties':
      return `property ${fieldName(error.instancePath, String(params.additionalProperty))} should not exist`
    case 'type':
      if (field === '') return 'Request body must be a JSON object'
      return `${field} must be ${TYPE_WORDS[String(params.type)] ?? String(params.type)}`
    case 'enum':
      return `${field} must be one of the following values: ${(params.allowedValues as unknown[]).join(', ')}`
    case 'maxLength':
      return `${field} must be shorter than or equal to ${String(params.limit)} characters`
    case 'minLength':
      return params.limit === 1
        ? `${field} should not be empty`
        : `${field} must be longer than or equal to ${String(params.limit)} characters`
    case 'minimum':
      return `${field} must not be less than ${String(params.limit)}`
    case 'maximum':
      return `${field} must not be greater than ${String(params.limit)}`
    case 'maxItems':
      return `${field} must contain no more than ${String(params.limit)} elements`
    case 'format':
      return params.format === 'email' ? `${field} must be an email` : `${field} must be a valid ${String(params.format)}`
    case 'pattern':
      return `${field} must match ${String(params.pattern)}`
    default:
      return `${field} ${error.message ?? 'is invalid'}`
  }
}

/** A failure cut to MAX_FAILURE_LENGTH characters, never between the halves of a surrogate pair. */
function cut(text: string): string {
  if (text.length <= MAX_FAILURE_LENGTH) return text
  let end = MAX_FAILURE_LENGTH - 1
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end -= 1
  return `${text.slice(0, end)}…`
}

/**
 * One message naming the failed fields and rules, in schema order, without repeats: the first
 * MAX_LISTED_FAILURES, then "; and N more" with N the count of the others (exact: the errors it
 * is given are bounded, and a body refused for its size brings its count of unknown properties).
 */
export function validationMessage(errors: readonly ErrorObject[]): string {
  const listed = new Set<string>()
  const others = new Set<string>()
  let counted = 0
  for (const error of errors) {
    if (error.keyword === MORE) {
      counted += Number((error.params as Record<string, unknown>).count)
      continue
    }
    const text = cut(describeError(error))
    if (listed.has(text)) continue
    if (listed.size < MAX_LISTED_FAILURES) listed.add(text)
    else others.add(text)
  }
  const more = others.size + counted
  const message = [...listed].join('; ')
  return more === 0 ? message : `${message}; and ${more} more`
}
