import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { importCircles, importGraph } from './imports.js'

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
})
