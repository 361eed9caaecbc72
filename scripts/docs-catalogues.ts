/**
 * Writes the docs' catalogues (the scopes in docs/api.md, the event table in
 * docs/webhook-delivery.md) from the resources' manifests: `npm run docs:catalogues`.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { CATALOGUES, withCatalogue } from './catalogues.js'

const root = fileURLToPath(new URL('..', import.meta.url))
for (const catalogue of CATALOGUES) {
  const path = `${root}${catalogue.file}`
  const text = readFileSync(path, 'utf8')
  const written = withCatalogue(text, catalogue)
  if (written === text) continue
  writeFileSync(path, written)
  process.stdout.write(`${catalogue.file}: catalogue ${catalogue.name} written\n`)
}
