import { defineResource } from '../resource.js'
import { eventsManifest } from './manifest.js'
import { eventRoutes, type EventRoutesOptions } from './routes.js'

/** The outbox's events, read back (the outbox itself is src/events/, a platform module). */
export const events = defineResource({
  manifest: eventsManifest,
  configure: ({ eventTypes }): EventRoutesOptions => ({ eventTypes }),
  routes: eventRoutes,
})
