import { promises as dns } from 'node:dns'
import type { ResolvedAddress, ResolveHost } from './address-guard.js'

export interface DnsResolverOptions {
  /** a lookup that has no answer by then fails (and its queries are canceled) */
  timeoutMs: number
  /** DNS servers (`host` or `host:port`); the system's (resolv.conf) when absent */
  servers?: readonly string[]
  /** answers are kept for their TTL, clamped to this range */
  minTtlSeconds?: number
  maxTtlSeconds?: number
  /** "no such host" is remembered this long, so a host that never resolves costs one query per period */
  negativeTtlSeconds?: number
  /** most hosts remembered; the oldest entry goes first */
  maxEntries?: number
  now?: () => number
}

interface CacheEntry {
  expiresAtMs: number
  answer: ResolvedAddress[] | Error
}

const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'NXDOMAIN'])

/**
 * Host resolution for webhook deliveries on c-ares (`dns.Resolver`), not `dns.lookup`:
 * `dns.lookup` runs getaddrinfo on libuv's thread pool (4 threads shared with file I/O and
 * crypto), so a few slow hosts stall everything else in the process, and its calls can't be
 * timed out or canceled. Here each lookup has its own deadline, its queries are canceled when
 * it passes, and answers are cached for their TTL (failures briefly), so a backlog to one host
 * costs one query per TTL, not one per attempt. `localhost` names resolve to loopback without
 * a query (RFC 6761); other /etc/hosts entries are not read.
 */
export class CachingDnsResolver {
  private readonly cache = new Map<string, CacheEntry>()
  private readonly pending = new Map<string, Promise<ResolvedAddress[]>>()
  private readonly now: () => number

  constructor(private readonly options: DnsResolverOptions) {
    this.now = options.now ?? Date.now
  }

  /** The resolver as the address guard takes it. */
  get resolve(): ResolveHost {
    return (hostname) => this.lookup(hostname)
  }

  async lookup(hostname: string): Promise<ResolvedAddress[]> {
    const name = hostname.toLowerCase().replace(/\.$/, '')
    if (name === 'localhost' || name.endsWith('.localhost')) {
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ]
    }
    const cached = this.cache.get(name)
    if (cached !== undefined && cached.expiresAtMs > this.now()) {
      if (cached.answer instanceof Error) throw cached.answer
      return cached.answer
    }
    // Concurrent attempts to one host share one query.
    let running = this.pending.get(name)
    if (running === undefined) {
      running = this.query(name).finally(() => this.pending.delete(name))
      this.pending.set(name, running)
    }
    return running
  }

  private async query(name: string): Promise<ResolvedAddress[]> {
    const resolver = new dns.Resolver({ timeout: Math.max(1, Math.floor(this.options.timeoutMs / 2)), tries: 2 })
    if (this.options.servers !== undefined) resolver.setServers([...this.options.servers])
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        resolver.cancel()
        reject(Object.assign(new Error(`resolving ${name} timed out after ${this.options.timeoutMs} ms`), { code: 'ETIMEOUT' }))
      }, this.options.timeoutMs)
    })
    try {
      const [v4, v6] = await Promise.race([Promise.allSettled([resolver.resolve4(name, { ttl: true }), resolver.resolve6(name, { ttl: true })]), deadline])
      const answers: ResolvedAddress[] = []
      let ttl = Number.POSITIVE_INFINITY
      for (const [result, family] of [
        [v4, 4],
        [v6, 6],
      ] as const) {
        if (result.status !== 'fulfilled') continue
        for (const record of result.value) {
          answers.push({ address: record.address, family })
          ttl = Math.min(ttl, record.ttl)
        }
      }
      if (answers.length > 0) {
        this.remember(name, answers, this.clampTtl(ttl))
        return answers
      }
      const reason = v4.status === 'rejected' ? v4.reason : v6.status === 'rejected' ? v6.reason : undefined
      const code = typeof reason === 'object' && reason !== null && 'code' in reason ? String(reason.code) : undefined
      const error = Object.assign(new Error(`${name} does not resolve${code === undefined ? '' : ` (${code})`}`), { code: code ?? 'ENOTFOUND' })
      // Only a definite "no such host" is remembered; a server failure is asked again next time.
      if (code === undefined || NOT_FOUND.has(code)) this.remember(name, error, this.options.negativeTtlSeconds ?? 5)
      throw error
    } finally {
      clearTimeout(timer)
    }
  }

  private clampTtl(ttl: number): number {
    const min = this.options.minTtlSeconds ?? 1
    const max = this.options.maxTtlSeconds ?? 300
    return Math.min(max, Math.max(min, Number.isFinite(ttl) ? ttl : min))
  }

  private remember(name: string, answer: ResolvedAddress[] | Error, ttlSeconds: number): void {
    this.cache.delete(name)
    this.cache.set(name, { answer, expiresAtMs: this.now() + ttlSeconds * 1000 })
    const max = this.options.maxEntries ?? 1000
    while (this.cache.size > max) {
      const oldest = this.cache.keys().next().value
      if (oldest === undefined) break
      this.cache.delete(oldest)
    }
  }
}
