import { AppsRepository } from '../../apps/repository.js'
import type { Db } from '../../db/database.js'
import { DeliveryNotifier } from '../../delivery/notifier.js'
import { DomainError } from '../../errors.js'
import { transactOn } from '../../events/transact.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { actOnHeld, type HeldActionName, listHeld } from '../../resources/held/public.js'
import { answer, type Command, type CommandCall, type Flags } from '../command.js'
import { cliHooks, cliMoneyContext } from '../money-context.js'
import { parseLedgerEnvironment, required } from '../options.js'
import { type Printed, rows, table } from '../render.js'
import { UsageError } from '../usage-error.js'

/** --environment of the held commands: sandbox unless it says live. */
const environmentOf = (flags: Flags, command: string): LedgerEnvironment => (flags.environment === undefined ? 'sandbox' : parseLedgerEnvironment(flags.environment, command))

async function knownApp(db: Db, flags: Flags): Promise<string> {
  const appId = required(flags, 'app')
  if ((await new AppsRepository(db).findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
  return appId
}

const heldList: Command = {
  name: 'held list',
  usage: `  held list --app APP_ID [--environment sandbox|live]
      the application's money held in clearing for an operator, longest held first: drains and
      money in that ended in error, undeliverable, returned or canceled with nowhere to go
      (docs/operations.md#held-money)`,
  options: ['app', 'environment'],
  run: answer(async (db, { flags }) => {
    const appId = await knownApp(db, flags)
    const items = await listHeld(db, environmentOf(flags, 'held list'), appId)
    return { json: items, text: table(items.map(({ livemode: _, ...item }) => item)) }
  }),
}

/** An action's run: the drain or transfer it names, who and why, carried out with the audit in one transaction. */
async function act(db: Db, { flags, env }: CommandCall, action: HeldActionName): Promise<Printed> {
  const command = `held ${action}`
  const appId = await knownApp(db, flags)
  if ((flags.drain === undefined) === (flags.transfer === undefined)) throw new UsageError(`${command}: name one of --drain ID or --transfer ID`)
  const by = flags.by?.trim()
  const reason = flags.reason?.trim()
  if (by === undefined || by === '' || by.length > 200) throw new UsageError(`${command}: --by NAME is required (1 to 200 characters): who acts`)
  if (reason === undefined || reason === '' || reason.length > 1000) throw new UsageError(`${command}: --reason TEXT is required (1 to 1000 characters): why`)
  if (action === 'release' && (flags.wallet === undefined || flags.wallet.trim() === '')) throw new UsageError(`${command}: --wallet WALLET_ID is required: the application's wallet the funds go into`)
  // The CLI always acts with a key: the one given, so the same command run again does nothing more, or a new one it prints.
  const key = flags['idempotency-key'] ?? `cli:${crypto.randomUUID()}`
  const context = cliMoneyContext(env)
  const transact = transactOn(db, new DeliveryNotifier(), cliHooks(env, context))
  try {
    const { action: done, replayed } = await transact((tx) =>
      actOnHeld(tx, context, {
        environment: environmentOf(flags, command),
        appId,
        kind: flags.drain === undefined ? 'transfer' : 'drain',
        id: flags.drain ?? flags.transfer ?? '',
        action,
        by,
        reason,
        idempotencyKey: key,
        returnAddress: flags['return-address'],
        walletId: flags.wallet,
      }),
    )
    const printed = rows({ ...done, idempotency_key: key })
    return { ...printed, text: `${printed.text}${replayed ? 'Already done with this --idempotency-key: nothing more was done.\n' : ''}` }
  } catch (error) {
    if (error instanceof DomainError) throw new UsageError(`${command}: ${error.message}`)
    throw error
  }
}

const target = '--app APP_ID (--drain ID | --transfer ID)'
const common = '--by NAME --reason TEXT [--environment sandbox|live] [--idempotency-key KEY]'

const heldRetry: Command = {
  name: 'held retry',
  usage: `  held retry ${target} ${common}
      submit a drain or money in that ended in error again, now: a pending entry reserves its
      payout and the scheduler takes it on; the action and who, when, why are audited`,
  options: ['app', 'drain', 'transfer', 'by', 'reason', 'environment', 'idempotency-key'],
  run: answer((db, call) => act(db, call, 'retry')),
}

const heldRefund: Command = {
  name: 'held refund',
  usage: `  held refund ${target} [--return-address ADDRESS] ${common}
      send held funds back: to the liquidation address's return address (given ADDRESS first when
      it has none), or to a transfer's sender; one ledger entry, audited`,
  options: ['app', 'drain', 'transfer', 'return-address', 'by', 'reason', 'environment', 'idempotency-key'],
  run: answer((db, call) => act(db, call, 'refund')),
}

const heldRelease: Command = {
  name: 'held release',
  usage: `  held release ${target} --wallet WALLET_ID ${common}
      move held funds, whole and without a fee, into one of the application's wallets; one ledger
      entry, audited`,
  options: ['app', 'drain', 'transfer', 'wallet', 'by', 'reason', 'environment', 'idempotency-key'],
  run: answer((db, call) => act(db, call, 'release')),
}

export const HELD_COMMANDS: readonly Command[] = [heldList, heldRetry, heldRefund, heldRelease]
