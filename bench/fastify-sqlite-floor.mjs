// bench:profile's floor for GET /webhooks/{id} on SQLite: a bare Fastify 5 (the project's own,
// logger off, no hooks) that does only what any implementation of that request must do against
// this database: read the key by its client key and check the secret's SHA-256 digest, then read
// the webhook (its total_events summed, as the server's statement does), each with better-sqlite3
// in WAL mode on the same file, and answer the row as JSON. No rate limit, no request id, no
// logging, no error bodies: what is left between this and the server is the server's own.
// Arguments: the SQLite file, then the port (0 or none: a free one); sends the port over IPC and
// exits when the parent goes away.
import { hash, timingSafeEqual } from 'node:crypto'
import Database from 'better-sqlite3'
import Fastify from 'fastify'

const sqlite = new Database(process.argv[2], { fileMustExist: true })
sqlite.pragma('journal_mode = WAL')
// The key and the webhook in one statement: one read transaction, one lock taken and let go.
const keyAndWebhook = sqlite.prepare(
  `select k.active, k.secret_digest, w.*,
     (select cast(coalesce(sum(c.events), 0) as integer) from webhook_event_counts c where c.webhook_id = w.id) as total_events
   from api_keys k left join webhooks w on w.app_id = k.app_id and w.id = ? and w.deleted_at is null
   where k.client_key = ?`,
)

const app = Fastify({ logger: false })
// The same answer as the server's, serialised from a schema as the server's is.
const WEBHOOK = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    url: { type: 'string' },
    isActive: { type: 'boolean' },
    encrypted: { type: 'boolean' },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
    delivery_stats: {
      type: 'object',
      properties: {
        total_events: { type: 'integer' },
        successful_deliveries: { type: 'integer' },
        failed_deliveries: { type: 'integer' },
        last_delivery: { type: ['string', 'null'] },
      },
    },
  },
}
app.get('/api/v0/webhooks/:id', { schema: { response: { 200: WEBHOOK } } }, async (request, reply) => {
  const row = keyAndWebhook.get(request.params.id, request.headers['x-client-key'])
  const presented = Buffer.from(hash('sha256', String(request.headers['x-client-secret']), 'hex'), 'latin1')
  if (row === undefined || !row.active || !timingSafeEqual(presented, Buffer.from(row.secret_digest, 'latin1'))) return reply.code(401).send({ error: 'no' })
  if (row.id === null) return reply.code(404).send({ error: 'no' })
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    isActive: row.is_active === 1,
    encrypted: row.encrypted === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
    delivery_stats: { total_events: row.total_events, successful_deliveries: row.successful_deliveries, failed_deliveries: row.failed_deliveries, last_delivery: row.last_delivery },
  }
})
await app.listen({ port: Number(process.argv[3] ?? 0), host: '127.0.0.1' })
const address = app.server.address()
process.send?.({ port: typeof address === 'object' && address !== null ? address.port : 0 })
process.on('disconnect', () => process.exit(0))
