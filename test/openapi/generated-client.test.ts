import { describe, expect, it } from 'vitest'
import { RESOURCES } from '../../src/resources/index.js'
import { resourceFile } from '../helpers/resource-files.js'
import { coverage, useGeneratedClient } from './generated-client.js'

/**
 * A TypeScript client is generated from the document the server serves (@hey-api/openapi-ts, its
 * fetch client, dates parsed into Date objects), then every operation is driven through it against
 * the real server (./generated-client.ts). Its function names are the document's operationIds, so
 * a name that drifts from the published client's fails here. One `it` per operation, in its
 * resource's test/resources/<name>/generated-client.ts (`generatedClientCases`), run here in
 * RESOURCES' order; the last test fails until every operation in the document has one.
 */
useGeneratedClient()

for (const resource of RESOURCES) {
  const file = resourceFile(resource, 'generated-client.ts')
  if (file === undefined) continue
  const module: { generatedClientCases?: () => void } = await import(file)
  if (module.generatedClientCases === undefined) throw new Error(`${file} must export generatedClientCases`)
  module.generatedClientCases()
}

describe('coverage', () => {
  it('every operation in the served document was driven through the generated client above', () => {
    const { inDocument, driven } = coverage()
    expect(inDocument.sort()).toEqual(driven.sort())
  })
})
