import { loadavg } from 'node:os'
import { createCredentials } from '../test/multi-instance/delivery-helpers.js'
import { closedPort } from '../test/multi-instance/limits-helpers.js'
import { type FormationNode, PgFormation } from '../test/helpers/pg-formation.js'
import { startServerProcess } from '../test/helpers/server-process.js'
import { cleanUp } from '../test/processes.js'

/**
 * How long a PostgreSQL failover stops writes: a pg_auto_failover formation (monitor, primary,
 * synchronous standby; docs/several-instances.md's walk-through, with its shortened health
 * checks), one server given the formation URI and two writers on it, and FAILOVER_ROUNDS (10)
 * failovers of each kind: the primary's machine dying (postmaster and keeper killed with kill -9;
 * the node is started again and rejoins as the standby before the next round) and
 * `pg_autoctl perform switchover`. For each: from the kill (or the switchover's start) to the
 * standby taking writes, and from then to the server's first write that succeeds; the answers
 * meanwhile (503 with Retry-After, never a 500), and the slowest.
 */

const ROUNDS = Number(process.env.FAILOVER_ROUNDS ?? 10)

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

function quantiles(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b)
  // Nearest rank: the smallest value with at least p of them at or below it.
  const at = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN
  const s = (ms: number) => (ms / 1000).toFixed(1)
  return `min ${s(at(0))} s, median ${s(at(0.5))} s, p90 ${s(at(0.9))} s, max ${s(sorted[sorted.length - 1] ?? Number.NaN)} s`
}

interface Answer {
  status: number
  retryAfter: boolean
  sentAt: number
  ms: number
}

async function main(): Promise<void> {
  const load = () => loadavg().map((value) => value.toFixed(1)).join(' ')
  process.stdout.write(`pg failover bench: ${ROUNDS} rounds of each kind; load ${load()}\n`)
  const started = performance.now()
  const formation = await PgFormation.start({ monitorPort: await closedPort(), nodePorts: [await closedPort(), await closedPort()] })
  let writing = true
  try {
    const url = await formation.databaseUrl()
    process.stdout.write(`formation up in ${((performance.now() - started) / 1000).toFixed(1)} s: ${url}\n`)
    const server = await startServerProcess({ HOST: '127.0.0.1', NODE_ENV: 'development', LOG_LEVEL: 'info', DATABASE_URL: url }, { timeoutMs: 60_000 })
    // A key of its own with a limit above the load: the development key's (100 an hour) would
    // answer 429 within the first rounds, and no write would ever succeed again.
    const key = (await createCredentials(url, 'failover-bench')).headers
    const answers: Answer[] = []
    const writers = [0, 1].map(async (writer) => {
      for (let n = 0; writing; n++) {
        const sentAt = performance.now()
        // No answer at all (the server gone, the request timed out) counts as status 0.
        const answer = await fetch(`${server.baseUrl}/api/v0/customers`, {
          method: 'POST',
          headers: { ...key, 'content-type': 'application/json' },
          body: JSON.stringify({ first_name: `bench-${writer}-${n}`, last_name: 'Failover', phone_number: '+14155550100' }),
          signal: AbortSignal.timeout(60_000),
        }).then(
          async (res) => {
            await res.text()
            return { status: res.status, retryAfter: res.headers.get('retry-after') !== null }
          },
          () => ({ status: 0, retryAfter: false }),
        )
        answers.push({ ...answer, sentAt, ms: performance.now() - sentAt })
        await sleep(answer.status === 201 ? 20 : 100)
      }
    })

    const figures: Record<'kill -9' | 'switchover', { promotion: number[]; resume: number[] }> = { 'kill -9': { promotion: [], resume: [] }, switchover: { promotion: [], resume: [] } }
    for (let round = 0; round < ROUNDS * 2; round++) {
      const kind = round % 2 === 0 ? 'kill -9' : 'switchover'
      const primary = (await formation.writable()) as FormationNode
      const from = performance.now()
      let switching: Promise<void> | undefined
      if (kind === 'kill -9') formation.kill9(primary)
      else switching = formation.switchover()
      let promotedAt: number | undefined
      while (promotedAt === undefined) {
        const now = performance.now()
        const writable = await formation.writable()
        if (writable !== undefined && writable !== primary) promotedAt = now
        else if (now - from > 120_000) throw new Error(`round ${round}: no promotion within 120 s`)
        else await sleep(100)
      }
      const promoted = promotedAt
      while (!answers.some((answer) => answer.status === 201 && answer.sentAt > promoted)) {
        if (performance.now() - promoted > 60_000) {
          const since = answers.filter((answer) => answer.sentAt > promoted).map((answer) => answer.status)
          throw new Error(`round ${round}: no write within 60 s of the promotion; answers since: ${[...new Set(since)].map((status) => `${since.filter((each) => each === status).length}× ${status}`).join(', ')}`)
        }
        await sleep(20)
      }
      const resumed = Math.min(...answers.filter((answer) => answer.status === 201 && answer.sentAt > promoted).map((answer) => answer.sentAt + answer.ms))
      figures[kind].promotion.push(promoted - from)
      figures[kind].resume.push(resumed - promoted)
      process.stdout.write(`round ${round + 1} (${kind}): promoted ${((promoted - from) / 1000).toFixed(1)} s after, writes resumed ${((resumed - promoted) / 1000).toFixed(1)} s after the promotion; load ${load()}\n`)
      await switching
      if (kind === 'kill -9') formation.restart(primary)
      // The next round starts from a primary with its synchronous standby again.
      await formation.settled(120_000)
    }
    writing = false
    await Promise.all(writers)
    server.child.kill('SIGKILL')

    const statuses = new Map<number, number>()
    for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    for (const [kind, { promotion, resume }] of Object.entries(figures)) {
      process.stdout.write(`${kind} (${promotion.length}): standby takes writes ${quantiles(promotion)}; writes resume after the promotion ${quantiles(resume)}\n`)
    }
    const refused = answers.filter((answer) => answer.status === 503)
    process.stdout.write(
      `answers: ${[...statuses].map(([status, n]) => `${n}× ${status}`).join(', ')}; 503 without Retry-After: ${refused.filter((answer) => !answer.retryAfter).length}; ` +
        `slowest answer ${(Math.max(...answers.map((answer) => answer.ms)) / 1000).toFixed(1)} s; load ${load()}\n`,
    )
  } finally {
    writing = false
    cleanUp()
    await formation.stop()
  }
}

await main()
