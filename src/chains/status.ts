import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { ChainsConfig } from './config.js'
import type { DepositStatus } from './repository.js'

/** Every deposit status, in the order `chains status` and /metrics list them. */
export const DEPOSIT_STATUSES: readonly DepositStatus[] = ['pending', 'confirmed', 'held', 'removed', 'reorged', 'reversed']

/** The longest a watched chain's head may go unseen before it is an alert: ten polls, at least a minute. */
export function staleAfterMs(pollIntervalMs: number): number {
  return Math.max(10 * pollIntervalMs, 60_000)
}

/**
 * What the database holds of one chain: written by whichever process watches it (any instance),
 * so `chains status` and /metrics read it without talking to a node or a watcher.
 */
export interface ChainStatus {
  chain: string
  /** in CHAINS_FILE as the reader has it; false: only its rows are left (a chain switched off) */
  configured: boolean
  /** the newest head the watcher saw, and when */
  head: number | null
  headSeenAt: string | null
  /** the first block not read yet */
  cursor: number | null
  /** blocks seen on chain and not read yet */
  lag: number | null
  /** seconds since the head was last seen; null when never */
  headAgeSeconds: number | null
  lastError: string | null
  lastErrorAt: string | null
  /** the instance holding the watcher's lease, and when it runs out unless renewed */
  leaseHolder: string | null
  leaseExpiresAt: string | null
  deposits: Record<DepositStatus, number>
  watchedAddresses: number
  /** why the chain needs an operator (reversed deposits, a head not seen for too long); empty when none */
  alerts: string[]
}

interface CursorRow {
  chain: string
  next_block: number | string
  head_block: number | string | null
  head_seen_at: string | null
  last_error: string | null
  last_error_at: string | null
  holder: string | null
  expires_at: string | null
}

interface CountRow {
  chain: string
  kind: string
  status: string
  n: number | string
}

/**
 * Two statements: the cursors with their leases (a row per chain), and the deposits by chain and
 * status with the addresses by chain (read from the indexes chain_deposits_status and
 * chain_addresses_chain alone). Chains are those of `config` and those with a row.
 */
export async function readChainsStatus(db: Db, config: ChainsConfig | undefined, nowMs: number = Date.now()): Promise<ChainStatus[]> {
  const cursors = (
    await sql<CursorRow>`
      select c.chain, c.next_block, c.head_block, c.head_seen_at, c.last_error, c.last_error_at, l.holder, l.expires_at
      from chain_cursors c left join chain_leases l on l.name = ${sql.lit('watcher:')} || c.chain`.execute(db)
  ).rows
  const counts = (
    await sql<CountRow>`
      select chain, 'deposits' as kind, status, count(*) as n from chain_deposits group by chain, status
      union all
      select chain, 'addresses' as kind, '' as status, count(*) as n from chain_addresses group by chain`.execute(db)
  ).rows
  const names = new Set<string>([...(config?.chains.map((chain) => chain.chain) ?? []), ...cursors.map((row) => row.chain), ...counts.map((row) => row.chain)])
  return [...names].sort().map((chain) => {
    const configured = config?.chains.find((candidate) => candidate.chain === chain)
    const cursor = cursors.find((row) => row.chain === chain)
    const deposits = Object.fromEntries(DEPOSIT_STATUSES.map((status) => [status, 0])) as Record<DepositStatus, number>
    let watchedAddresses = 0
    for (const row of counts) {
      if (row.chain !== chain) continue
      if (row.kind === 'addresses') watchedAddresses = Number(row.n)
      else if ((DEPOSIT_STATUSES as readonly string[]).includes(row.status)) deposits[row.status as DepositStatus] = Number(row.n)
    }
    const head = cursor?.head_block === null || cursor === undefined ? null : Number(cursor.head_block)
    const next = cursor === undefined ? null : Number(cursor.next_block)
    const headSeenAt = cursor?.head_seen_at ?? null
    const headAgeSeconds = headSeenAt === null ? null : Math.max(0, (nowMs - Date.parse(headSeenAt)) / 1000)
    const alerts: string[] = []
    if (deposits.reversed > 0) alerts.push(`${deposits.reversed} reversed deposit(s): credited, then taken away by a reorg (docs/chains.md#reorgs)`)
    if (configured !== undefined) {
      const limitSeconds = staleAfterMs(configured.pollIntervalMs) / 1000
      if (headAgeSeconds === null) alerts.push('head never seen: no instance has read this chain (DRAIN_SCHEDULER=on or a worker, and the RPC node)')
      else if (headAgeSeconds > limitSeconds) alerts.push(`head not seen for ${Math.round(headAgeSeconds)} s (more than ${limitSeconds} s)`)
    }
    return {
      chain,
      configured: configured !== undefined,
      head,
      headSeenAt,
      cursor: next,
      lag: head === null || next === null ? null : Math.max(0, head + 1 - next),
      headAgeSeconds,
      lastError: cursor?.last_error ?? null,
      lastErrorAt: cursor?.last_error_at ?? null,
      leaseHolder: cursor?.holder ?? null,
      leaseExpiresAt: cursor?.expires_at ?? null,
      deposits,
      watchedAddresses,
      alerts,
    }
  })
}
