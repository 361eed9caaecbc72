/**
 * Memory of the in-process rate limiter (MemoryRateLimiter, src/auth/rate-limiter.ts) beside the
 * design it replaced, which allocated a ring of `limit` slots on a key's first request (copied
 * below as OldMemoryRateLimiter, for this baseline only).
 *
 *   npx tsx bench/rate-limiter-memory.ts
 *
 * Each scenario and design runs in a child process of its own (started with --expose-gc), so its
 * RSS is not another run's. Growth is measured from just before the first request to just after
 * the last, each after a full GC: RSS, and heap used + external (the memory still referenced,
 * ArrayBuffers' backing stores included). The keys are made before the first measure: the app
 * holds its key ids anyway. Prints a markdown table.
 */
import { fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { HOUR_MS, MemoryRateLimiter, type RateLimitDecision } from '../src/auth/rate-limiter.js'

/**
 * The design before this change (src/auth/rate-limiter.ts at c050a9a), consume path only: on a
 * key's first request, a ring of `limit` slots, whatever the key will use.
 */
class OldMemoryRateLimiter {
  private readonly logs = new Map<string, { ring: Float64Array; head: number; count: number }>()
  private readonly windowMs = HOUR_MS
  private consumedSinceSweep = 0

  consumeSync(key: string, limit: number): RateLimitDecision {
    const now = Date.now()
    this.sweepOccasionally(now)
    let log = this.logs.get(key)
    if (log === undefined || log.ring.length !== limit) {
      log = this.resized(log, limit)
      this.logs.set(key, log)
    }
    while (log.count > 0 && now - (log.ring[log.head] ?? 0) >= this.windowMs) {
      log.head = (log.head + 1) % log.ring.length
      log.count--
    }
    const windowSeconds = Math.round(this.windowMs / 1000)
    if (log.count >= limit) return { allowed: false, limit, remaining: 0, resetSeconds: this.secondsUntilFree(log, now), windowSeconds }
    log.ring[(log.head + log.count) % log.ring.length] = now
    log.count++
    return { allowed: true, limit, remaining: limit - log.count, resetSeconds: this.secondsUntilFree(log, now), windowSeconds }
  }

  private secondsUntilFree(log: { ring: Float64Array; head: number; count: number }, now: number): number {
    if (log.count === 0) return 0
    return Math.max(1, Math.ceil(((log.ring[log.head] ?? 0) + this.windowMs - now) / 1000))
  }

  private resized(log: { ring: Float64Array; head: number; count: number } | undefined, limit: number) {
    const ring = new Float64Array(Math.max(1, limit))
    let count = 0
    if (log !== undefined) {
      const keep = Math.min(log.count, ring.length)
      for (let i = log.count - keep; i < log.count; i++) ring[count++] = log.ring[(log.head + i) % log.ring.length] ?? 0
    }
    return { ring, head: 0, count }
  }

  private sweepOccasionally(now: number): void {
    if (++this.consumedSinceSweep < 10_000) return
    this.consumedSinceSweep = 0
    for (const [key, log] of this.logs) {
      const newest = log.ring[(log.head + log.count - 1 + log.ring.length) % log.ring.length] ?? 0
      if (log.count === 0 || now - newest >= this.windowMs) this.logs.delete(key)
    }
  }
}

const SCENARIOS = {
  keys: { label: '100,000 keys × 1 request, limit 1000', keys: 100_000, requestsPerKey: 1, limit: 1000 },
  override: { label: '1 key × 1 request, limit 999,999,999', keys: 1, requestsPerKey: 1, limit: 999_999_999 },
  full: { label: '1,000 keys × 1,000 requests, limit 1000 (every ring full)', keys: 1000, requestsPerKey: 1000, limit: 1000 },
} as const
type Scenario = keyof typeof SCENARIOS
const DESIGNS = { old: 'old: `limit` slots on first request', new: 'new: ring grows on demand' } as const
type Design = keyof typeof DESIGNS

interface Result {
  rss: number
  live: number
  ms: number
  requests: number
  admitted: number
}

const { values } = parseArgs({ options: { scenario: { type: 'string' }, design: { type: 'string' } } })

/** RSS and heap used + external after a full collection (twice: the first may leave finalizers' garbage). */
function measure(): { rss: number; live: number } {
  globalThis.gc?.()
  globalThis.gc?.()
  const { rss, heapUsed, external } = process.memoryUsage()
  return { rss, live: heapUsed + external }
}

/** Child: one scenario on one design; sends its Result. */
function runOne(scenario: Scenario, design: Design): Result {
  if (globalThis.gc === undefined) throw new Error('run with --expose-gc (the parent process does)')
  const { keys: keyCount, requestsPerKey, limit } = SCENARIOS[scenario]
  const keys = Array.from({ length: keyCount }, () => randomUUID())
  const create = () => (design === 'old' ? new OldMemoryRateLimiter() : new MemoryRateLimiter())
  // Warm up on a limiter thrown away, so code compiled on first use is not counted as the keys'.
  const warm = create()
  for (let i = 0; i < 20_000; i++) warm.consumeSync(`warm-${i % 1000}`, 10)
  const limiter = create()
  const before = measure()
  const start = performance.now()
  let admitted = 0
  for (let round = 0; round < requestsPerKey; round++) {
    for (const key of keys) if (limiter.consumeSync(key, limit).allowed) admitted++
  }
  const ms = performance.now() - start
  const after = measure()
  // Still referenced here, so the collection above could not take the limiter's memory.
  if (limiter.consumeSync(keys[0] ?? '', limit).limit !== limit) throw new Error('unreachable')
  return { rss: after.rss - before.rss, live: after.live - before.live, ms, requests: keyCount * requestsPerKey, admitted }
}

function runChild(scenario: Scenario, design: Design): Promise<Result> {
  const child = fork(fileURLToPath(import.meta.url), ['--scenario', scenario, '--design', design], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [...process.execArgv, '--expose-gc'],
  })
  return new Promise((resolve, reject) => {
    let result: Result | undefined
    child.once('message', (message: Result) => (result = message))
    child.once('error', reject)
    child.once('exit', (code) => (result === undefined ? reject(new Error(`${scenario}/${design} exited with ${code}`)) : resolve(result)))
  })
}

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`
// A single key's share is within the measure's own noise (about 0.1 MB: code compiled, type feedback).
const perKey = (bytes: number, keys: number) => (keys < 1000 ? '—' : `${Math.round(bytes / keys).toLocaleString('en-US')} B`)
const ratio = (value: number, baseline: number) => (baseline > 0 ? ` (×${(value / baseline).toPrecision(2)})` : '')

const isScenario = (name: string | undefined): name is Scenario => name !== undefined && Object.hasOwn(SCENARIOS, name)
const isDesign = (name: string | undefined): name is Design => name !== undefined && Object.hasOwn(DESIGNS, name)

if (values.scenario !== undefined || values.design !== undefined) {
  if (!isScenario(values.scenario) || !isDesign(values.design)) throw new Error(`--scenario ${Object.keys(SCENARIOS).join('|')} --design old|new`)
  process.send?.(runOne(values.scenario, values.design))
} else {
  console.log(`node ${process.version}, ${new Date().toISOString()}; figures are growth after a full GC (ratios: new ÷ old)\n`)
  console.log('| scenario | design | RSS growth | heap used + external growth | per key (heap + external) | time per request |')
  console.log('|---|---|---|---|---|---|')
  for (const scenario of Object.keys(SCENARIOS) as Scenario[]) {
    const { label, keys } = SCENARIOS[scenario]
    const old = await runChild(scenario, 'old')
    const current = await runChild(scenario, 'new')
    for (const [design, result] of [['old', old], ['new', current]] as const) {
      const vs = (pick: (r: Result) => number) => (design === 'new' ? ratio(pick(result), pick(old)) : '')
      // One request's time is mostly the allocation's (or noise): shown from 1,000 requests.
      const perRequest = result.requests < 1000 ? `${result.ms.toFixed(2)} ms (1 request)` : `${((result.ms * 1e6) / result.requests).toFixed(0)} ns`
      console.log(
        `| ${design === 'old' ? label : ''} | ${DESIGNS[design]} | ${mb(result.rss)}${vs((r) => r.rss)} | ${mb(result.live)}${vs((r) => r.live)} | ${perKey(result.live, keys)} | ${perRequest} |`,
      )
    }
    if (old.admitted !== current.admitted) throw new Error(`${scenario}: the designs admitted ${old.admitted} and ${current.admitted}`)
  }
  console.log(
    "\nThe old design's RSS barely grows at limit 999,999,999 only because the kernel maps the 8 GB of zeroed pages when they are first written (one was); they are allocated all the same (external), and a key using its ring makes them resident.",
  )
}
