import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { importCircles, importGraph, repositoryLayerViolations } from './imports.js'

const SRC = fileURLToPath(new URL('../../src', import.meta.url))

describe('the import graph of src/', () => {
  it('has no import circle, type imports included', () => {
    expect(importCircles(importGraph(SRC))).toEqual([])
  })

  it('the checker sees a circle where there is one', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ])
    expect(importCircles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']])
  })

  it('no repository imports route, API schema, auth, plugin, HTTP or delivery code', () => {
    const graph = importGraph(SRC)
    // The rule would pass vacuously if the repositories were not where it looks for them.
    expect(graph.has('events/deliveries-repository.ts')).toBe(true)
    expect(graph.has('apps/repository.ts')).toBe(true)
    expect(graph.has('resources/customers/repository.ts')).toBe(true)
    expect(graph.has('resources/webhooks/delivery-log-repository.ts')).toBe(true)
    expect(repositoryLayerViolations(graph)).toEqual([])
  })

  it('the checker sees a repository reaching past the storage layer', () => {
    const graph = new Map([
      ['resources/foo/repository.ts', ['resources/foo/schemas.ts', 'db/errors.ts', 'resources/foo/objects.ts']],
      ['resources/foo/delivery-log-repository.ts', ['delivery/retry.ts']],
      ['db/repositories/bar.ts', ['auth/credentials.ts', 'db/time.ts', 'errors.ts']],
      ['db/sqlite/open.ts', ['schemas/common.ts']],
      // Not repositories: they may import anything.
      ['resources/foo/routes.ts', ['auth/authenticate.ts', 'resources/foo/schemas.ts']],
      ['resources/foo/objects.ts', ['resources/foo/schemas.ts']],
    ])
    expect(repositoryLayerViolations(graph)).toEqual([
      'db/repositories/bar.ts -> auth/credentials.ts',
      'db/repositories/bar.ts -> errors.ts',
      'db/sqlite/open.ts -> schemas/common.ts',
      'resources/foo/delivery-log-repository.ts -> delivery/retry.ts',
      'resources/foo/repository.ts -> resources/foo/objects.ts',
      'resources/foo/repository.ts -> resources/foo/schemas.ts',
    ])
  })
})
