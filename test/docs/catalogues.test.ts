// vitest: sqlite project only — the documents against the code, no backend.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CATALOGUES, withCatalogue } from '../../scripts/catalogues.js'
import { EVENT_TYPES, SCOPES } from '../../src/resources/index.js'
import { defineManifest } from '../../src/resources/manifest.js'
import { defineResource } from '../../src/resources/resource.js'
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

  it.each(CATALOGUES.map((catalogue) => [`${catalogue.file}'s ${catalogue.name}`, catalogue] as const))('%s are what `npm run docs:catalogues` writes from the manifests', (_, catalogue) => {
    const text = read(catalogue.file)
    expect(text).toBe(withCatalogue(text, catalogue))
  })

  it('an event type in no row of its manifest, or in two, stops the catalogue', () => {
    const events = CATALOGUES.find((catalogue) => catalogue.name === 'events')
    if (events === undefined) throw new Error('no events catalogue')
    const text = read(events.file)
    const manifest = defineManifest({
      name: 'gadgets',
      scopes: ['gadget:read'],
      eventTypes: ['gadget.created', 'gadget.updated'],
      eventRows: [{ types: ['gadget.created'], emittedBy: '`POST /gadgets`', data: 'the gadget' }],
      operations: [],
    })
    expect(() => withCatalogue(text, events, [defineResource({ manifest })])).toThrow("event type gadget.updated is in 0 of the eventRows of gadgets's manifest")
    const twice = { ...manifest, eventRows: [{ types: ['gadget.created', 'gadget.updated'], emittedBy: '', data: '' }, { types: ['gadget.updated'], emittedBy: '', data: '' }] }
    expect(() => withCatalogue(text, events, [defineResource({ manifest: twice })])).toThrow("event type gadget.updated is in 2 of the eventRows of gadgets's manifest")
  })
})
