import Fastify from 'fastify'
import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRules } from '../../src/validation/rules.js'
import { createValidatorCompiler } from '../../src/validation/validator.js'
import { startTestServer, type TestServer } from '../helper.js'

/** Rules named in schemas (`x-rules`) are looked up when the schema is compiled, not on the first request. */
const rules = createRules({ allowHttpLoopback: true })
const UNKNOWN_RULE = 'x-rules names an unknown validation rule "webhok" (known rules: liquidationAddress, webhook)'
const misspelt = Type.Object({ name: Type.String() }, { 'x-rules': 'webhok' })

describe('x-rules names', () => {
  it('compiling a schema that names an unknown rule throws, naming it and the known ones', () => {
    const compile = createValidatorCompiler(rules)
    for (const httpPart of ['body', 'querystring']) {
      expect(() => compile({ schema: misspelt, httpPart, method: 'POST', url: '/things' })).toThrow(UNKNOWN_RULE)
    }
  })

  it('an app with such a route fails when it gets ready, naming the route and the rule', async () => {
    const app = Fastify()
    app.setValidatorCompiler(createValidatorCompiler(rules))
    app.post('/things', { schema: { body: misspelt } }, async () => ({}))
    const failure = await app.ready().then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(failure).toBeInstanceOf(Error)
    expect((failure as Error).message).toContain('POST: /things')
    expect((failure as Error).message).toContain(UNKNOWN_RULE)
    await app.close().catch(() => undefined)
  })

  it('every known rule compiles', () => {
    const compile = createValidatorCompiler(rules)
    for (const name of Object.keys(rules)) {
      expect(() => compile({ schema: Type.Object({}, { 'x-rules': name }), httpPart: 'body', method: 'POST', url: '/things' })).not.toThrow()
    }
  })
})

describe('the real app', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => server.close())

  it('builds, and its rules run on requests', async () => {
    const key = await server.createKey()
    const res = await server.request('POST', '/api/v0/webhooks', { key, body: { name: 'hook', url: 'ftp://example.com/hook' } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'url must use https (http is allowed only to a loopback host outside production)' })
  })
})
