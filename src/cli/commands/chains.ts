import { ChainsConfigError, loadChainsConfig } from '../../chains/config.js'
import { type ChainStatus, readChainsStatus } from '../../chains/status.js'
import { answer, type Command } from '../command.js'
import type { Printed } from '../render.js'
import { UsageError } from '../usage-error.js'

const chainsStatus: Command = {
  name: 'chains status',
  usage: `  chains status
      each chain of CHAINS_FILE and each chain the database has read: head, cursor, lag, when the
      head was last seen, the last RPC error, the watcher's lease, deposits by status and watched
      addresses, payouts by status and the hot wallet's gas, from the database alone; exit 1 when a
      chain has reversed deposits, its head was not seen for max(10 × pollIntervalMs, 60 s), payouts
      wait for the hot wallet's float, or its gas is below minGasBalanceGwei (docs/chains.md)`,
  options: [],
  run: answer(async (db, { env }) => {
    let config
    try {
      config = loadChainsConfig(env)
    } catch (error) {
      if (error instanceof ChainsConfigError) throw new UsageError(error.message)
      throw error
    }
    return printedStatus(await readChainsStatus(db, config))
  }),
}

export const CHAINS_COMMANDS: readonly Command[] = [chainsStatus]

function printedStatus(chains: readonly ChainStatus[]): Printed {
  const exitCode = chains.some((chain) => chain.alerts.length > 0) ? 1 : 0
  if (chains.length === 0) return { json: chains, text: 'no chain: CHAINS_FILE names none and the database has read none\n', exitCode }
  return { json: chains, text: chains.map(chainText).join('\n'), exitCode }
}

function chainText(chain: ChainStatus): string {
  const seen = chain.headSeenAt === null ? 'never' : `${chain.headSeenAt} (${Math.round(chain.headAgeSeconds ?? 0)} s ago)`
  const deposits = Object.entries(chain.deposits)
    .map(([status, count]) => `${status} ${count}`)
    .join(', ')
  const lines = [
    `${chain.chain}${chain.configured ? '' : ' (not in CHAINS_FILE: not watched)'}: ${chain.alerts.length > 0 ? 'ALERT' : 'ok'}`,
    `  head ${chain.head ?? '-'}, cursor ${chain.cursor ?? '-'}, lag ${chain.lag ?? '-'} blocks; head seen ${seen}`,
    `  last error: ${chain.lastError === null ? 'none' : `${chain.lastErrorAt ?? ''} ${chain.lastError}`}`,
    `  lease: ${chain.leaseHolder === null ? 'none' : `${chain.leaseHolder} until ${chain.leaseExpiresAt ?? ''}`}`,
    `  deposits: ${deposits}; watched addresses ${chain.watchedAddresses}`,
    `  payouts: ${Object.entries(chain.payouts)
      .map(([status, count]) => `${status} ${count}`)
      .join(', ')}; oldest open ${chain.oldestOpenPayoutAgeSeconds === null ? 'none' : `${Math.round(chain.oldestOpenPayoutAgeSeconds)} s`}`,
    `  hot wallet: ${chain.hotWallet === null ? 'no sender has run' : `${chain.hotWallet.address}, gas ${chain.hotWallet.gasBalanceWei} wei at ${chain.hotWallet.seenAt}`}`,
    ...chain.alerts.map((alert) => `  ALERT: ${alert}`),
  ]
  return `${lines.join('\n')}\n`
}
