// vitest: sqlite project only — the address guard and its resolver, no backend.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { LookupAddress, LookupOptions } from 'node:dns'
import { CachingDnsResolver } from '../../src/delivery/dns-resolver.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AddressRefusedError,
  addressRefusal,
  classifyAddress,
  pinnedLookup,
  resolveAllowed,
  type AddressKind,
  type ResolveHost,
  type ResolvedAddress,
} from '../../src/delivery/address-guard.js'

function table(kind: AddressKind, ips: string[]): [string, AddressKind][] {
  return ips.map((ip) => [ip, kind])
}

describe('classifyAddress: IPv4', () => {
  const cases: [string, AddressKind][] = [
    ...table('public', ['8.8.8.8', '1.1.1.1', '1.0.0.0', '9.255.255.255', '11.0.0.0', '126.255.255.255', '128.0.0.0']),
    ...table('unspecified', ['0.0.0.0', '0.255.255.255', '0.1.2.3']),
    ...table('loopback', ['127.0.0.0', '127.0.0.1', '127.255.255.255']),
    ...table('private', ['10.0.0.0', '10.255.255.255', '172.16.0.0', '172.31.255.255', '192.168.0.0', '192.168.255.255']),
    ...table('public', ['172.15.255.255', '172.32.0.0', '192.167.255.255', '192.169.0.0']),
    ...table('link-local', ['169.254.0.0', '169.254.169.253', '169.254.169.255', '169.254.255.255']),
    ...table('public', ['169.253.255.255', '169.255.0.0']),
    ...table('metadata', ['169.254.169.254', '100.100.100.200', '168.63.129.16']),
    ...table('shared', ['100.64.0.0', '100.100.100.199', '100.100.100.201', '100.127.255.255']),
    ...table('public', ['100.63.255.255', '100.128.0.0', '168.63.129.15', '168.63.129.17']),
    ...table('multicast', ['224.0.0.0', '224.0.0.1', '239.255.255.255']),
    ...table('public', ['223.255.255.255']),
    ...table('reserved', ['240.0.0.0', '255.255.255.254', '255.255.255.255']),
    ...table('reserved', ['192.0.0.0', '192.0.0.255', '192.0.2.0', '192.0.2.255', '198.51.100.0', '198.51.100.255', '203.0.113.0', '203.0.113.255']),
    ...table('public', ['191.255.255.255', '192.0.1.0', '192.0.3.0', '198.51.99.255', '198.51.101.0', '203.0.112.255', '203.0.114.0']),
    ...table('reserved', ['198.18.0.0', '198.19.255.255']),
    ...table('public', ['198.17.255.255', '198.20.0.0']),
  ]
  it.each(cases)('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind)
  })
})

describe('classifyAddress: IPv6', () => {
  const cases: [string, AddressKind][] = [
    ...table('public', ['2606:4700:4700::1111', '2001:4860:4860::8888', '2000::', '3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff']),
    ...table('unspecified', ['::', '0:0:0:0:0:0:0:0', '[::]']),
    ...table('loopback', ['::1', '[::1]', '0:0:0:0:0:0:0:1', '::0:1']),
    ...table('link-local', ['fe80::', 'fe80::1', 'fe80::1%eth0', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff']),
    ...table('private', ['fec0::', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']), // deprecated site-local
    ...table('unique-local', ['fc00::', 'fd12:3456::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fd00:ec2::253', 'fd00:ec2::255']),
    ...table('metadata', ['fd00:ec2::254', 'fd00:ec2:0:0:0:0:0:254', '[fd00:ec2::254]']),
    // Just outside fc00::/7 and fe80::/10 is unassigned space, never a public host.
    ...table('reserved', ['fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fe00::', 'fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '4000::', '1fff:ffff::', '::ffff:0:7f00:1']),
    ...table('multicast', ['ff00::', 'ff02::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']),
    ...table('reserved', ['2001:db8::', '2001:db8::1', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', '3fff::', '3fff:fff:ffff::']),
    ...table('public', ['2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db9::', '3fff:1000::']),
    ...table('reserved', ['100::', '100::1', '100::ffff:ffff:ffff:ffff']),
  ]
  it.each(cases)('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind)
  })
})

describe('classifyAddress: IPv4 embedded in IPv6', () => {
  const cases: [string, AddressKind][] = [
    // IPv4-mapped, dotted and hex forms
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:127.0.0.1]', 'loopback'],
    ['0:0:0:0:0:ffff:7f00:0001', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a00:1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:100.64.0.1', 'shared'],
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:808:808', 'public'],
    // IPv4-compatible (deprecated)
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::10.0.0.1', 'private'],
    ['::0.0.0.2', 'unspecified'],
    ['::8.8.8.8', 'public'],
    // NAT64 well-known prefix
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::169.254.169.254', 'metadata'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b:1::a00:1', 'private'], // local-use NAT64 prefix
    ['64:ff9b:0:0:1::', 'reserved'], // not the /96 and outside 2000::/3
    // 6to4
    ['2002:7f00:1::', 'loopback'],
    ['2002:a00:1::1', 'private'],
    ['2002:a9fe:a9fe::', 'metadata'],
    ['2002:0808:0808::', 'public'],
    ['2002:0808:0808:1:2:3:4:5', 'public'],
  ]
  it.each(cases)('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind)
  })
})

describe('classifyAddress: invalid input', () => {
  it.each(['', 'localhost', 'example.com', '1.2.3', '1.2.3.4.5', '256.0.0.1', '010.0.0.1', '0x7f000001', '2130706433', ':::', '1::2::3', 'fe80::g', '[::1', '::1]', '[127.0.0.1'])(
    '%j throws a TypeError',
    (input) => {
      expect(() => classifyAddress(input)).toThrow(TypeError)
    },
  )
})

describe('addressRefusal', () => {
  it('allows public addresses', () => {
    expect(addressRefusal('8.8.8.8', { allowLoopback: false })).toBeUndefined()
    expect(addressRefusal('2606:4700:4700::1111', { allowLoopback: false })).toBeUndefined()
    expect(addressRefusal('::ffff:1.1.1.1', { allowLoopback: true })).toBeUndefined()
  })

  it('allows loopback only with allowLoopback', () => {
    expect(addressRefusal('127.0.0.1', { allowLoopback: false })).toBe('127.0.0.1 is a loopback address')
    expect(addressRefusal('::1', { allowLoopback: false })).toBe('::1 is a loopback address')
    expect(addressRefusal('[::1]', { allowLoopback: false })).toBe('::1 is a loopback address')
    expect(addressRefusal('127.0.0.1', { allowLoopback: true })).toBeUndefined()
    expect(addressRefusal('[::1]', { allowLoopback: true })).toBeUndefined()
    expect(addressRefusal('::ffff:7f00:1', { allowLoopback: true })).toBeUndefined()
  })

  it('names the kind of every refused address, whatever allowLoopback says', () => {
    for (const allowLoopback of [false, true]) {
      const o = { allowLoopback }
      expect(addressRefusal('10.0.0.1', o)).toBe('10.0.0.1 is a private address')
      expect(addressRefusal('::ffff:10.0.0.1', o)).toBe('::ffff:10.0.0.1 is a private address')
      expect(addressRefusal('169.254.169.254', o)).toBe('169.254.169.254 is a cloud metadata address')
      expect(addressRefusal('169.254.1.1', o)).toBe('169.254.1.1 is a link-local address')
      expect(addressRefusal('fd00::1', o)).toBe('fd00::1 is a unique-local address')
      expect(addressRefusal('0.0.0.0', o)).toBe('0.0.0.0 is an unspecified address')
      expect(addressRefusal('::', o)).toBe(':: is an unspecified address')
      expect(addressRefusal('100.64.0.1', o)).toBe('100.64.0.1 is a shared (carrier-grade NAT) address')
      expect(addressRefusal('224.0.0.1', o)).toBe('224.0.0.1 is a multicast address')
      expect(addressRefusal('255.255.255.255', o)).toBe('255.255.255.255 is a reserved address')
    }
  })

  it('throws on non-IP input', () => {
    expect(() => addressRefusal('example.com', { allowLoopback: true })).toThrow(TypeError)
  })
})

/** A fake resolver with fixed answers that counts its calls. */
function fakeResolver(answers: Record<string, string[]>): ResolveHost & { calls: string[] } {
  const calls: string[] = []
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname)
    const found = answers[hostname]
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return Object.assign(resolve, { calls })
}

describe('resolveAllowed', () => {
  const resolve = fakeResolver({
    'public.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'mixed.test': ['93.184.215.14', '10.0.0.1'],
    'mixed6.test': ['2606:4700:4700::1111', '::ffff:169.254.169.254'],
    'loop.test': ['127.0.0.1', '::1'],
    'empty.test': [],
    'garbage.test': ['not-an-ip'],
  })
  const strict = { allowLoopback: false }

  it('returns every address when all are public', async () => {
    await expect(resolveAllowed('public.test', resolve, strict)).resolves.toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ])
  })

  it('refuses the host when any one answer is refused', async () => {
    const error = await resolveAllowed('mixed.test', resolve, strict).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AddressRefusedError)
    expect(error).toMatchObject({ code: 'EADDRREFUSED_SSRF', message: '10.0.0.1 is a private address', name: 'AddressRefusedError' })
    await expect(resolveAllowed('mixed6.test', resolve, { allowLoopback: true })).rejects.toThrow(
      '::ffff:169.254.169.254 is a cloud metadata address',
    )
  })

  it('applies allowLoopback to resolved answers', async () => {
    await expect(resolveAllowed('loop.test', resolve, strict)).rejects.toThrow('127.0.0.1 is a loopback address')
    await expect(resolveAllowed('loop.test', resolve, { allowLoopback: true })).resolves.toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ])
  })

  it('checks IP literals directly, without calling the resolver', async () => {
    const before = resolve.calls.length
    await expect(resolveAllowed('8.8.8.8', resolve, strict)).resolves.toEqual([{ address: '8.8.8.8', family: 4 }])
    await expect(resolveAllowed('[2606:4700:4700::1111]', resolve, strict)).resolves.toEqual([{ address: '2606:4700:4700::1111', family: 6 }])
    await expect(resolveAllowed('[::1]', resolve, { allowLoopback: true })).resolves.toEqual([{ address: '::1', family: 6 }])
    await expect(resolveAllowed('[::1]', resolve, strict)).rejects.toBeInstanceOf(AddressRefusedError)
    await expect(resolveAllowed('169.254.169.254', resolve, strict)).rejects.toThrow('169.254.169.254 is a cloud metadata address')
    await expect(resolveAllowed('[::ffff:a00:1]', resolve, strict)).rejects.toThrow('::ffff:a00:1 is a private address')
    expect(resolve.calls.length).toBe(before)
  })

  it('reports an empty answer as could-not-resolve', async () => {
    await expect(resolveAllowed('empty.test', resolve, strict)).rejects.toThrow(new Error('could not resolve empty.test'))
  })

  it('reports a failing resolver as could-not-resolve, keeping the cause', async () => {
    const error = await resolveAllowed('nowhere.test', resolve, strict).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Error)
    expect(error).not.toBeInstanceOf(AddressRefusedError)
    expect((error as Error).message).toBe('could not resolve nowhere.test')
    expect((error as Error).cause).toMatchObject({ code: 'ENOTFOUND' })
  })

  it('refuses answers that are not IP addresses', async () => {
    await expect(resolveAllowed('garbage.test', resolve, strict)).rejects.toBeInstanceOf(AddressRefusedError)
  })
})

describe('the delivery resolver', () => {
  it('resolves localhost to loopback addresses only, which the guard refuses by default', async () => {
    const systemResolver = new CachingDnsResolver({ timeoutMs: 1000 }).resolve
    const answers = await systemResolver('localhost')
    expect(answers.length).toBeGreaterThan(0)
    for (const { address, family } of answers) {
      expect(classifyAddress(address)).toBe('loopback')
      expect(family).toBe(address.includes(':') ? 6 : 4)
    }
    await expect(resolveAllowed('localhost', systemResolver, { allowLoopback: false })).rejects.toBeInstanceOf(AddressRefusedError)
  })
})

type LookupResult = { error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family: number | undefined }

function callLookup(lookup: ReturnType<typeof pinnedLookup>, hostname: string, options: LookupOptions): Promise<LookupResult> {
  return new Promise((done) => {
    lookup(hostname, options, (error, address, family) => done({ error, address, family }))
  })
}

describe('pinnedLookup callback shapes', () => {
  const resolve = fakeResolver({
    'dual.test': ['2606:4700:4700::1111', '1.1.1.1'],
    'v4.test': ['1.1.1.1'],
    'bad.test': ['1.1.1.1', '192.168.1.1'],
  })
  const lookup = pinnedLookup(resolve, { allowLoopback: false })

  it('answers all addresses when options.all is set', async () => {
    expect(await callLookup(lookup, 'dual.test', { all: true, hints: 32 })).toMatchObject({
      error: null,
      address: [
        { address: '2606:4700:4700::1111', family: 6 },
        { address: '1.1.1.1', family: 4 },
      ],
    })
    expect(await callLookup(lookup, 'dual.test', { all: true, family: 4 })).toMatchObject({ error: null, address: [{ address: '1.1.1.1', family: 4 }] })
  })

  it('answers the first (matching) address otherwise', async () => {
    expect(await callLookup(lookup, 'dual.test', {})).toEqual({ error: null, address: '2606:4700:4700::1111', family: 6 })
    expect(await callLookup(lookup, 'dual.test', { family: 4 })).toEqual({ error: null, address: '1.1.1.1', family: 4 })
    expect(await callLookup(lookup, 'dual.test', { family: 'IPv4' })).toEqual({ error: null, address: '1.1.1.1', family: 4 })
    expect(await callLookup(lookup, 'dual.test', { family: 6 })).toEqual({ error: null, address: '2606:4700:4700::1111', family: 6 })
  })

  it('errors when no address of the wanted family exists', async () => {
    const { error } = await callLookup(lookup, 'v4.test', { family: 6 })
    expect(error).toBeInstanceOf(Error)
    expect(error?.code).toBe('ENOTFOUND')
    const all = await callLookup(lookup, 'v4.test', { family: 6, all: true })
    expect(all.error?.code).toBe('ENOTFOUND')
  })

  it('passes refusals and resolution failures to the callback', async () => {
    const refused = await callLookup(lookup, 'bad.test', { all: true })
    expect(refused.error).toBeInstanceOf(AddressRefusedError)
    expect(refused.error?.code).toBe('EADDRREFUSED_SSRF')
    const missing = await callLookup(lookup, 'missing.test', {})
    expect(missing.error?.message).toBe('could not resolve missing.test')
  })
})

describe('pinnedLookup with http.request', () => {
  let server: http.Server
  let port = 0
  let connections = 0

  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('pinned ok'))
    server.on('connection', () => {
      connections += 1
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })

  afterAll(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  function get(options: http.RequestOptions): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: 'pinned.test', port, path: '/', ...options }, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve(body))
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end()
    })
  }

  it('connects to the checked address, resolving exactly once', async () => {
    const resolve = fakeResolver({ 'pinned.test': ['127.0.0.1'] })
    const before = connections
    // No family given: Node 20's autoSelectFamily asks the lookup for { all: true }.
    await expect(get({ lookup: pinnedLookup(resolve, { allowLoopback: true }), agent: false })).resolves.toBe('pinned ok')
    expect(resolve.calls).toEqual(['pinned.test'])
    expect(connections).toBe(before + 1)
  })

  it('works when Node asks for a single address (family set)', async () => {
    // With an explicit family Node 20 skips autoSelectFamily and expects callback(null, address, family).
    const resolve = fakeResolver({ 'pinned.test': ['::1', '127.0.0.1'] })
    await expect(get({ lookup: pinnedLookup(resolve, { allowLoopback: true }), agent: false, family: 4 })).resolves.toBe('pinned ok')
    expect(resolve.calls).toEqual(['pinned.test'])
  })

  it('refuses loopback without allowLoopback and never opens a connection', async () => {
    const resolve = fakeResolver({ 'pinned.test': ['127.0.0.1'] })
    const before = connections
    const error = await get({ lookup: pinnedLookup(resolve, { allowLoopback: false }), agent: false }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AddressRefusedError)
    expect(error).toMatchObject({ code: 'EADDRREFUSED_SSRF', message: '127.0.0.1 is a loopback address' })
    expect(resolve.calls).toEqual(['pinned.test'])
    await new Promise((r) => setTimeout(r, 50))
    expect(connections).toBe(before)
  })

  it('refuses when one of several answers is private', async () => {
    const resolve = fakeResolver({ 'pinned.test': ['127.0.0.1', '10.1.2.3'] })
    const before = connections
    await expect(get({ lookup: pinnedLookup(resolve, { allowLoopback: true }), agent: false })).rejects.toThrow('10.1.2.3 is a private address')
    await new Promise((r) => setTimeout(r, 50))
    expect(connections).toBe(before)
  })
})
