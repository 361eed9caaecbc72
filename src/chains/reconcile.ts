import type { Db } from '../db/database.js'
import { newId } from '../db/time.js'
import { type AccountKey, LedgerRepository } from '../ledger/ledger.js'
import type { ChainConfig, ChainToken } from './config.js'

/**
 * Reconciliation of a chain (docs/chains.md#reconciliation): what the platform's books say each
 * of its addresses holds of each token, against the token's `balanceOf` on chain, and the
 * ledger's own balances against the chain module's records of deposits and payouts.
 *
 * - A receiving address should hold every deposit the watcher saw there and did not see taken
 *   away by a reorg (pending, confirmed, held, reorged or reversed), less what sweeps moved out
 *   of it (a sweep whose transferFrom is mined: confirmed, or mined and still counting).
 * - The hot wallet pays payouts out of the operator's float, which the ledger knows from the
 *   operator's records (`ledger float`), and out of what was swept into it: it should hold that
 *   float plus what sweeps moved in, less every payout whose transaction is mined (confirmed, or
 *   mined and still counting its confirmations). A sweep moves money between two of the
 *   platform's own addresses: the ledger, whose accounts are by owner, not by address, records
 *   nothing for it, and its records (chain_sweeps) are what says where the money sits.
 * - The ledger, per token: what its inflows from the chain (`chain:<chain>#…`, `inflow:<chain>#…`)
 *   bring in less what its outflows to the chain (`payout:<chain>#…`, `refund:<chain>#…`, pending
 *   included) take out must equal the credited deposits less the payouts not failed.
 */

/** What reconciliation reads on chain. */
export interface ChainBalances {
  tokenBalance(token: string, owner: string): Promise<bigint>
  receipt(hash: string): Promise<{ status: 'success' | 'reverted' } | undefined>
}

/** One place where the books and the chain (or the ledger and the records) differ; amounts in the token's smallest unit. */
export interface ReconcileDifference {
  /** the address, or `ledger` for the ledger's balances against the chain module's records */
  address: string
  role: 'receiving address' | 'hot wallet' | 'ledger'
  currency: ChainToken
  /** what the books say */
  ledger: bigint
  /** what the chain holds (for `ledger`: what the records say) */
  chain: bigint
  /** chain − ledger */
  difference: bigint
}

export interface Reconciliation {
  chain: string
  receivingAddresses: number
  hotWallets: readonly string[]
  /** per token: what the books say all the chain's addresses hold, and what they hold */
  held: Partial<Record<ChainToken, { ledger: bigint; chain: bigint }>>
  differences: ReconcileDifference[]
}

/** Deposits that are on chain at their address: every status but `removed` (the reorg took the transfer away). */
const ON_CHAIN_DEPOSITS = ['pending', 'confirmed', 'held', 'reorged', 'reversed']
/** How many balanceOf calls run at once. */
const CONCURRENCY = 8

/** The ledger's account of the operator's float of `currency` in the chain's hot wallet. */
export function hotWalletFloatAccount(chain: string, currency: ChainToken): AccountKey {
  return { environment: 'live', appId: '', kind: 'clearing', currency, reference: `hot-wallet:${chain}` }
}

/**
 * Records that the operator put `amount` of `currency` into the chain's hot wallet (its float),
 * in one posted entry from the operator's own account; `db` is a write transaction. Returns the
 * float the ledger now holds.
 */
export async function recordFloat(db: Db, chain: string, currency: ChainToken, amount: bigint): Promise<bigint> {
  const ledger = new LedgerRepository(db)
  const [operator, float] = (await ledger.accounts([{ environment: 'live', appId: '', kind: 'world', currency, reference: `operator:${chain}` }, hotWalletFloatAccount(chain, currency)])) as [string, string]
  await ledger.record({
    environment: 'live',
    appId: '',
    reasonType: 'hot_wallet_float',
    reasonId: newId(),
    status: 'posted',
    postings: [
      { accountId: operator, direction: 'debit', amount },
      { accountId: float, direction: 'credit', amount },
    ],
  })
  const [balance] = await ledger.balances([float])
  return balance?.available ?? 0n
}

function add(sums: Map<string, bigint>, key: string, amount: bigint): void {
  sums.set(key, (sums.get(key) ?? 0n) + amount)
}

/** Reconciles `config`'s chain: every receiving address and hot wallet, for every configured token. */
export async function reconcileChain(db: Db, config: ChainConfig, chain: ChainBalances): Promise<Reconciliation> {
  const tokens = Object.entries(config.tokens) as [ChainToken, string][]
  const currencies = tokens.map(([currency]) => currency)
  const addresses = (await db.selectFrom('chain_addresses').select('address').where('chain', '=', config.chain).where('environment', '=', 'live').orderBy('derivation_index').execute()).map((row) => row.address)

  // The books, per address and token ('address currency'), and per token.
  const expected = new Map<string, bigint>()
  const credited = new Map<string, bigint>()
  const deposits = await db
    .selectFrom('chain_deposits')
    .select(['to_address', 'currency', 'amount', 'status'])
    .where('chain', '=', config.chain)
    .where('environment', '=', 'live')
    .where('status', 'in', ON_CHAIN_DEPOSITS)
    .execute()
  for (const deposit of deposits) {
    add(expected, `${deposit.to_address} ${deposit.currency}`, BigInt(deposit.amount))
    if (deposit.status !== 'pending') add(credited, deposit.currency, BigInt(deposit.amount))
  }

  const payouts = await db.selectFrom('chain_payouts').select(['id', 'currency', 'amount', 'status', 'sender']).where('chain', '=', config.chain).where('environment', '=', 'live').execute()
  const paidOut = new Map<string, bigint>()
  const owed = new Map<string, bigint>()
  const inFlight = payouts.filter((payout) => payout.status === 'signed' || payout.status === 'submitted')
  const attempts = inFlight.length === 0 ? [] : await db.selectFrom('chain_payout_attempts').select(['payout_id', 'tx_hash']).where('payout_id', 'in', inFlight.map((payout) => payout.id)).execute()
  for (const payout of payouts) {
    if (payout.status !== 'failed') add(owed, payout.currency, BigInt(payout.amount))
    let mined = payout.status === 'confirmed'
    if (payout.status === 'signed' || payout.status === 'submitted') {
      // A payout in flight has left the hot wallet once one of its transactions is mined.
      for (const attempt of attempts.filter((candidate) => candidate.payout_id === payout.id)) {
        if ((await chain.receipt(attempt.tx_hash))?.status === 'success') mined = true
      }
    }
    if (mined) add(paidOut, payout.currency, BigInt(payout.amount))
  }
  // Sweeps: what left a receiving address for the hot wallet (its transferFrom mined).
  const sweeps = await db.selectFrom('chain_sweeps').select(['address', 'currency', 'amount', 'status', 'sender', 'transfer_tx_hash']).where('chain', '=', config.chain).where('environment', '=', 'live').where('status', '<>', 'failed').execute()
  const sweptIn = new Map<string, bigint>()
  for (const sweep of sweeps) {
    const moved = sweep.status === 'confirmed' || (await chain.receipt(sweep.transfer_tx_hash))?.status === 'success'
    if (!moved) continue
    add(expected, `${sweep.address} ${sweep.currency}`, -BigInt(sweep.amount))
    add(sweptIn, sweep.currency, BigInt(sweep.amount))
  }
  const senders = await db.selectFrom('chain_senders').select('address').where('chain', '=', config.chain).execute()
  const hotWallets = [...new Set([...senders.map((row) => row.address), ...payouts.flatMap((payout) => (payout.sender === null ? [] : [payout.sender])), ...sweeps.map((sweep) => sweep.sender)])].sort()

  // The ledger's own balances: the operator's float, and the chain's inflows and outflows.
  const accounts = await db
    .selectFrom('ledger_accounts')
    .select(['app_id', 'kind', 'currency', 'reference', 'debits_posted', 'credits_posted', 'debits_pending', 'credits_pending'])
    .where('environment', '=', 'live')
    .where('currency', 'in', currencies)
    .where((eb) =>
      eb.or([
        eb('reference', '=', `hot-wallet:${config.chain}`),
        ...['chain', 'inflow', 'payout', 'refund'].map((what) => eb.and([eb('kind', '=', 'world'), eb('reference', 'like', `${what}:${config.chain}#%`)])),
      ]),
    )
    .execute()
  const float = new Map<string, bigint>()
  const ledgerHeld = new Map<string, bigint>()
  for (const account of accounts) {
    const debits = BigInt(account.debits_posted) + BigInt(account.debits_pending)
    const credits = BigInt(account.credits_posted) + BigInt(account.credits_pending)
    if (account.reference === `hot-wallet:${config.chain}`) {
      if (account.app_id === '' && account.kind === 'clearing') add(float, account.currency, BigInt(account.credits_posted) - BigInt(account.debits_posted))
      continue
    }
    // An inflow is debited as money arrives; an outflow credited as it leaves.
    add(ledgerHeld, account.currency, debits - credits)
  }

  const jobs: { address: string; role: 'receiving address' | 'hot wallet'; currency: ChainToken; token: string }[] = []
  for (const address of addresses) for (const [currency, token] of tokens) jobs.push({ address, role: 'receiving address', currency, token })
  for (const address of hotWallets) for (const [currency, token] of tokens) jobs.push({ address, role: 'hot wallet', currency, token })
  const balances: bigint[] = new Array<bigint>(jobs.length)
  for (let start = 0; start < jobs.length; start += CONCURRENCY) {
    const batch = jobs.slice(start, start + CONCURRENCY)
    const read = await Promise.all(batch.map((job) => chain.tokenBalance(job.token, job.address)))
    read.forEach((balance, i) => (balances[start + i] = balance))
  }

  const differences: ReconcileDifference[] = []
  const held: Reconciliation['held'] = {}
  const hotHeld = new Map<string, bigint>()
  for (const [i, job] of jobs.entries()) {
    const onChain = balances[i] as bigint
    const total = held[job.currency] ?? { ledger: 0n, chain: 0n }
    total.chain += onChain
    held[job.currency] = total
    if (job.role === 'hot wallet') {
      add(hotHeld, job.currency, onChain)
      continue
    }
    const books = expected.get(`${job.address} ${job.currency}`) ?? 0n
    total.ledger += books
    if (onChain !== books) differences.push({ address: job.address, role: job.role, currency: job.currency, ledger: books, chain: onChain, difference: onChain - books })
  }
  for (const currency of currencies) {
    const total = held[currency] ?? { ledger: 0n, chain: 0n }
    held[currency] = total
    // Several hot wallets (a rotated key) share the chain's float: they are compared together.
    const books = (float.get(currency) ?? 0n) + (sweptIn.get(currency) ?? 0n) - (paidOut.get(currency) ?? 0n)
    total.ledger += books
    const onChain = hotHeld.get(currency) ?? 0n
    if (onChain !== books) differences.push({ address: hotWallets.length === 0 ? '(no sender has run: no hot wallet known)' : hotWallets.join(','), role: 'hot wallet', currency, ledger: books, chain: onChain, difference: onChain - books })
    const ledger = ledgerHeld.get(currency) ?? 0n
    const records = (credited.get(currency) ?? 0n) - (owed.get(currency) ?? 0n)
    if (ledger !== records) differences.push({ address: 'ledger', role: 'ledger', currency, ledger, chain: records, difference: records - ledger })
  }
  return { chain: config.chain, receivingAddresses: addresses.length, hotWallets, held, differences }
}
