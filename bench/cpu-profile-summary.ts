/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most self time, and the
 * share of samples whose stack passes through each of a few named parts of the server (inclusive
 * time), so a profile's lines can be quoted next to the change they motivated.
 *
 *   npx tsx bench/cpu-profile-summary.ts PROFILE.cpuprofile [--top 30]
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' } } })
const file = positionals[0]
if (file === undefined) throw new Error('usage: cpu-profile-summary PROFILE.cpuprofile [--top N]')
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const parent = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

const where = (node: ProfileNode) => {
  const raw = node.callFrame.url.replace(/^file:\/\//, '')
  const url = raw.includes('node_modules/') ? raw.replace(/.*node_modules\//, '~/') : raw.replace(/.*\/(dist|src)\//, '$1/')
  return `${node.callFrame.functionName || '(anonymous)'} ${url}${url === '' ? '' : `:${node.callFrame.lineNumber + 1}`}`
}
const idle = new Set(['(idle)', '(program)', '(garbage collector)'])
const counts = new Map<number, number>()
for (const sample of profile.samples) counts.set(sample, (counts.get(sample) ?? 0) + 1)
const total = profile.samples.length
const busy = profile.samples.filter((id) => !idle.has(byId.get(id)?.callFrame.functionName ?? '')).length

const self = new Map<string, number>()
for (const [id, count] of counts) {
  const node = byId.get(id)
  if (node !== undefined) self.set(where(node), (self.get(where(node)) ?? 0) + count)
}
const pct = (n: number) => `${((n / total) * 100).toFixed(1)} %`
console.log(`${file}: ${total} samples, ${pct(busy)} busy (not idle, program or GC)\n`)
console.log('self time, top functions:')
for (const [name, count] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) console.log(`  ${pct(count).padStart(7)}  ${name}`)

// Inclusive share of named parts: a sample counts once for a part if any frame of its stack matches.
const PARTS: [string, RegExp][] = [
  ['socket writes (writev/writeGeneric)', /^(writev|writeGeneric|writeBuffer|writeUtf8String)\b/],
  ['SQLite statements (native, under kysely\'s sqlite driver executeQuery)', /^executeQuery ~\/kysely\/dist\/esm\/dialect\/sqlite\//],
  ['kysely (building + executing)', /~\/kysely\//],
  ['pino', /~\/pino/],
  ['ajv / validation', /~\/ajv|src\/validation|dist\/validation/],
  ['JSON serialisation (fast-json-stringify)', /~\/fast-json-stringify|\$main|anonymous.*fast-json/],
  ['authentication', /(dist|src)\/auth\//],
  ['rate limiter', /rate-limiter/],
  ['webhooks (dispatcher, sender, outcome)', /(dist|src)\/webhooks\//],
  ['wal sync', /wal-sync/],
  ['crypto digests', /^(digest|update|createHash|createHmac|timingSafeEqual)\b/],
]
const inclusive = new Map<string, number>()
for (const [id, count] of counts) {
  const matched = new Set<string>()
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const node = byId.get(at)
    if (node === undefined) break
    const name = where(node)
    for (const [part, pattern] of PARTS) if (pattern.test(name)) matched.add(part)
  }
  for (const part of matched) inclusive.set(part, (inclusive.get(part) ?? 0) + count)
}
console.log('\ninclusive time, named parts:')
for (const [part] of PARTS) console.log(`  ${pct(inclusive.get(part) ?? 0).padStart(7)}  ${part}`)
