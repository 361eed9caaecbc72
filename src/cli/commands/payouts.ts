import { isoOf } from '../../db/time.js'
import { PayoutsRepository, type PayoutStatus } from '../../chains/payouts.js'
import { PAYOUT_STATUSES } from '../../chains/status.js'
import { answer, type Command } from '../command.js'
import { parseLimit } from '../options.js'
import { rows } from '../render.js'
import { UsageError } from '../usage-error.js'

const payoutsList: Command = {
  name: 'payouts list',
  usage: `  payouts list [--status queued|awaiting_approval|signed|submitted|confirmed|failed] [--limit N]
      live payouts on chain, newest first (N from 1 to 1000, default 50), with why one waits and
      who approved it (docs/chains.md#spending-limits)`,
  options: ['status', 'limit'],
  run: answer(async (db, { flags }) => {
    const status = flags.status
    if (status !== undefined && !(PAYOUT_STATUSES as readonly string[]).includes(status)) throw new UsageError(`payouts list: --status must be one of ${PAYOUT_STATUSES.join(', ')}`)
    const payouts = await new PayoutsRepository(db).list(status as PayoutStatus | undefined, parseLimit(flags.limit))
    return rows(
      payouts.map((payout) => ({
        id: payout.id,
        chain: payout.chain,
        status: payout.status,
        currency: payout.currency,
        amount: payout.amount,
        to_address: payout.to_address,
        owner: `${payout.owner_type}:${payout.owner_id}`,
        tx_hash: payout.tx_hash,
        reason: payout.reason,
        approved_by: payout.approved_by,
        approved_at: payout.approved_at,
      })),
    )
  }),
}

const payoutsApprove: Command = {
  name: 'payouts approve',
  usage: `  payouts approve --payout ID --by NAME --reason TEXT
      send a payout held above the chain's spending limit: it is queued again and sent without the
      limit; who approved it, when and why stay on the payout (payouts list)`,
  options: ['payout', 'by', 'reason'],
  run: answer(async (db, { flags }) => {
    const id = flags.payout
    const by = flags.by?.trim()
    const reason = flags.reason?.trim()
    if (id === undefined || id === '') throw new UsageError('payouts approve: --payout ID is required')
    if (by === undefined || by === '' || by.length > 200) throw new UsageError('payouts approve: --by NAME is required (1 to 200 characters): who approves')
    if (reason === undefined || reason === '' || reason.length > 1000) throw new UsageError('payouts approve: --reason TEXT is required (1 to 1000 characters): why')
    const repository = new PayoutsRepository(db)
    const at = isoOf(Date.now())
    if (!(await repository.approve(id, by, reason, at))) {
      const payout = await repository.find(id)
      throw new UsageError(payout === undefined ? `payouts approve: no payout ${id}` : `payouts approve: payout ${id} is ${payout.status}, not awaiting_approval`)
    }
    return { json: { id, status: 'queued', approved_by: by, approved_at: at, approval_reason: reason }, text: `payout ${id} approved by ${by}: queued to be sent\n` }
  }),
}

export const PAYOUTS_COMMANDS: readonly Command[] = [payoutsList, payoutsApprove]
