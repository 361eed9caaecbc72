// vitest: postgres project only — a Redis master, replica and three sentinels of its own, beside the suite's PostgreSQL
import { afterAll, describe, expect, it } from 'vitest'
import { REDIS_CALL_BUDGET_MS } from '../../src/auth/redis-circuit.js'
import { dropFreshDatabases, freshDatabase } from '../backend.js'
import { startServerProcess } from '../helpers/server-process.js'
import { RedisSentinelGroup } from '../helpers/redis-sentinel.js'
import { cleanUp, waitUntil } from '../processes.js'
import { percentile, sleep } from './delivery-helpers.js'
import { call, closedPort, createKey } from './limits-helpers.js'

/**
 * Cost: about 50 s on this 2-core machine (the group up in 7 s, the sentinels finding one another;
 * a database, a server and three keys through the CLI; 2 s of load before the kill, the failover's
 * 2–4 s, load until both keys are past their limits, then the handover); bounded at 120 s.
 *
 * A server on PostgreSQL given REDIS_URL=redis+sentinel://… (three sentinels watching a master
 * and its replica) under rate-limited load from two keys, each at a steady pace, while the
 * master's machine dies (kill -9). The sentinels promote the replica; the server follows without
 * a restart (its health stops saying Redis is degraded, and the new master holds the keys'
 * admissions); meanwhile no request costs more than the Redis budget (REDIS_TIMEOUT_MS) beyond
 * what requests take outside the switch, none answers 500, and each key's admissions over the
 * whole test (one window of its hourly limit) stay within the documented bound. Then a planned
 * handover (SENTINEL FAILOVER) with both nodes running: the server writes to the new master.
 */

let group: RedisSentinelGroup | undefined
afterAll(async () => {
  cleanUp()
  await group?.stop()
  await dropFreshDatabases()
})

const DEGRADED = /Redis is degraded/
/** Each key's pace: one request every PACE_MS. */
const PACE_MS = 20
/** Key A reaches its limit about while Redis is switching, key B after the server has followed. */
const LIMITS = { a: 150, b: 300 } as const
/**
 * Admissions beyond a key's limit over the failover (docs/several-instances.md): those the old
 * master acknowledged and had not yet sent to its replica, and the key's calls that reach the new
 * master before the server writes what it admitted meanwhile; with one request per key at a time,
 * one.
 */
const OVERSHOOT_BOUND = 1
/** What the machine's own load may add to a request beyond the slowest one before the kill. */
const SCHEDULING_SLACK_MS = 1_000

interface Answer {
  key: 'a' | 'b' | 'health'
  status: number
  retryAfter: string | null
  message: string
  sentAt: number
  ms: number
}


describe('Redis failover (Sentinel)', () => {
  it('follows the promoted replica and a handover: no 500, no request waiting past the Redis budget, limits within their bound', { timeout: 120_000 }, async () => {
    const started = performance.now()
    const redis = await RedisSentinelGroup.start({ redisPorts: [await closedPort(), await closedPort()], sentinelPorts: [await closedPort(), await closedPort(), await closedPort()] })
    group = redis
    const [master, replica] = redis.nodes as [NonNullable<(typeof redis.nodes)[0]>, NonNullable<(typeof redis.nodes)[0]>]
    const setUpMs = performance.now() - started

    const db = await freshDatabase('postgres')
    const server = await startServerProcess({ HOST: '127.0.0.1', NODE_ENV: 'development', LOG_LEVEL: 'info', WEBHOOK_DISPATCHER: 'off', DRAIN_SCHEDULER: 'off', DATABASE_URL: db.url, REDIS_URL: redis.url() }, { timeoutMs: 30_000 })
    const keys = { a: await createKey(db.url, 'sentinel-a', LIMITS.a), b: await createKey(db.url, 'sentinel-b', LIMITS.b), health: await createKey(db.url, 'sentinel-health', 1_000_000) }
    expect((await call(server.baseUrl, 'GET', '/api/v0/health', { key: keys.health })).body).toMatchObject({ status: 'ok', message: 'Service is up and running' })

    const answers: Answer[] = []
    let stopAt = Number.POSITIVE_INFINITY
    const send = async (key: Answer['key']): Promise<Answer> => {
      const sentAt = performance.now()
      const reply = await call(server.baseUrl, 'GET', '/api/v0/health', { key: keys[key], timeoutMs: 10_000 })
      const message = typeof reply.body === 'object' && reply.body !== null ? String(Reflect.get(reply.body, 'message') ?? '') : String(reply.body)
      const answer = { key, status: reply.status, retryAfter: reply.headers.get('retry-after'), message, sentAt, ms: reply.ms }
      answers.push(answer)
      return answer
    }
    // Each key at a steady pace (a slow answer is caught up on, not skipped); the health key polls.
    const paced = (key: 'a' | 'b') => async () => {
      for (let next = performance.now(); performance.now() < stopAt; next += PACE_MS) {
        await sleep(Math.max(0, next - performance.now()))
        await send(key)
      }
    }
    const load = [paced('a')(), paced('b')(), (async () => {
      while (performance.now() < stopAt) {
        await send('health')
        await sleep(PACE_MS)
      }
    })()]

    await sleep(2_000)
    const killedAt = performance.now()
    redis.kill9(master)
    let promotedAt: number | undefined
    let switchedAt: number | undefined
    while ((promotedAt === undefined || switchedAt === undefined) && performance.now() - killedAt < 30_000) {
      if (promotedAt === undefined && (await redis.role(replica)) === 'master') promotedAt = performance.now()
      if (switchedAt === undefined && (await redis.masterPort()) === replica.port) switchedAt = performance.now()
      await sleep(20)
    }
    if (promotedAt === undefined || switchedAt === undefined) throw new Error(`the replica was not promoted within 30 s; logs in ${redis.dir}`)
    const promoted = promotedAt
    // Followed: the first health answer sent after the promotion that no longer says Redis is degraded.
    let followedAt: number | undefined
    while (followedAt === undefined && performance.now() - promoted < 30_000) {
      followedAt = answers.find((answer) => answer.key === 'health' && answer.sentAt > promoted && answer.status === 200 && !DEGRADED.test(answer.message))?.sentAt
      await sleep(50)
    }
    if (followedAt === undefined) throw new Error('the server still said Redis was degraded 30 s after the promotion')
    // Load goes on until both keys are well past their limits, at least 2 s after following.
    const beyondLimits = () => (['a', 'b'] as const).every((key) => answers.filter((answer) => answer.key === key).length >= LIMITS[key] + 50)
    while (!beyondLimits() && performance.now() - started < 80_000) await sleep(100)
    stopAt = Math.max(performance.now(), followedAt + 2_000)
    await Promise.all(load)

    // The server did see Redis go: its health said so while the master was gone.
    expect(answers.some((answer) => answer.key === 'health' && answer.sentAt > killedAt && DEGRADED.test(answer.message))).toBe(true)

    // Every answer: 200, 429 past a limit, or 503 with Retry-After; never a 500.
    const statuses = new Map<number, number>()
    for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    expect([...statuses.keys()].filter((status) => ![200, 429, 503].includes(status)), JSON.stringify([...statuses])).toEqual([])
    expect(answers.filter((answer) => answer.status === 503 && (answer.retryAfter === null || !/^\d+$/.test(answer.retryAfter)))).toEqual([])

    // No request waited on Redis past its budget. A request during the switch costs at most one
    // budget more than the same request outside it: the bulk of them (p95) by at most the budget,
    // the slowest by at most the budget plus what a loaded machine's scheduling adds to any one.
    const followed = followedAt
    const during = answers.filter((answer) => answer.sentAt >= killedAt && answer.sentAt <= followed + 1_000)
    const outside = answers.filter((answer) => answer.sentAt < killedAt || answer.sentAt > followed + 1_000)
    const latency = (list: Answer[], p: number) => percentile(list.map((answer) => answer.ms), p)
    const slowestDuring = [...during].sort((x, y) => y.ms - x.ms).slice(0, 3).map((answer) => `${Math.round(answer.ms)} ms (${answer.key} ${answer.status}, sent ${Math.round(answer.sentAt - killedAt)} ms after the kill)`)
    expect(latency(during, 95), slowestDuring.join(', ')).toBeLessThan(latency(outside, 95) + REDIS_CALL_BUDGET_MS)
    expect(latency(during, 100), slowestDuring.join(', ')).toBeLessThan(latency(outside, 100) + REDIS_CALL_BUDGET_MS + SCHEDULING_SLACK_MS)

    // Rate limits: every request of the test is in one window of the keys' hourly limits.
    const admitted = { a: answers.filter((answer) => answer.key === 'a' && answer.status === 200).length, b: answers.filter((answer) => answer.key === 'b' && answer.status === 200).length }
    const overshoot = { a: admitted.a - LIMITS.a, b: admitted.b - LIMITS.b }
    expect(overshoot.a).toBeGreaterThanOrEqual(0)
    expect(overshoot.b).toBeGreaterThanOrEqual(0)
    // One instance: what it admitted without Redis continues the count it last saw there and is
    // written to the new master once a call there succeeds (after that call, which counts without it).
    expect(overshoot.a).toBeLessThanOrEqual(OVERSHOOT_BOUND)
    expect(overshoot.b).toBeLessThanOrEqual(OVERSHOOT_BOUND)
    // The new master holds each key's window: its admissions, up to the limit.
    for (const key of ['a', 'b'] as const) {
      expect(Number(await redis.command(replica.port, 'zcard', `devplatform:ratelimit:${keys[key].id}`)), key).toBeGreaterThanOrEqual(LIMITS[key] - OVERSHOOT_BOUND)
    }

    // A planned handover with the master still running (it becomes the replica): the server's
    // client, connected to the node being demoted, leaves it when the sentinels announce the new
    // master (or when a write is refused as READONLY) and writes to the new master.
    redis.restart(master)
    await waitUntil('the old master to rejoin as the replica', async () => /role:slave[\s\S]*master_link_status:up/.test(String(await redis.command(master.port, 'info', 'replication'))) || undefined, 30_000, 100)
    const handover: Answer[] = []
    let handoverStop = Number.POSITIVE_INFINITY
    const handoverLoad = (async () => {
      while (performance.now() < handoverStop) {
        handover.push(await send('health'))
        await sleep(PACE_MS)
      }
    })()
    const healthKey = `devplatform:ratelimit:${keys.health.id}`
    await sleep(500)
    const handoverAt = performance.now()
    await redis.switchover()
    await waitUntil('the sentinels to name the old master again', async () => ((await redis.masterPort()) === master.port ? true : undefined), 20_000, 20)
    const namedAt = performance.now()
    const countAtSwitch = Number(await redis.command(master.port, 'zcard', healthKey))
    await waitUntil('the server to write to the new master', async () => (Number(await redis.command(master.port, 'zcard', healthKey)) > countAtSwitch ? true : undefined), 20_000, 20)
    const writesAt = performance.now()
    // Still a master, often: the sentinels demote it a little later; the client left it on their announcement.
    const demotedRole = await redis.role(replica)
    handoverStop = performance.now() + 1_000
    await handoverLoad
    expect(handover.filter((answer) => answer.status !== 200), JSON.stringify(handover.filter((answer) => answer.status !== 200).slice(0, 3))).toEqual([])
    expect(DEGRADED.test(handover[handover.length - 1]?.message ?? '')).toBe(false)

    const figures = [
      `group up in ${Math.round(setUpMs)} ms`,
      `promoted ${Math.round(promoted - killedAt)} ms after kill -9 (sentinels switched ${Math.round(switchedAt - killedAt)} ms)`,
      `server followed ${Math.round(followedAt - promoted)} ms after the promotion`,
      `answers p95 ${Math.round(latency(outside, 95))} ms outside the switch, ${Math.round(latency(during, 95))} ms during; slowest ${Math.round(latency(outside, 100))} ms outside, ${Math.round(latency(during, 100))} ms during: ${slowestDuring.join(', ')}`,
      `admitted a ${admitted.a}/${LIMITS.a}, b ${admitted.b}/${LIMITS.b} (${during.filter((answer) => answer.key !== 'health' && answer.status === 200 && answer.sentAt < followed).length} of them while switching)`,
      `${answers.length} answers (${[...statuses].map(([status, n]) => `${n}× ${status}`).join(', ')})`,
      `handover: sentinels named the new master ${Math.round(namedAt - handoverAt)} ms after SENTINEL FAILOVER, server writing to it ${Math.round(writesAt - namedAt)} ms later (the old one's role then: ${demotedRole}), ${handover.length} answers all 200 (${handover.filter((answer) => DEGRADED.test(answer.message)).length} saying degraded), slowest ${Math.round(latency(handover, 100))} ms`,
      `test ${Math.round(performance.now() - started)} ms`,
    ]
    process.stdout.write(`redis sentinel failover: ${figures.join('; ')}\n`)
  })
})
