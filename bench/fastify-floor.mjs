// bench:profile's floor for GET /webhooks/{id}: a bare Fastify 5 (the project's own, logger off,
// no hooks) doing only what any server must do for that request on the same database: one
// statement reads the key by its client key and the webhook beside it (its total_events summed as
// the server's statement sums them), the secret's SHA-256 digest is compared in constant time, and
// the webhook is answered with the server's own toWebhook and WebhookSchema (from the build: run
// after `npm run build`). No rate limit (on PostgreSQL + Redis, no Redis call), request id,
// logging or error bodies: what the server spends above this is its own.
// Arguments: the SQLite file or a postgres:// URL, then the port (0 or none: a free one); sends
// the port over IPC and exits when the parent goes away. On PostgreSQL: a pool of 10 connections
// (the server's default), the statement prepared once per connection, as the server prepares its own.
import { hash, timingSafeEqual } from 'node:crypto'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import pg from 'pg'
import { toWebhook } from '../dist/resources/webhooks/objects.js'
import { WebhookSchema } from '../dist/resources/webhooks/schemas.js'

const KEY_AND_WEBHOOK = `select k.active, k.secret_digest, w.*,
     (select cast(coalesce(sum(c.events), 0) as integer) from webhook_event_counts c where c.webhook_id = w.id) as total_events
   from api_keys k left join webhooks w on w.app_id = k.app_id and w.id = $1 and w.deleted_at is null
   where k.client_key = $2`

/** The key and the webhook in one statement (one read transaction on SQLite: one lock taken and let go). */
function keyAndWebhookReader(target) {
  if (target.startsWith('postgres')) {
    const pool = new pg.Pool({ connectionString: target, max: 10 })
    return async (id, clientKey) => (await pool.query({ name: 'floor', text: KEY_AND_WEBHOOK, values: [id, clientKey] })).rows[0]
  }
  const sqlite = new Database(target, { fileMustExist: true })
  sqlite.pragma('journal_mode = WAL')
  const statement = sqlite.prepare(KEY_AND_WEBHOOK.replace('$1', '?').replace('$2', '?'))
  return async (id, clientKey) => statement.get(id, clientKey)
}
const keyAndWebhook = keyAndWebhookReader(process.argv[2])

const app = Fastify({ logger: false })
// The same answer as the server's: its mapping and its response schema (from the build).
app.get('/api/v0/webhooks/:id', { schema: { response: { 200: WebhookSchema } } }, async (request, reply) => {
  const row = await keyAndWebhook(request.params.id, request.headers['x-client-key'])
  const presented = Buffer.from(hash('sha256', String(request.headers['x-client-secret']), 'hex'), 'latin1')
  if (row === undefined || row.active !== 1 || !timingSafeEqual(presented, Buffer.from(row.secret_digest, 'latin1'))) return reply.code(401).send({ error: 'no' })
  if (row.id === null) return reply.code(404).send({ error: 'no' })
  return toWebhook(row)
})
await app.listen({ port: Number(process.argv[3] ?? 0), host: '127.0.0.1' })
const address = app.server.address()
process.send?.({ port: typeof address === 'object' && address !== null ? address.port : 0 })
process.on('disconnect', () => process.exit(0))
