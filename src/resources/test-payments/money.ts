import type { Db } from '../../db/database.js'
import { CURRENCY_DECIMALS } from '../../ledger/amount.js'
import { type AccountKey, LedgerRepository } from '../../ledger/ledger.js'
import { ensureWallets, findWallet, walletAccountKey, type WalletCurrency, type WalletRow } from '../wallets/public.js'
import type { TestPaymentRow } from './repository.js'
import type { PaymentCurrency } from './schemas.js'

/**
 * A test payment's money in the ledger: the sandbox's card network (a world account) pays the
 * application's base wallet the stablecoin of the payment's currency, in one posted entry; a
 * refund is the same entry the other way. Sandbox only: a test payment never touches live money.
 */

/** The stablecoin a payment in each currency is credited in. */
export const STABLECOIN_OF: Readonly<Record<PaymentCurrency, WalletCurrency>> = { USD: 'usdc', EUR: 'eurc' }

/** One cent in the stablecoin's smallest unit (2 decimals to 6). */
export const STABLECOIN_PER_CENT = 10n ** BigInt(CURRENCY_DECIMALS.usdc - CURRENCY_DECIMALS.usd)

/** The chain of the wallet a payment credits. */
const CREDITED_CHAIN = 'base'

/** Writes to the card network's account spread over this many rows, as drains spread theirs. */
const WORLD_SHARDS = 8

function cardNetwork(appId: string, currency: WalletCurrency, paymentId: string): AccountKey {
  const shard = Number.parseInt(paymentId.slice(-2), 16) % WORLD_SHARDS
  return { environment: 'sandbox', appId, kind: 'world', currency, reference: `card:test#${shard}` }
}

/** The payment's amount in the stablecoin's smallest unit. */
export function stablecoinUnits(cents: bigint): bigint {
  return cents * STABLECOIN_PER_CENT
}

async function moveBetween(db: Db, from: AccountKey, to: AccountKey, units: bigint, reason: { appId: string; type: string; id: string }): Promise<string> {
  const ledger = new LedgerRepository(db)
  const [debited, credited] = await ledger.accounts([from, to])
  return ledger.record({
    environment: 'sandbox',
    appId: reason.appId,
    reasonType: reason.type,
    reasonId: reason.id,
    status: 'posted',
    postings: [
      { accountId: debited as string, direction: 'debit', amount: units },
      { accountId: credited as string, direction: 'credit', amount: units },
    ],
  })
}

/** Credits a new payment to the application's base sandbox wallet (made on first use); `db` must be a write transaction. */
export async function creditPayment(db: Db, appId: string, paymentId: string, currency: PaymentCurrency, cents: bigint): Promise<{ wallet: WalletRow; entryId: string }> {
  const wallets = await ensureWallets(db, 'sandbox', appId)
  const wallet = wallets.find((row) => row.chain === CREDITED_CHAIN)
  if (wallet === undefined) throw new Error(`the application ${appId} has no ${CREDITED_CHAIN} sandbox wallet`)
  const coin = STABLECOIN_OF[currency]
  const entryId = await moveBetween(db, cardNetwork(appId, coin, paymentId), walletAccountKey(wallet, coin), stablecoinUnits(cents), { appId, type: 'test_payment', id: paymentId })
  return { wallet, entryId }
}

/**
 * Takes the payment's amount back out of the wallet it credited. Throws the ledger's
 * InsufficientFunds, with nothing written, when the wallet's available balance does not cover it.
 */
export async function debitRefund(db: Db, payment: TestPaymentRow, refundId: string): Promise<string> {
  const wallet = await findWallet(db, 'sandbox', payment.app_id, payment.wallet_id)
  if (wallet === undefined) throw new Error(`test payment ${payment.id}'s wallet ${payment.wallet_id} is missing`)
  const coin = STABLECOIN_OF[payment.currency as PaymentCurrency]
  return moveBetween(db, walletAccountKey(wallet, coin), cardNetwork(payment.app_id, coin, payment.id), stablecoinUnits(BigInt(payment.amount)), {
    appId: payment.app_id,
    type: 'test_payment_refund',
    id: refundId,
  })
}
