// vitest: sqlite project only — the resolver against a DNS server on loopback, no backend.
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram'
import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CachingDnsResolver } from '../../src/delivery/dns-resolver.js'

/**
 * A real DNS server on loopback UDP: A/AAAA answers with a TTL for known names, NXDOMAIN for
 * unknown ones, and no answer at all for names under `hang.test`.
 */
interface Zone {
  a?: string[]
  aaaa?: string[]
  ttl: number
}

const ZONES: Record<string, Zone> = {
  'dual.test': { a: ['93.184.216.34', '93.184.216.35'], aaaa: ['2606:2800:220:1::1'], ttl: 60 },
  'short.test': { a: ['198.51.100.7'], ttl: 0 },
  'v4.test': { a: ['203.0.113.9'], ttl: 3600 },
}
for (let i = 0; i < 5; i++) ZONES[`host${i}.test`] = { a: [`203.0.113.${10 + i}`], ttl: 600 }

let server: Socket
let serverAddress: string
const queries: string[] = []

function parseName(message: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = []
  let at = offset
  for (;;) {
    const length = message[at] ?? 0
    at += 1
    if (length === 0) break
    labels.push(message.subarray(at, at + length).toString('ascii'))
    at += length
  }
  return { name: labels.join('.').toLowerCase(), end: at }
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::')
  const headParts = head === '' ? [] : head.split(':')
  const tailParts = tail === '' ? [] : tail.split(':')
  const parts = [...headParts, ...Array<string>(8 - headParts.length - tailParts.length).fill('0'), ...tailParts]
  const bytes = Buffer.alloc(16)
  parts.forEach((part, i) => bytes.writeUInt16BE(parseInt(part, 16), i * 2))
  return bytes
}

function answer(message: Buffer, remote: RemoteInfo): void {
  const { name, end } = parseName(message, 12)
  const type = message.readUInt16BE(end)
  queries.push(`${name}/${type === 28 ? 'AAAA' : 'A'}`)
  if (name.endsWith('hang.test')) return
  const question = message.subarray(12, end + 4)
  const zone = ZONES[name]
  const addresses = zone === undefined ? [] : type === 28 ? (zone.aaaa ?? []) : (zone.a ?? [])
  const header = Buffer.alloc(12)
  header.writeUInt16BE(message.readUInt16BE(0), 0)
  header.writeUInt16BE(zone === undefined ? 0x8183 : 0x8180, 2) // NXDOMAIN, or NOERROR (possibly no data)
  header.writeUInt16BE(1, 4)
  header.writeUInt16BE(addresses.length, 6)
  const records = addresses.map((address) => {
    const data = type === 28 ? ipv6Bytes(address) : Buffer.from(address.split('.').map(Number))
    const record = Buffer.alloc(12)
    record.writeUInt16BE(0xc00c, 0) // the question's name
    record.writeUInt16BE(type, 2)
    record.writeUInt16BE(1, 4)
    record.writeUInt32BE(zone?.ttl ?? 0, 6)
    record.writeUInt16BE(data.length, 10)
    return Buffer.concat([record, data])
  })
  server.send(Buffer.concat([header, question, ...records]), remote.port, remote.address)
}

beforeAll(async () => {
  server = createSocket('udp4')
  server.on('message', answer)
  await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve))
  serverAddress = `127.0.0.1:${server.address().port}`
})
afterAll(() => {
  server.close()
})

function resolverWith(options: { timeoutMs?: number; now?: () => number; maxEntries?: number } = {}): CachingDnsResolver {
  return new CachingDnsResolver({ servers: [serverAddress], timeoutMs: options.timeoutMs ?? 1000, ...options })
}

const asked = (name: string) => queries.filter((query) => query.startsWith(`${name}/`)).length

describe('the delivery resolver (c-ares, not the thread pool)', () => {
  it('answers A and AAAA records, and keeps them for their TTL', async () => {
    let now = 1_000_000
    const resolver = resolverWith({ now: () => now })
    const answers = await resolver.lookup('dual.test')
    expect(answers).toEqual(
      expect.arrayContaining([
        { address: '93.184.216.34', family: 4 },
        { address: '93.184.216.35', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ]),
    )
    expect(answers).toHaveLength(3)
    const before = asked('dual.test')
    expect(before).toBe(2) // one A, one AAAA query
    now += 59_000
    await resolver.lookup('dual.test')
    expect(asked('dual.test')).toBe(before)
    now += 2_000 // past the 60 s TTL
    await resolver.lookup('dual.test')
    expect(asked('dual.test')).toBe(before + 2)
  })

  it('a TTL of 0 is kept for a second at least, so a backlog to one host is not one query per attempt', async () => {
    let now = 5_000_000
    const resolver = resolverWith({ now: () => now })
    await resolver.lookup('short.test')
    const first = asked('short.test')
    await resolver.lookup('short.test')
    expect(asked('short.test')).toBe(first)
    now += 1_001
    await resolver.lookup('short.test')
    expect(asked('short.test')).toBe(first + 2)
  })

  it('concurrent lookups of one host share one query', async () => {
    const resolver = resolverWith()
    const all = await Promise.all(Array.from({ length: 20 }, () => resolver.lookup('v4.test')))
    for (const answers of all) expect(answers).toEqual([{ address: '203.0.113.9', family: 4 }])
    expect(asked('v4.test')).toBe(2)
  })

  it('a host that does not exist fails at once, and is remembered briefly', async () => {
    let now = 9_000_000
    const resolver = resolverWith({ now: () => now })
    const started = Date.now()
    await expect(resolver.lookup('missing.test')).rejects.toMatchObject({ code: 'ENOTFOUND' })
    expect(Date.now() - started).toBeLessThan(900)
    const first = asked('missing.test')
    await expect(resolver.lookup('missing.test')).rejects.toMatchObject({ code: 'ENOTFOUND' })
    expect(asked('missing.test')).toBe(first)
    now += 5_001
    await expect(resolver.lookup('missing.test')).rejects.toThrow()
    expect(asked('missing.test')).toBe(first + 2)
  })

  it('a server that never answers fails the lookup at its deadline, and the thread pool stays free meanwhile', async () => {
    const resolver = resolverWith({ timeoutMs: 400 })
    const started = Date.now()
    // More lookups than libuv has threads (4): with dns.lookup these would queue file reads behind them.
    const lookups = Array.from({ length: 8 }, (_, i) => resolver.lookup(`n${i}.hang.test`).then(
      () => 'resolved',
      (error: unknown) => (error as { code?: string }).code,
    ))
    const read = await readFile(new URL(import.meta.url), 'utf8')
    expect(read.length).toBeGreaterThan(0)
    expect(Date.now() - started).toBeLessThan(300)
    expect(await Promise.all(lookups)).toEqual(Array.from({ length: 8 }, () => 'ETIMEOUT'))
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(390)
    expect(elapsed).toBeLessThan(2_000)
  })

  it('localhost names are loopback without a query', async () => {
    const resolver = resolverWith()
    const count = queries.length
    expect(await resolver.lookup('localhost')).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ])
    expect(await resolver.lookup('api.localhost')).toHaveLength(2)
    expect(queries.length).toBe(count)
  })

  it('remembers at most maxEntries hosts, the oldest going first', async () => {
    const resolver = resolverWith({ maxEntries: 3 })
    for (let i = 0; i < 4; i++) await resolver.lookup(`host${i}.test`)
    const host0 = asked('host0.test')
    const host3 = asked('host3.test')
    await resolver.lookup('host3.test')
    expect(asked('host3.test')).toBe(host3)
    await resolver.lookup('host0.test')
    expect(asked('host0.test')).toBe(host0 + 2)
  })
})
