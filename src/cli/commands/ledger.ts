import { CHAIN_TOKENS, type ChainConfig, type ChainToken, ChainsConfigError, chainConfigOf, readChainsConfig } from '../../chains/config.js'
import { recordFloat, reconcileChain, type Reconciliation } from '../../chains/reconcile.js'
import { ChainRpc } from '../../chains/rpc.js'
import { type Db, writeTransaction } from '../../db/database.js'
import { AmountError, formatAmount, parseAmount } from '../../ledger/amount.js'
import { type LedgerEnvironment, verifyLedger } from '../../ledger/ledger.js'
import { answer, type Command, type Flags } from '../command.js'
import { LEDGER_ENVIRONMENTS, parseLedgerEnvironment } from '../options.js'
import type { Printed, Row } from '../render.js'
import { UsageError } from '../usage-error.js'

const ledgerVerify: Command = {
  name: 'ledger verify',
  usage: `  ledger verify [--environment sandbox|live]
      recompute every ledger balance from its postings and check every entry balances, each
      environment on its own (both by default); exit 1 with the first difference`,
  options: ['environment'],
  run: answer((db, { flags }) => verifyLedgers(db, flags.environment === undefined ? LEDGER_ENVIRONMENTS : [parseLedgerEnvironment(flags.environment, 'ledger verify')])),
}

const ledgerReconcile: Command = {
  name: 'ledger reconcile',
  usage: `  ledger reconcile --chain NAME [--environment live]
      compare what the books say each receiving address and the hot wallet of the chain hold of
      each token (pending payouts accounted for) with the token's balanceOf on chain, and the
      ledger's balances with the chain's deposits and payouts (docs/chains.md#reconciliation);
      exit 1 with every difference`,
  options: ['chain', 'environment'],
  run: answer(async (db, { flags, env }) => {
    if (flags.environment !== undefined && flags.environment !== 'live') throw new UsageError(`ledger reconcile: --environment must be live (got ${flags.environment}): the sandbox has no chain`)
    const config = chainOf(flags, env, 'ledger reconcile')
    return printedReconciliation(await reconcileChain(db, config, new ChainRpc(config)))
  }),
}

const ledgerFloat: Command = {
  name: 'ledger float',
  usage: `  ledger float --chain NAME --currency usdc|eurc --amount DECIMAL
      record that the operator put AMOUNT of the token into the chain's hot wallet (its float, which
      ledger reconcile expects there); prints the float the ledger now holds`,
  options: ['chain', 'currency', 'amount'],
  run: answer(async (db, { flags }) => {
    const chain = flags.chain?.trim()
    if (chain === undefined || chain === '') throw new UsageError('ledger float: --chain NAME is required')
    const currency = CHAIN_TOKENS.find((token) => token === flags.currency)
    if (currency === undefined) throw new UsageError(`ledger float: --currency must be one of ${CHAIN_TOKENS.join(', ')}`)
    const amount = parseFloatAmount(flags.amount, currency)
    const float = await writeTransaction(db, (tx) => recordFloat(tx, chain, currency, amount))
    return { json: { chain, currency, added: formatAmount(amount, currency), float: formatAmount(float, currency) }, text: `${chain}: the hot wallet's float of ${currency} is ${formatAmount(float, currency)}\n` }
  }),
}

export const LEDGER_COMMANDS: readonly Command[] = [ledgerVerify, ledgerReconcile, ledgerFloat]

function parseFloatAmount(text: string | undefined, currency: ChainToken): bigint {
  if (text === undefined) throw new UsageError('ledger float: --amount DECIMAL is required')
  let amount: bigint
  try {
    amount = parseAmount(text, currency)
  } catch (error) {
    if (error instanceof AmountError) throw new UsageError(`ledger float: --amount: ${error.message}`)
    throw error
  }
  if (amount <= 0n) throw new UsageError('ledger float: --amount must be greater than 0')
  return amount
}

/** The chain --chain names, as CHAINS_FILE configures it (no key is read). */
function chainOf(flags: Flags, env: NodeJS.ProcessEnv, command: string): ChainConfig {
  const name = flags.chain?.trim()
  if (name === undefined || name === '') throw new UsageError(`${command}: --chain NAME is required`)
  let chain: ChainConfig | undefined
  try {
    chain = chainConfigOf(readChainsConfig(env), name)
  } catch (error) {
    if (error instanceof ChainsConfigError) throw new UsageError(error.message)
    throw error
  }
  if (chain === undefined) throw new UsageError(`${command}: CHAINS_FILE configures no chain ${name}`)
  return chain
}

function printedReconciliation(result: Reconciliation): Printed {
  const differences = result.differences.map((difference) => ({
    address: difference.address,
    role: difference.role,
    currency: difference.currency,
    ledger: formatAmount(difference.ledger, difference.currency),
    chain: formatAmount(difference.chain, difference.currency),
    difference: formatAmount(difference.difference, difference.currency),
  }))
  const held = Object.fromEntries(Object.entries(result.held).map(([currency, sums]) => [currency, { ledger: formatAmount(sums.ledger, currency as ChainToken), chain: formatAmount(sums.chain, currency as ChainToken) }]))
  const json = { chain: result.chain, environment: 'live', ok: differences.length === 0, receiving_addresses: result.receivingAddresses, hot_wallets: result.hotWallets, held, differences }
  if (differences.length > 0) {
    const lines = differences.map((row) => `${row.address} ${row.currency} (${row.role}): ledger ${row.ledger}, chain ${row.chain}, difference ${row.difference}`)
    return { json, text: `${lines.join('\n')}\n${result.chain} live: ${differences.length} difference(s)\n`, exitCode: 1 }
  }
  const sums = Object.entries(held).map(([currency, sums]) => `${sums.chain} ${currency}`).join(', ')
  return { json, text: `${result.chain} live: no difference: ${result.receivingAddresses} receiving address(es) and ${result.hotWallets.length} hot wallet(s) hold ${sums === '' ? 'nothing' : sums}, as the books say\n`, exitCode: 0 }
}

/** `ledger verify`: each environment's first difference, or ok; exit 1 when any has one. */
async function verifyLedgers(db: Db, environments: readonly LedgerEnvironment[]): Promise<Printed> {
  const results: Row[] = []
  for (const environment of environments) {
    const difference = await verifyLedger(db, environment)
    // BigInts as decimal text: JSON has no integer past 2^53.
    const described = difference === undefined ? undefined : Object.fromEntries(Object.entries(difference).map(([name, value]) => [name, typeof value === 'bigint' ? value.toString() : value]))
    results.push({ environment, ok: difference === undefined, ...(described === undefined ? {} : { difference: described }) })
  }
  const text = results
    .map((result) => `${String(result.environment)}: ${result.ok === true ? 'ok' : `difference ${JSON.stringify(result.difference)}`}`)
    .join('\n')
  return { json: results, text: `${text}\n`, exitCode: results.every((result) => result.ok === true) ? 0 : 1 }
}
