import { defineManifest } from '../manifest.js'

export const eventsManifest = defineManifest({
  name: 'events',
  scopes: ['event:read'],
  eventTypes: [],
  operations: [
    { method: 'GET', path: '/events', operationId: 'eventControllerFindAll', scope: 'event:read' },
    { method: 'GET', path: '/events/:id', operationId: 'eventControllerFindOne', scope: 'event:read' },
  ],
})
