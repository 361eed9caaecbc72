import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { ChainsConfig } from './config.js'
import type { DepositStatus } from './repository.js'
import type { PayoutStatus } from './payouts.js'
import { PAYOUT_DEFAULTS } from './config.js'

/** Every payout status, in the order `chains status` and /metrics list them. */
export const PAYOUT_STATUSES: readonly PayoutStatus[] = ['queued', 'awaiting_approval', 'signed', 'submitted', 'confirmed', 'failed']

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
  /** live payouts by status (src/chains/sender.ts) */
  payouts: Record<PayoutStatus, number>
  /** seconds since the oldest payout not ended was queued; null when none */
  oldestOpenPayoutAgeSeconds: number | null
  /** what the chain's sender last saw of the hot wallet; null when no sender ran */
  hotWallet: { address: string; gasBalanceWei: string; seenAt: string } | null
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
 * Four statements: the cursors with their leases (a row per chain); the deposits and payouts by
 * chain and status with the addresses by chain (from their indexes alone); the open payouts'
 * oldest and those short of float; and what each sender saw of the hot wallet. Chains are those
 * of `config` and those with a row.
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
      select chain, 'addresses' as kind, '' as status, count(*) as n from chain_addresses group by chain
      union all
      select chain, 'payouts' as kind, status, count(*) as n from chain_payouts group by chain, status`.execute(db)
  ).rows
  const open = await db
    .selectFrom('chain_payouts')
    .select((eb) => ['chain', eb.fn.min('created_at').as('oldest'), eb.fn.count<number>('reason').as('short')])
    .where('status', 'in', ['queued', 'signed', 'submitted'])
    .groupBy('chain')
    .execute()
  const senders = await db.selectFrom('chain_senders').selectAll().execute()
  const names = new Set<string>([...(config?.chains.map((chain) => chain.chain) ?? []), ...cursors.map((row) => row.chain), ...counts.map((row) => row.chain), ...senders.map((row) => row.chain)])
  return [...names].sort().map((chain) => {
    const configured = config?.chains.find((candidate) => candidate.chain === chain)
    const cursor = cursors.find((row) => row.chain === chain)
    const deposits = Object.fromEntries(DEPOSIT_STATUSES.map((status) => [status, 0])) as Record<DepositStatus, number>
    const payouts = Object.fromEntries(PAYOUT_STATUSES.map((status) => [status, 0])) as Record<PayoutStatus, number>
    let watchedAddresses = 0
    for (const row of counts) {
      if (row.chain !== chain) continue
      if (row.kind === 'addresses') watchedAddresses = Number(row.n)
      else if (row.kind === 'payouts') {
        if ((PAYOUT_STATUSES as readonly string[]).includes(row.status)) payouts[row.status as PayoutStatus] = Number(row.n)
      }
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
    const openRow = open.find((row) => row.chain === chain)
    const sender = senders.find((row) => row.chain === chain)
    const oldestOpenPayoutAgeSeconds = openRow?.oldest == null ? null : Math.max(0, (nowMs - Date.parse(openRow.oldest)) / 1000)
    const short = Number(openRow?.short ?? 0)
    if (payouts.awaiting_approval > 0) alerts.push(`${payouts.awaiting_approval} payout(s) above the spending limit wait for an operator's approval (devplatform payouts approve)`)
    if (short > 0) alerts.push(`${short} payout(s) wait: the hot wallet's float of the token is short of them (docs/chains.md#sending-payouts)`)
    const minGas = configured?.minGasBalanceWei ?? PAYOUT_DEFAULTS.minGasBalanceWei
    if (sender !== undefined && configured !== undefined && BigInt(sender.gas_balance) < minGas) {
      alerts.push(`the hot wallet ${sender.address} holds ${sender.gas_balance} wei for gas, below minGasBalanceGwei (${minGas / 1_000_000_000n}): top it up before payouts stall`)
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
      payouts,
      oldestOpenPayoutAgeSeconds,
      hotWallet: sender === undefined ? null : { address: sender.address, gasBalanceWei: sender.gas_balance, seenAt: sender.seen_at },
      alerts,
    }
  })
}
