/**
 * The claim's search for due work as the number of waiting webhooks grows: N webhooks each hold
 * one pending retry due in a day, and DUE more hold one delivery due now. For each N it times
 * QueueScan.due as a claim with every slot free makes it (256 wanted: it reads windows until it
 * has looked at every waiting webhook) and the longest single read among them: on SQLite a read
 * holds the event loop, so the longest read is how long the server can freeze. Beside it, in the
 * same run, the same scan as one read over every waiting webhook (how the claim read before
 * windows).
 *
 *   npx tsx bench/claim-scan.ts [-- --webhooks 1000,10000,100000 --due 10]
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/claim-scan.ts
 */
import { parseArgs } from 'node:util'
import { sql } from 'kysely'
import { backendOf, type Db, planningRead } from '../src/db/database.js'
import { openDatabase } from '../src/modules/database.js'
import { AppsRepository } from '../src/apps/repository.js'
import { DeliveriesRepository } from '../src/events/deliveries-repository.js'
import { WebhooksRepository } from '../src/resources/webhooks/repository.js'
import { QUEUE_WINDOW, QueueScan } from '../src/delivery/queue-scan.js'
import { benchDatabase } from './database.js'

const { values } = parseArgs({ options: { webhooks: { type: 'string', default: '1000,10000,100000' }, due: { type: 'string', default: '10' } } })
const sizes = values.webhooks.split(',').map(Number)
const due = Number(values.due)
if (sizes.some((n) => !Number.isInteger(n) || n <= 0) || !Number.isInteger(due) || due < 0) throw new Error('--webhooks: positive integers; --due: an integer >= 0')
const REPEATS = 10

async function seed(db: Db, waiting: number): Promise<void> {
  const app = await new AppsRepository(db).createApp('claim scan')
  const template = await new WebhooksRepository(db).create(app.id, { name: 't', url: 'http://127.0.0.1:9/hook', isActive: true, encrypted: false, signingSecret: `whsec_${Buffer.alloc(32).toString('base64')}` })
  const now = new Date().toISOString()
  const later = new Date(Date.now() + 86_400_000).toISOString()
  await sql`insert into events (id, app_id, type, payload, created_at) values ('claim-scan-event', ${app.id}, 'tax.created', '{}', ${now})`.execute(db)
  const total = waiting + due
  const series = backendOf(db) === 'postgres' ? sql`select i from generate_series(1, ${total}) i` : sql`with recursive s(i) as (select 1 union all select i + 1 from s where i < ${total}) select i from s`
  // ids in scan order: 'q' + a zero-padded number; the due ones are spread evenly among the waiting
  await sql`insert into webhooks (id, app_id, name, url, is_active, encrypted, signing_secret, successful_deliveries, failed_deliveries, created_at, updated_at, consecutive_failures)
    select 'q' || substr('0000000000' || cast(i as text), -10), app_id, name, url, is_active, encrypted, signing_secret, 0, 0, created_at, updated_at, 0
    from (${series}) s cross join webhooks where webhooks.id = ${template.id}`.execute(db)
  /** every this-many-th webhook is due (none when no number up to `total` is a multiple) */
  const every = due === 0 ? total + 1 : Math.floor(total / due)
  await sql`insert into deliveries (id, event_id, webhook_id, app_id, status, attempts, next_attempt_at, created_at, updated_at)
    select 'd' || id, 'claim-scan-event', id, app_id, 'pending', 1,
      case when cast(substr(id, 2) as integer) % ${every} = 0 then ${now} else ${later} end, ${now}, ${now}
    from webhooks where id like 'q%'`.execute(db)
  await sql`analyze`.execute(db)
}

const ms = (n: number) => n.toFixed(2)
const lines = ['| waiting webhooks | due found | claim: windows of 256 (ms) | longest single read (ms) | one read over all (ms) |', '|---|---|---|---|---|']
let label = ''
for (const waiting of sizes) {
  const database = await benchDatabase()
  label = database.label
  const db = await openDatabase(database.location)
  await seed(db, waiting)
  const timed = async <T>(read: () => Promise<T>): Promise<[T, number]> => {
    const started = performance.now()
    const result = await read()
    return [result, performance.now() - started]
  }
  const now = () => new Date().toISOString()
  // The claim, from the first webhook each time (as a dispatcher just started), two warm-ups first.
  const claims: number[] = []
  let found = 0
  for (let i = 0; i < REPEATS + 2; i++) {
    const [queues, took] = await timed(() => new QueueScan(db).due(now(), [], 256))
    found = queues.length
    if (i >= 2) claims.push(took)
  }
  // The same windows read one by one, for the longest single read.
  let longest = 0
  for (let after: string | undefined = ''; after !== undefined; ) {
    const start: string = after
    const [window, took] = await timed(() => planningRead(db, (tx) => new DeliveriesRepository(tx).dueQueues(now(), [], { after: start, size: QUEUE_WINDOW })))
    longest = Math.max(longest, took)
    after = window.next
  }
  const single: number[] = []
  for (let i = 0; i < REPEATS + 2; i++) {
    const [, took] = await timed(() => planningRead(db, (tx) => new DeliveriesRepository(tx).dueQueues(now(), [], { after: '', size: waiting + due + 1 })))
    if (i >= 2) single.push(took)
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
  lines.push(`| ${waiting.toLocaleString('en-US')} | ${found} | ${ms(mean(claims))} | ${ms(longest)} | ${ms(mean(single))} |`)
  await db.destroy()
  await database.drop()
}
console.log(`\n## bench/claim-scan.ts: ${label}; ${due} due; mean of ${REPEATS} claims\n`)
console.log(lines.join('\n'))
