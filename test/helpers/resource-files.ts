import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Resource } from '../../src/resources/resource.js'

/**
 * The path of `test/resources/<name>/<file>` when the resource has one: where a resource declares
 * its cases for a test that runs over every resource (the security kit, the generated client).
 */
export function resourceFile(resource: Resource, file: string): string | undefined {
  const path = fileURLToPath(new URL(`../resources/${resource.manifest.name}/${file}`, import.meta.url))
  return existsSync(path) ? path : undefined
}
