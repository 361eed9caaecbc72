// SSRF guard for outgoing webhook deliveries: classifies IP addresses, refuses
// non-public destinations and pins the socket to the address that was checked.
import { isIP } from 'node:net'
import type { LookupFunction } from 'node:net'

export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unique-local'
  | 'metadata'
  | 'unspecified'
  | 'shared'
  | 'multicast'
  | 'reserved'

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>

export interface GuardOptions {
  allowLoopback: boolean
}

/** Strips URL-style brackets, as URL.hostname keeps them for IPv6 (`[::1]`). */
function unbracket(ip: string): string {
  return ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip
}

function parseIPv4(text: string): number {
  const parts = text.split('.')
  let value = 0
  for (const part of parts) value = value * 256 + Number.parseInt(part, 10)
  return value >>> 0
}

/** Parses a validated IPv6 literal (zone already removed) into 8 16-bit groups. */
function parseIPv6(text: string): number[] {
  let source = text
  // A trailing dotted quad stands for the last two groups.
  const lastColon = source.lastIndexOf(':')
  const tail = source.slice(lastColon + 1)
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail)
    source = `${source.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`
  }
  const toGroups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)))
  const halves = source.split('::')
  let groups: number[]
  if (halves.length === 2) {
    const head = toGroups(halves[0] ?? '')
    const rest = toGroups(halves[1] ?? '')
    groups = [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest]
  } else {
    groups = toGroups(source)
  }
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) {
    throw new TypeError(`not an IP address: ${text}`)
  }
  return groups
}

interface V4Range {
  base: number
  mask: number
  kind: AddressKind
}

function v4(cidr: string, kind: AddressKind): V4Range {
  const [base = '', bits = '32'] = cidr.split('/')
  const prefix = Number.parseInt(bits, 10)
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0
  // >>> 0 keeps everything unsigned: JS bitwise ops yield signed 32-bit ints.
  return { base: (parseIPv4(base) & mask) >>> 0, mask, kind }
}

// First match wins: the metadata hosts sit inside link-local / shared ranges.
const V4_RANGES: readonly V4Range[] = [
  v4('169.254.169.254/32', 'metadata'), // AWS, GCP, Azure, OCI, DigitalOcean...
  v4('100.100.100.200/32', 'metadata'), // Alibaba Cloud
  v4('168.63.129.16/32', 'metadata'), // Azure WireServer: public-looking, only meaningful inside Azure
  v4('0.0.0.0/8', 'unspecified'), // "this network": connecting to it reaches the local host
  v4('127.0.0.0/8', 'loopback'),
  v4('10.0.0.0/8', 'private'),
  v4('172.16.0.0/12', 'private'),
  v4('192.168.0.0/16', 'private'),
  v4('169.254.0.0/16', 'link-local'),
  v4('100.64.0.0/10', 'shared'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'), // includes 255.255.255.255
  v4('192.0.0.0/24', 'reserved'),
  v4('192.0.2.0/24', 'reserved'),
  v4('198.18.0.0/15', 'reserved'),
  v4('198.51.100.0/24', 'reserved'),
  v4('203.0.113.0/24', 'reserved'),
]

function classifyV4(value: number): AddressKind {
  for (const range of V4_RANGES) {
    if (((value & range.mask) >>> 0) === range.base) return range.kind
  }
  return 'public'
}

function classifyV6(g: number[]): AddressKind {
  const at = (i: number): number => g[i] ?? 0
  const embeddedV4 = (hi: number, lo: number): number => ((at(hi) << 16) | at(lo)) >>> 0
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0)

  if (zeroUpTo(8)) return 'unspecified'
  if (zeroUpTo(7) && at(7) === 1) return 'loopback'
  // IPv4-mapped ::ffff:0:0/96 and deprecated IPv4-compatible ::/96 reach the embedded v4 host.
  if (zeroUpTo(5) && at(5) === 0xffff) return classifyV4(embeddedV4(6, 7))
  if (zeroUpTo(6)) return classifyV4(embeddedV4(6, 7))
  // NAT64 well-known prefix 64:ff9b::/96: the translator connects to the embedded v4.
  if (at(0) === 0x64 && at(1) === 0xff9b && at(2) === 0 && at(3) === 0 && at(4) === 0 && at(5) === 0) {
    return classifyV4(embeddedV4(6, 7))
  }
  // Local-use NAT64 64:ff9b:1::/48 (RFC 8215) only exists inside a site.
  if (at(0) === 0x64 && at(1) === 0xff9b && at(2) === 1) return 'private'
  // 6to4 2002::/16: bits 16..48 are the v4 address of the relay target.
  if (at(0) === 0x2002) return classifyV4(embeddedV4(1, 2))
  // AWS IMDS over IPv6: fd00:ec2::254 (checked before unique-local).
  if (at(0) === 0xfd00 && at(1) === 0xec2 && at(2) === 0 && at(3) === 0 && at(4) === 0 && at(5) === 0 && at(6) === 0 && at(7) === 0x254) {
    return 'metadata'
  }
  if ((at(0) & 0xff00) === 0xff00) return 'multicast'
  if ((at(0) & 0xffc0) === 0xfe80) return 'link-local'
  if ((at(0) & 0xffc0) === 0xfec0) return 'private' // deprecated site-local, the old v6 analogue of RFC 1918
  if ((at(0) & 0xfe00) === 0xfc00) return 'unique-local'
  if (at(0) === 0x2001 && at(1) === 0x0db8) return 'reserved' // documentation
  if (at(0) === 0x3fff && (at(1) & 0xf000) === 0) return 'reserved' // 3fff::/20 documentation (RFC 9637)
  if (at(0) === 0x0100 && at(1) === 0 && at(2) === 0 && at(3) === 0) return 'reserved' // discard-only 100::/64
  // Only 2000::/3 is allocated global unicast; anything else left is unassigned.
  if ((at(0) & 0xe000) !== 0x2000) return 'reserved'
  return 'public'
}

/** Classifies an IPv4 or IPv6 literal (`[::1]` brackets and zone ids accepted). Throws TypeError for non-IPs. */
export function classifyAddress(ip: string): AddressKind {
  const bare = unbracket(ip)
  const family = isIP(bare)
  if (family === 4) return classifyV4(parseIPv4(bare))
  if (family === 6) {
    const zone = bare.indexOf('%')
    return classifyV6(parseIPv6(zone === -1 ? bare : bare.slice(0, zone)))
  }
  throw new TypeError(`not an IP address: ${ip}`)
}

const KIND_PHRASE: Record<Exclude<AddressKind, 'public'>, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  'link-local': 'a link-local address',
  'unique-local': 'a unique-local address',
  metadata: 'a cloud metadata address',
  unspecified: 'an unspecified address',
  shared: 'a shared (carrier-grade NAT) address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
}

/** Returns why a connection to `ip` is refused, or undefined when it is allowed. */
export function addressRefusal(ip: string, options: GuardOptions): string | undefined {
  const kind = classifyAddress(ip)
  if (kind === 'public' || (kind === 'loopback' && options.allowLoopback)) return undefined
  return `${unbracket(ip)} is ${KIND_PHRASE[kind]}`
}

export class AddressRefusedError extends Error {
  readonly code = 'EADDRREFUSED_SSRF'

  constructor(message: string) {
    super(message)
    this.name = 'AddressRefusedError'
  }
}

/**
 * Resolves `hostname` (or takes an IP literal as is) and checks every answer:
 * one refused answer refuses the whole host, since an attacker controls the record set.
 */
export async function resolveAllowed(hostname: string, resolve: ResolveHost, options: GuardOptions): Promise<ResolvedAddress[]> {
  const literal = unbracket(hostname)
  const literalFamily = isIP(literal)
  if (literalFamily !== 0) {
    const refusal = addressRefusal(literal, options)
    if (refusal !== undefined) throw new AddressRefusedError(refusal)
    return [{ address: literal, family: literalFamily === 6 ? 6 : 4 }]
  }

  let answers: ResolvedAddress[]
  try {
    answers = await resolve(hostname)
  } catch (cause) {
    throw new Error(`could not resolve ${hostname}`, { cause })
  }
  if (answers.length === 0) throw new Error(`could not resolve ${hostname}`)

  const checked: ResolvedAddress[] = []
  for (const { address } of answers) {
    const family = isIP(address)
    // Never hand a non-IP answer to the socket layer, it would be looked up again.
    if (family === 0) throw new AddressRefusedError(`${hostname} resolved to ${JSON.stringify(address)}, which is not an IP address`)
    const refusal = addressRefusal(address, options)
    if (refusal !== undefined) throw new AddressRefusedError(refusal)
    checked.push({ address, family: family === 6 ? 6 : 4 })
  }
  return checked
}

function wantedFamily(family: number | 'IPv4' | 'IPv6' | undefined): 4 | 6 | undefined {
  if (family === 4 || family === 'IPv4') return 4
  if (family === 6 || family === 'IPv6') return 6
  return undefined
}

/**
 * A `lookup` for http(s).request / net.connect that only ever yields addresses
 * checked by resolveAllowed, so the socket connects to exactly what was vetted.
 */
export function pinnedLookup(resolve: ResolveHost, options: GuardOptions): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    const family = wantedFamily(lookupOptions.family)
    const all = lookupOptions.all === true
    // Callbacks run on a fresh tick so an exception thrown by the caller is not swallowed by the promise.
    const fail = (error: Error): void => {
      process.nextTick(() => callback(error, all ? [] : ''))
    }
    resolveAllowed(hostname, resolve, options).then(
      (addresses) => {
        const usable = family === undefined ? addresses : addresses.filter((a) => a.family === family)
        const first = usable[0]
        if (first === undefined) {
          fail(Object.assign(new Error(`could not resolve ${hostname} to an IPv${family ?? ''} address`), { code: 'ENOTFOUND' }))
          return
        }
        process.nextTick(() => {
          if (all) callback(null, usable.map((a) => ({ address: a.address, family: a.family })))
          else callback(null, first.address, first.family)
        })
      },
      (error: unknown) => fail(error instanceof Error ? error : new Error(String(error))),
    )
  }
}

/**
 * Why a webhook url may not be stored (production: checked at creation and update), or
 * undefined. The same guard runs again at every connection, which is what DNS changes can't evade.
 */
export async function webhookUrlAddressProblem(url: string, resolve: ResolveHost): Promise<string | undefined> {
  const hostname = new URL(url).hostname
  try {
    await resolveAllowed(hostname, resolve, { allowLoopback: false })
    return undefined
  } catch (error) {
    if (error instanceof AddressRefusedError) return `url must not point to a private or internal network: ${error.message}`
    return `url host ${hostname.replace(/^\[|\]$/g, '')} could not be resolved`
  }
}
