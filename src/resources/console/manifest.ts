import { defineManifest } from '../manifest.js'

/**
 * The console (docs/console.md): pages an application's owner opens through a single-use link.
 * A key makes such a link only with console:link, which no key has unless it is named.
 */
export const consoleManifest = defineManifest({
  name: 'console',
  scopes: ['console:link'],
  optInScopes: ['console:link'],
  eventTypes: [],
  operations: [{ method: 'POST', path: '/console/links', operationId: 'consoleControllerCreateLink', scope: 'console:link' }],
})
