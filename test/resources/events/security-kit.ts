import { eventsManifest } from '../../../src/resources/events/manifest.js'
import { created, defineSecurityKit } from '../../auth/security-kit.js'

export const securityKit = defineSecurityKit(eventsManifest, {
  /** the event of a customer's creation */
  async fixtures({ server, key }) {
    const customer = await created(server, key, '/api/v0/customers', { first_name: 'Eve', last_name: 'Event', phone_number: '+15550199' })
    const event = await server.app.db.selectFrom('events').select('id').where('app_id', '=', key.appId).where('payload', 'like', `%${customer}%`).executeTakeFirstOrThrow()
    return { event: event.id }
  },
  params: { id: 'event' },
  operations: {
    eventControllerFindOne: { tenancy: { notFound: 'Event not found', readBack: 'eventControllerFindOne' } },
  },
})
