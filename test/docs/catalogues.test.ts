import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EVENT_TYPES, SCOPES } from '../../src/resources/index.js'
import { ROOT } from '../processes.js'

/** The lists the docs give of what the code derives from RESOURCES, kept to the letter. */

function read(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8')
}

describe('the docs list what the resources declare', () => {
  it("docs/api.md's scope list is exactly the scopes a key may be given", () => {
    const paragraph = /^Scopes: ([\s\S]*?)\.\n/m.exec(read('docs/api.md'))?.[1] ?? ''
    const listed = [...paragraph.matchAll(/`([^`]+)`/g)].map((match) => match[1])
    expect([...listed].sort()).toEqual([...SCOPES].sort())
  })

  it("docs/webhook-delivery.md's event table names every event type, and no other", () => {
    const section = /## Events\n([\s\S]*?)\n## /.exec(read('docs/webhook-delivery.md'))?.[1] ?? ''
    const rows = section.split('\n').filter((line) => line.startsWith('| `'))
    const named = rows.flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([a-z_.]+)`/g)].map((match) => match[1]))
    expect([...new Set(named)].sort()).toEqual([...new Set(EVENT_TYPES)].sort())
  })
})
