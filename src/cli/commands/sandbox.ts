import { DeliveryNotifier } from '../../delivery/notifier.js'
import type { Db } from '../../db/database.js'
import { AppsRepository } from '../../apps/repository.js'
import { DomainError } from '../../errors.js'
import { transactOn } from '../../events/transact.js'
import { domainHooks } from '../../resources/index.js'
import { CustomersRepository } from '../../resources/customers/repository.js'
import { receiveDeposit } from '../../resources/drains/lifecycle.js'
import { receiveFunds } from '../../resources/transfers/lifecycle.js'
import { TransfersRepository } from '../../resources/transfers/repository.js'
import { AmountError, type Currency, MAX_AMOUNT_UNITS, parseAmount } from '../../ledger/amount.js'
import { answer, cliPublicUrl, type Command, type Flags } from '../command.js'
import { cliHooks, cliMoneyContext } from '../money-context.js'
import { required } from '../options.js'
import { type Printed, table } from '../render.js'
import { UsageError } from '../usage-error.js'

const sandboxDeposit: Command = {
  name: 'sandbox deposit',
  usage: `  sandbox deposit --app APP_ID --customer CUSTOMER_ID --address LIQUIDATION_ADDRESS_ID --amount DECIMAL [--tx-hash HASH] [--from ADDRESS]
      a sandbox deposit to a liquidation address, as simulate_deposit takes it; prints the drain`,
  options: ['app', 'customer', 'address', 'amount', 'tx-hash', 'from'],
  run: answer((db, { flags, env }) => depositInSandbox(db, flags, env)),
}

const sandboxFunds: Command = {
  name: 'sandbox funds',
  usage: `  sandbox funds --app APP_ID --transfer TRANSFER_ID [--amount DECIMAL]
      the funds a sandbox transfer or payment intent awaits arrive, as simulate_funds takes them
      (--amount: the transfer's own by default; required when it is flexible); prints the transfer`,
  options: ['app', 'transfer', 'amount'],
  run: answer((db, { flags, env }) => fundInSandbox(db, flags, env)),
}

export const SANDBOX_COMMANDS: readonly Command[] = [sandboxDeposit, sandboxFunds]

/** `sandbox deposit`: the same intake as simulate_deposit, for any application's address. */
async function depositInSandbox(db: Db, flags: Flags, env: NodeJS.ProcessEnv): Promise<Printed> {
  const appId = required(flags, 'app')
  const deposit = { customerId: required(flags, 'customer'), liquidationAddressId: required(flags, 'address'), amount: required(flags, 'amount') }
  if ((await new AppsRepository(db).findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
  const context = cliMoneyContext(env)
  const transact = transactOn(db, new DeliveryNotifier(), cliHooks(env, context))
  try {
    const drain = await transact(async (tx) => {
      if ((await new CustomersRepository(tx.db).find(appId, deposit.customerId)) === undefined) throw new UsageError(`unknown customer of application ${appId}: ${deposit.customerId}`)
      return receiveDeposit(tx, context, { environment: 'sandbox', appId, ...deposit, depositTxHash: flags['tx-hash'], fromAddress: flags.from })
    })
    const { destination, receipt, ...summary } = drain
    return { json: drain, text: table({ ...summary, destination: `${destination.payment_rail} ${destination.currency}`, developer_fee: receipt.developer_fee }) }
  } catch (error) {
    if (error instanceof DomainError) throw new UsageError(error.message)
    throw error
  }
}

/** `sandbox funds`: the same intake as simulate_funds, for any application's transfer or payment intent. */
async function fundInSandbox(db: Db, flags: Flags, env: NodeJS.ProcessEnv): Promise<Printed> {
  const appId = required(flags, 'app')
  const id = required(flags, 'transfer')
  const amountText = flags.amount
  if (amountText !== undefined && amountText.trim() === '') throw new UsageError('--amount needs a decimal amount')
  const publicUrl = cliPublicUrl(env)
  if ((await new AppsRepository(db).findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
  const context = cliMoneyContext(env)
  const transact = transactOn(db, new DeliveryNotifier(), domainHooks({ publicUrl: () => publicUrl, money: context }))
  try {
    const transfer = await transact(async (tx) => {
      const transfers = new TransfersRepository(tx.db)
      // One id names a transfer or a payment intent, never both: the CLI takes either.
      const family = (await transfers.find('sandbox', appId, 'transfer', id)) !== undefined ? 'transfer' : 'payment_intent'
      const row = await transfers.find('sandbox', appId, family, id)
      if (row === undefined) throw new UsageError(`unknown sandbox transfer or payment intent of application ${appId}: ${id}`)
      return receiveFunds(tx, context, family, 'sandbox', appId, id, amountText === undefined ? undefined : cliAmount(amountText, row.currency as Currency))
    })
    const { source, destination, source_deposit_instructions: instructions, receipt, ...summary } = transfer
    return { json: transfer, text: table({ ...summary, source: `${source.payment_rail} ${source.currency}`, destination: `${destination.payment_rail} ${destination.currency}`, developer_fee: receipt.developer_fee }) }
  } catch (error) {
    if (error instanceof DomainError) throw new UsageError(error.message)
    throw error
  }
}

/** An --amount as the API takes an amount: at most the currency's decimals, above 0, not past the most one request moves. */
function cliAmount(text: string, currency: Currency): bigint {
  let units: bigint
  try {
    units = parseAmount(text, currency)
  } catch (error) {
    if (error instanceof AmountError) throw new UsageError(`amount: ${error.message}`)
    throw error
  }
  if (units <= 0n) throw new UsageError('amount must be greater than 0')
  if (units > parseAmount(MAX_AMOUNT_UNITS.toString(), currency)) throw new UsageError(`amount must be at most ${MAX_AMOUNT_UNITS}`)
  return units
}


