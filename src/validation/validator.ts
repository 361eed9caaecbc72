import { Ajv, type ErrorObject, type Options, type SchemaValidateFunction, type ValidateFunction } from 'ajv'
import type { FastifySchemaCompiler } from 'fastify'
import type { RuleSet } from './rules.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
// Deliberately simple: one @, no spaces, a dot in the domain. RFC 5322 in full accepts more
// than any mail system delivers to.
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

function createAjv(options: Options, rules: RuleSet): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, removeAdditional: false, useDefaults: true, strict: false, ...options })
  ajv.addFormat('uuid', UUID)
  ajv.addFormat('email', EMAIL)
  ajv.addFormat('date-time', DATE_TIME)
  // Annotation only: the whole 400 message used when this subschema fails.
  ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' })
  const validate: SchemaValidateFunction = (ruleName: string, data: Record<string, unknown>) => {
    const rule = rules[ruleName]
    if (rule === undefined) throw new Error(`unknown validation rule ${ruleName}`)
    const problems = rule(data)
    validate.errors = problems.map((message) => ({ keyword: 'x-rules', message, params: {} }))
    return problems.length === 0
  }
  ajv.addKeyword({ keyword: 'x-rules', type: 'object', schemaType: 'string', errors: true, validate })
  return ajv
}

/**
 * Bodies are validated strictly (no type coercion: 10.2 is not "10.2"); query strings and
 * path parameters arrive as text, so they are coerced ("10" → 10, "true" → true).
 */
export function createValidatorCompiler(rules: RuleSet): FastifySchemaCompiler<unknown> {
  const strict = createAjv({ coerceTypes: false }, rules)
  const coercing = createAjv({ coerceTypes: 'array' }, rules)
  return ({ schema, httpPart }) => withoutNul((httpPart === 'body' ? strict : coercing).compile(schema as object))
}

/**
 * The path (JSON pointer) of the first string in `data` that holds a NUL character, if any. The
 * path is built only on the way back from a hit: every request's data passes through here.
 */
function nulPath(data: unknown): string | undefined {
  if (typeof data === 'string') return data.includes('\u0000') ? '' : undefined
  if (typeof data !== 'object' || data === null) return undefined
  for (const [key, value] of Array.isArray(data) ? data.entries() : Object.entries(data)) {
    const found = nulPath(value)
    if (found !== undefined) return `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}${found}`
  }
  return undefined
}

/**
 * No stored or compared text holds NUL: PostgreSQL's text refuses it (an error mid-query), SQLite
 * would store it. Refusing it here, for every body, query string and path parameter, makes both
 * backends answer the same 400 naming the field.
 */
function withoutNul(validate: ValidateFunction): ValidateFunction {
  const checked = ((data: unknown) => {
    if (!validate(data)) {
      checked.errors = validate.errors
      return false
    }
    const path = nulPath(data)
    if (path === undefined) {
      checked.errors = null
      return true
    }
    checked.errors = [{ keyword: 'x-text', instancePath: path, schemaPath: '#', params: {}, message: 'must not contain NUL characters' }]
    return false
  }) as ValidateFunction
  return checked
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

/** One message naming every failed field and rule, in schema order, without repeats. */
export function validationMessage(errors: readonly ErrorObject[]): string {
  return [...new Set(errors.map(describeError))].join('; ')
}
