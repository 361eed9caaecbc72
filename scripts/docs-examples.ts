/**
 * Writes each guide's "Every operation, with an example" section (docs/*.md) from the OpenAPI
 * document a server serves: `npm run docs:examples`. test/docs/examples.test.ts fails until the
 * guides are what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { startTestServer } from '../test/helper.js'
import { type Document, guideSections, withSection } from './operation-examples.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const server = await startTestServer()
try {
  const document = (await server.request<Document>('GET', '/api/v0/openapi.json')).body
  for (const [guide, section] of guideSections(document)) {
    const path = `${root}docs/${guide}`
    const text = readFileSync(path, 'utf8')
    const written = withSection(text, section)
    if (written === text) continue
    writeFileSync(path, written)
    process.stdout.write(`docs/${guide}: operation examples written\n`)
  }
} finally {
  await server.close()
}
