import { RESOURCES } from '../src/resources/index.js'
import type { Resource } from '../src/resources/resource.js'

/**
 * The docs' catalogues of what the resources declare, each a block of a doc between two marker
 * comments, written from the manifests by `npm run docs:catalogues` (scripts/docs-catalogues.ts);
 * test/docs/catalogues.test.ts fails while a doc differs from what it writes.
 */
export interface Catalogue {
  /** the doc, from the repository's root */
  file: string
  name: string
  render: (resources: readonly Resource[]) => string
}

/** The scopes a key may be given: a line of them per resource. */
function scopes(resources: readonly Resource[]): string {
  const lines = resources.filter((resource) => resource.manifest.scopes.length > 0).map((resource) => resource.manifest.scopes.map((scope) => `\`${scope}\``).join(', '))
  return `Scopes: ${lines.join(',\n')}.`
}

/** The event table: each manifest's rows; every event type must be in exactly one. */
function events(resources: readonly Resource[]): string {
  const rows: string[] = []
  for (const { manifest } of resources) {
    const described = (manifest.eventRows ?? []).flatMap((row) => row.types)
    for (const type of manifest.eventTypes) {
      const count = described.filter((candidate) => candidate === type).length
      if (count !== 1) throw new Error(`event type ${type} is in ${count} of the eventRows of ${manifest.name}'s manifest: give it exactly one (src/resources/${manifest.name}/manifest.ts)`)
    }
    for (const row of manifest.eventRows ?? []) rows.push(`| ${row.types.map((type) => `\`${type}\``).join(' / ')} | ${row.emittedBy} | ${row.data} |`)
  }
  return ['| Event | Emitted by | `data` |', '|---|---|---|', ...rows].join('\n')
}

export const CATALOGUES: readonly Catalogue[] = [
  { file: 'docs/api.md', name: 'scopes', render: scopes },
  { file: 'docs/webhook-delivery.md', name: 'events', render: events },
]

function markers(name: string): { begin: string; end: string } {
  return {
    begin: `<!-- catalogue ${name}: written by npm run docs:catalogues from the resources' manifests; edit those, not this -->`,
    end: `<!-- end of catalogue ${name} -->`,
  }
}

/** `text` (the doc's) with the catalogue's block as the manifests of `resources` give it. */
export function withCatalogue(text: string, catalogue: Catalogue, resources: readonly Resource[] = RESOURCES): string {
  const { begin, end } = markers(catalogue.name)
  const start = text.indexOf(begin)
  const stop = text.indexOf(end)
  if (start === -1 || stop < start) throw new Error(`${catalogue.file} has no catalogue ${catalogue.name}: put its two lines where it goes:\n${begin}\n${end}`)
  return `${text.slice(0, start)}${begin}\n\n${catalogue.render(resources)}\n\n${text.slice(stop)}`
}
