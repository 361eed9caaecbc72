import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { transactOn } from '../../src/events/transact.js'
import { domainHooks } from '../../src/resources/index.js'
import type { SignalSink } from '../../src/db/unit-of-work.js'
import { CURRENCY_DECIMALS, type Currency, formatAmount, parseAmount } from '../../src/ledger/amount.js'
import { verifyLedger } from '../../src/ledger/ledger.js'
import { ExchangeRates, rateCurrencyOf, SANDBOX_DEFAULT_RATES } from '../../src/ledger/rates.js'
import { advanceTransfer, type TransferContext } from '../../src/resources/transfers/lifecycle.js'
import { TEST_BACKEND } from '../backend.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * Random mixes of money in (direct-wallet, direct-bank, payment intents, fixed and flexible),
 * funds arriving (right, wrong or twice), cancels, money out (to a beneficiary, to a bank: some
 * refused for want of funds, some too small to convert), USDC ↔ EURC conversions, test payments
 * and their refunds, and the sandbox failure amounts 13.01/13.02/13.03, sent through the real
 * HTTP API; the transfers are moved on by the real step function (one at a time, in a random
 * order) on a clock only this test moves. After every operation: each answer is the one the
 * model predicts, the ledger verifies, no account but the world's is below zero, every currency
 * sums to zero over all accounts (no unit created or lost), and the wallet holds exactly what the
 * operations that succeeded say. At the end every transfer has ended, with one event per state.
 */

const RUNS = Number(process.env.TRANSFER_PROPERTY_RUNS ?? 60)
const TIMINGS = { fastDelayMs: 1_000, achDelayMs: 3_000 }
const FAILURES = { '13.01': 'undeliverable', '13.02': 'returned', '13.03': 'error' } as const
type FailureText = keyof typeof FAILURES
type Coin = 'usdc' | 'eurc'
type Fiat = 'usd' | 'eur'

const COINS: readonly Coin[] = ['usdc', 'eurc']
const RAILS: Readonly<Record<Fiat, readonly string[]>> = { usd: ['ach', 'wire'], eur: ['sepa', 'swift'] }
const NEXT: Readonly<Record<string, readonly string[]>> = {
  awaiting_funds: ['funds_received', 'canceled'],
  // returned: money in too small to deliver once converted goes back to its sender
  funds_received: ['payment_submitted', 'undeliverable', 'error', 'returned'],
  payment_submitted: ['payment_processed', 'returned'],
  returned: ['refunded'],
}

// ---------------------------------------------------------------------------------------------
// Generators

/** An amount: a failure amount, a small one (in the currency's smallest unit), or one no wallet here holds. */
type AmountSpec = { kind: 'failure'; text: FailureText } | { kind: 'units'; units: bigint } | { kind: 'tiny'; units: bigint } | { kind: 'huge' }

const amountArbitrary: fc.Arbitrary<AmountSpec> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<FailureText>('13.01', '13.02', '13.03').map((text) => ({ kind: 'failure' as const, text })) },
  { weight: 6, arbitrary: fc.bigInt({ min: 1n, max: 15n }).chain((whole) => fc.bigInt({ min: 0n, max: 999n }).map((milli) => ({ kind: 'units' as const, units: whole * 1000n + milli }))) },
  { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 3n }).map((units) => ({ kind: 'tiny' as const, units })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'huge' as const }) },
)
/** The fee in cents, when there is one. */
const feeArbitrary: fc.Arbitrary<bigint | undefined> = fc.constantFrom(undefined, undefined, 0n, 50n, 125n)

type Operation =
  | { kind: 'direct wallet'; currency: Coin; amount: AmountSpec; fee: bigint | undefined; asNumber: boolean }
  | { kind: 'direct bank'; from: Fiat; to: Coin; rail: number; amount: AmountSpec; fee: bigint | undefined; asNumber: boolean }
  | { kind: 'intent'; from: Coin; to: Coin; amount: AmountSpec | undefined }
  | { kind: 'funds'; transfer: number; awaiting: boolean; amount: 'own' | 'other' | AmountSpec }
  | { kind: 'cancel'; transfer: number; awaiting: boolean }
  | { kind: 'out to beneficiary'; from: Coin; to: Coin; amount: AmountSpec; fee: bigint | undefined; asNumber: boolean }
  | { kind: 'out to bank'; from: Coin; to: Fiat; rail: number; amount: AmountSpec; fee: bigint | undefined }
  | { kind: 'convert'; from: Coin; amount: AmountSpec }
  | { kind: 'payment'; currency: 'USD' | 'EUR'; cents: bigint }
  | { kind: 'refund'; payment: number }
  | { kind: 'step'; transfer: number; ongoing: boolean }
  | { kind: 'scan' }

const coin = fc.constantFrom<Coin>(...COINS)
const fiat = fc.constantFrom<Fiat>('usd', 'eur')

const operationArbitrary: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('direct wallet' as const), currency: coin, amount: amountArbitrary, fee: feeArbitrary, asNumber: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('direct bank' as const), from: fiat, to: coin, rail: fc.nat(1), amount: amountArbitrary, fee: feeArbitrary, asNumber: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('intent' as const), from: coin, to: coin, amount: fc.option(amountArbitrary, { nil: undefined }) }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('funds' as const),
      transfer: fc.nat(),
      awaiting: fc.constantFrom(true, true, true, false),
      amount: fc.oneof({ weight: 6, arbitrary: fc.constant<'own'>('own') }, { weight: 1, arbitrary: fc.constant<'other'>('other') }, { weight: 2, arbitrary: amountArbitrary }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), transfer: fc.nat(), awaiting: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('out to beneficiary' as const), from: coin, to: coin, amount: amountArbitrary, fee: feeArbitrary, asNumber: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('out to bank' as const), from: coin, to: fiat, rail: fc.nat(1), amount: amountArbitrary, fee: feeArbitrary }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('convert' as const), from: coin, amount: amountArbitrary }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('payment' as const), currency: fc.constantFrom<'USD' | 'EUR'>('USD', 'EUR'), cents: fc.bigInt({ min: 1n, max: 20_000n }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('refund' as const), payment: fc.nat() }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('step' as const), transfer: fc.nat(), ongoing: fc.constantFrom(true, true, true, false) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'scan' as const }) },
)

// ---------------------------------------------------------------------------------------------
// The model, computed here independently of src/

function unitsOf(spec: AmountSpec, currency: Currency): bigint {
  const decimals = CURRENCY_DECIMALS[currency]
  switch (spec.kind) {
    case 'failure':
      return parseAmount(spec.text, currency)
    case 'units':
      // thousandths of a whole unit, as the currency's smallest unit
      return decimals >= 3 ? spec.units * 10n ** BigInt(decimals - 3) : spec.units / 10n ** BigInt(3 - decimals) + 1n
    case 'tiny':
      return spec.units
    case 'huge':
      return 1_000_000n * 10n ** BigInt(decimals)
  }
}

function failureOf(units: bigint, currency: Currency): (typeof FAILURES)[FailureText] | undefined {
  for (const [text, failure] of Object.entries(FAILURES)) if (parseAmount(text, currency) === units) return failure
  return undefined
}

/** The buy rate the sandbox uses between two currencies when none is loaded (1 between a fiat and its stablecoin). */
function rateOf(from: Currency, to: Currency): string {
  const a = rateCurrencyOf(from)
  const b = rateCurrencyOf(to)
  if (a === b) return '1'
  const rate = SANDBOX_DEFAULT_RATES.find((candidate) => candidate.from === a && candidate.to === b)
  if (rate === undefined) throw new Error(`no sandbox rate ${a} → ${b}`)
  return rate.buy
}

function converted(units: bigint, from: Currency, to: Currency): bigint {
  const [whole = '0', fraction = ''] = rateOf(from, to).split('.')
  return (units * BigInt(whole + fraction) * 10n ** BigInt(CURRENCY_DECIMALS[to])) / (10n ** BigInt(fraction.length) * 10n ** BigInt(CURRENCY_DECIMALS[from]))
}

const feeUnits = (cents: bigint | undefined, currency: Currency) => (cents ?? 0n) * 10n ** BigInt(CURRENCY_DECIMALS[currency] - 2)

interface TransferModel {
  id: string
  family: 'transfer' | 'payment_intent'
  inbound: boolean
  currency: Currency
  destination: Coin | Fiat
  /** whether the money ends in the wallet (money in, conversions) */
  toWallet: boolean
  /** null: flexible until funds arrive */
  amount: bigint | null
  fee: bigint
  path: string[]
}

interface PaymentModel {
  id: string
  coin: Coin
  units: bigint
  refunded: boolean
}

class Model {
  readonly transfers: TransferModel[] = []
  readonly payments: PaymentModel[] = []
  /** the wallet's available balance */
  readonly available: Record<Coin, bigint> = { usdc: 0n, eurc: 0n }

  state(transfer: TransferModel): string {
    return transfer.path[transfer.path.length - 1] as string
  }

  ongoing(transfer: TransferModel): boolean {
    const state = this.state(transfer)
    return state === 'funds_received' || state === 'payment_submitted' || state === 'returned'
  }

  /** One step of an ongoing transfer: its next state, and the wallet's change. */
  step(transfer: TransferModel): void {
    const state = this.state(transfer)
    const failure = transfer.amount === null ? undefined : failureOf(transfer.amount, transfer.currency)
    const amount = transfer.amount ?? 0n
    let next: string
    if (state === 'funds_received') {
      next = failure === 'undeliverable' || failure === 'error' ? failure : 'payment_submitted'
      // Money in that converts to less than the destination's smallest unit cannot be delivered: it goes back.
      if (next === 'payment_submitted' && transfer.inbound && converted(amount - transfer.fee, transfer.currency, transfer.destination) <= 0n) next = 'returned'
      // A failed transfer out releases its reservation.
      if (next !== 'payment_submitted' && !transfer.inbound) this.available[transfer.currency as Coin] += amount + transfer.fee
    } else if (state === 'payment_submitted') {
      next = failure === 'returned' ? 'returned' : 'payment_processed'
      if (next === 'returned' && !transfer.inbound) this.available[transfer.currency as Coin] += amount + transfer.fee
      if (next === 'payment_processed' && transfer.toWallet) {
        const credited = transfer.inbound ? converted(amount - transfer.fee, transfer.currency, transfer.destination) : converted(amount, transfer.currency, transfer.destination)
        this.available[transfer.destination as Coin] += credited
      }
    } else if (state === 'returned') next = 'refunded'
    else throw new Error(`${transfer.id} stepped in ${state}`)
    transfer.path.push(next)
  }
}

// ---------------------------------------------------------------------------------------------
// The harness

let server: TestServer
let transact: ReturnType<typeof transactOn>
/** The steps' clock: past every step the API scheduled, and moved on by each step. */
let clock = Date.now() + 3_600_000
const context: TransferContext = { rates: new ExchangeRates({ maxAgeMs: 60_000, now: () => clock }), timings: TIMINGS, now: () => clock }
const noSignals: SignalSink = { signalStatements: () => undefined, committed: () => undefined }

beforeAll(async () => {
  server = await startTestServer({ config: { drains: { scheduler: false, fastDelayMs: TIMINGS.fastDelayMs, achDelayMs: TIMINGS.achDelayMs, pollIntervalMs: 1_000, concurrency: 1 } } })
  transact = transactOn(server.app.db, noSignals, domainHooks({ publicUrl: () => server.baseUrl, money: { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 0, achDelayMs: 0 }, now: Date.now } }))
})

afterAll(async () => {
  await server.close()
})

interface Answer {
  status: number
  text: string
  body: { id: string; state: string; amount: string | null; message?: string; receipt?: { exchange_rate?: string; converted_amount?: string } }
}

const wire = (units: bigint, currency: Currency, asNumber: boolean) => (asNumber ? Number(formatAmount(units, currency)) : formatAmount(units, currency))

class Run {
  readonly model = new Model()
  readonly counts = new Map<string, number>()

  constructor(
    private readonly key: TestKey,
    private readonly walletId: string,
  ) {}

  private count(what: string): void {
    this.counts.set(what, (this.counts.get(what) ?? 0) + 1)
  }

  private async post(path: string, body: unknown, idempotent = false): Promise<Answer> {
    const answer = await server.request<Answer['body']>('POST', path, { key: this.key, body, headers: idempotent ? { 'idempotency-key': randomUUID() } : {} })
    return { status: answer.status, text: answer.text, body: answer.body }
  }

  private pick<T>(list: readonly T[], index: number): T | undefined {
    return list.length === 0 ? undefined : list[index % list.length]
  }

  /** A new transfer out of the wallet: 400 when the fee or the converted amount is wrong, 409 when the wallet does not cover it, else 201. */
  private async out(path: string, body: Record<string, unknown>, from: Coin, to: Coin | Fiat, units: bigint, fee: bigint, toWallet: boolean, what: string): Promise<void> {
    const answer = await this.post(`/api/v0/transfers/${path}`, body)
    const feeTooHigh = fee > 0n && fee >= units
    const nothingArrives = converted(units, from, to) <= 0n
    if (feeTooHigh || nothingArrives) {
      expect(answer.status, `${what}: ${answer.text}`).toBe(400)
      this.count(`${what} 400`)
      return
    }
    if (units + fee > this.model.available[from]) {
      expect(answer.status, `${what}: ${answer.text}`).toBe(409)
      expect(answer.body.message).toBe(`Insufficient funds: the wallet has ${formatAmount(this.model.available[from], from)} ${from.toUpperCase()} available and this transfer needs ${formatAmount(units + fee, from)}`)
      this.count(`${what} 409`)
      return
    }
    expect(answer.status, `${what}: ${answer.text}`).toBe(201)
    expect(answer.body.state).toBe('funds_received')
    this.model.available[from] -= units + fee
    this.model.transfers.push({ id: answer.body.id, family: 'transfer', inbound: false, currency: from, destination: to, toWallet, amount: units, fee, path: ['funds_received'] })
    this.count(`${what} 201`)
  }

  private async inbound(path: string, body: Record<string, unknown>, family: TransferModel['family'], currency: Currency, destination: Coin, units: bigint | null, fee: bigint, what: string): Promise<void> {
    const answer = await this.post(path, body, family === 'payment_intent')
    if (units !== null && fee > 0n && fee >= units) {
      expect(answer.status, `${what}: ${answer.text}`).toBe(400)
      return
    }
    expect(answer.status, `${what}: ${answer.text}`).toBe(201)
    expect(answer.body.state).toBe('awaiting_funds')
    this.model.transfers.push({ id: answer.body.id, family, inbound: true, currency, destination, toWallet: true, amount: units, fee, path: ['awaiting_funds'] })
    this.count(what)
  }

  async apply(operation: Operation): Promise<void> {
    const model = this.model
    switch (operation.kind) {
      case 'direct wallet': {
        const units = unitsOf(operation.amount, operation.currency)
        const fee = feeUnits(operation.fee, operation.currency)
        const body = { walletId: this.walletId, network: 'ethereum', stableCoinCurrency: operation.currency, amount: wire(units, operation.currency, operation.asNumber), ...(operation.fee === undefined ? {} : { developer_fee: formatAmount(operation.fee, 'usd') }) }
        return this.inbound('/api/v0/transfers/direct-wallet', body, 'transfer', operation.currency, operation.currency, units, fee, 'direct wallet')
      }
      case 'direct bank': {
        const units = unitsOf(operation.amount, operation.from)
        const fee = feeUnits(operation.fee, operation.from)
        const body = {
          walletId: this.walletId,
          paymentRail: RAILS[operation.from][operation.rail],
          sourceCurrency: operation.from,
          destinationCurrency: operation.to,
          amount: wire(units, operation.from, operation.asNumber),
          ...(operation.fee === undefined ? {} : { developer_fee: Number(formatAmount(operation.fee, 'usd')) }),
        }
        return this.inbound('/api/v0/transfers/direct-bank', body, 'transfer', operation.from, operation.to, units, fee, 'direct bank')
      }
      case 'intent': {
        const units = operation.amount === undefined ? null : unitsOf(operation.amount, operation.from)
        // Names: an intent above 1000 needs the payer's.
        const body = { sourceCurrency: operation.from, sourceNetwork: 'ethereum', destinationNetwork: 'base', destinationCurrency: operation.to, customer_first_name: 'Ada', customer_last_name: 'Lovelace', ...(units === null ? {} : { amount: formatAmount(units, operation.from) }) }
        return this.inbound('/api/v0/payment-intents/stablecoin', body, 'payment_intent', operation.from, operation.to, units, 0n, units === null ? 'flexible intent' : 'intent')
      }
      case 'funds': {
        const transfer = this.pick(operation.awaiting ? model.transfers.filter((candidate) => model.state(candidate) === 'awaiting_funds') : model.transfers, operation.transfer)
        if (transfer === undefined) return
        const base = transfer.family === 'transfer' ? '/api/v0/transfers' : '/api/v0/payment-intents'
        let sent: bigint | undefined
        if (operation.amount === 'own') sent = transfer.amount ?? undefined
        else if (operation.amount === 'other') sent = (transfer.amount ?? 1n) + 1n
        else sent = unitsOf(operation.amount, transfer.currency)
        const answer = await this.post(`${base}/${transfer.id}/simulate_funds`, sent === undefined ? {} : { amount: formatAmount(sent, transfer.currency) })
        const state = model.state(transfer)
        const received = transfer.amount ?? sent
        if (state !== 'awaiting_funds') {
          expect(answer.status, answer.text).toBe(409)
          expect(answer.body.message).toBe(`Funds can only arrive while awaiting funds; this one is ${state}`)
          return
        }
        if (received === undefined || (transfer.amount !== null && sent !== undefined && sent !== transfer.amount) || (sent !== undefined && sent > parseAmount('1000000000', transfer.currency)) || transfer.fee >= received) {
          expect(answer.status, answer.text).toBe(400)
          this.count('funds 400')
          return
        }
        expect(answer.status, answer.text).toBe(200)
        expect(answer.body.state).toBe('funds_received')
        transfer.amount = received
        transfer.path.push('funds_received')
        this.count('funds arrive')
        return
      }
      case 'cancel': {
        const transfer = this.pick(operation.awaiting ? model.transfers.filter((candidate) => model.state(candidate) === 'awaiting_funds') : model.transfers, operation.transfer)
        if (transfer === undefined) return
        const base = transfer.family === 'transfer' ? '/api/v0/transfers' : '/api/v0/payment-intents'
        const answer = await server.request<Answer['body']>('DELETE', `${base}/${transfer.id}`, { key: this.key })
        if (model.state(transfer) !== 'awaiting_funds') {
          expect(answer.status, answer.text).toBe(409)
          return
        }
        expect(answer.status, answer.text).toBe(200)
        transfer.path.push('canceled')
        this.count('cancel')
        return
      }
      case 'out to beneficiary': {
        const units = unitsOf(operation.amount, operation.from)
        const fee = feeUnits(operation.fee, operation.from)
        const body = { sourceWalletId: this.walletId, sourceCurrency: operation.from, destinationCurrency: operation.to, beneficiaryId: 'beneficiary_1', amount: wire(units, operation.from, operation.asNumber), ...(operation.fee === undefined ? {} : { developer_fee: formatAmount(operation.fee, 'usd') }) }
        return this.out('external-stablecoin-transfer', body, operation.from, operation.to, units, fee, false, 'out to beneficiary')
      }
      case 'out to bank': {
        const units = unitsOf(operation.amount, operation.from)
        const fee = feeUnits(operation.fee, operation.from)
        const body = { sourceWalletId: this.walletId, sourceCurrency: operation.from, destinationCurrency: operation.to, destinationPaymentRail: RAILS[operation.to][operation.rail], external_account_id: 'ext_1', amount: formatAmount(units, operation.from), ...(operation.fee === undefined ? {} : { developer_fee: formatAmount(operation.fee, 'usd') }) }
        return this.out('external-bank-transfer', body, operation.from, operation.to, units, fee, false, 'out to bank')
      }
      case 'convert': {
        const to: Coin = operation.from === 'usdc' ? 'eurc' : 'usdc'
        const units = unitsOf(operation.amount, operation.from)
        const body = { walletId: this.walletId, sourceNetwork: 'base', sourceCurrency: operation.from, destinationCurrency: to, amount: formatAmount(units, operation.from) }
        return this.out('stablecoin-conversion', body, operation.from, to, units, 0n, true, 'convert')
      }
      case 'payment': {
        const answer = await this.post('/api/v0/test-payment', { amount: Number(formatAmount(operation.cents, 'usd')), currency: operation.currency, description: 'property' }, true)
        expect(answer.status, answer.text).toBe(201)
        const paid: Coin = operation.currency === 'USD' ? 'usdc' : 'eurc'
        const units = operation.cents * 10_000n
        model.available[paid] += units
        model.payments.push({ id: answer.body.id, coin: paid, units, refunded: false })
        this.count('payment')
        return
      }
      case 'refund': {
        const payment = this.pick(model.payments, operation.payment)
        if (payment === undefined) return
        const answer = await this.post(`/api/v0/test-payment/${payment.id}/refund`, undefined, true)
        if (payment.refunded || model.available[payment.coin] < payment.units) {
          expect(answer.status, answer.text).toBe(409)
          this.count('refund 409')
          return
        }
        expect(answer.status, answer.text).toBe(200)
        payment.refunded = true
        model.available[payment.coin] -= payment.units
        this.count('refund')
        return
      }
      case 'step': {
        const transfer = this.pick(operation.ongoing ? model.transfers.filter((candidate) => model.ongoing(candidate)) : model.transfers, operation.transfer)
        if (transfer === undefined) return
        return this.step(transfer)
      }
      case 'scan':
        for (const transfer of model.transfers) if (model.ongoing(transfer)) await this.step(transfer)
    }
  }

  /** One step of the transfer, by the real step function; it moves only an ongoing one. */
  private async step(transfer: TransferModel): Promise<void> {
    clock += 3_600_000
    const moved = await transact((tx) => advanceTransfer(tx, context, transfer.id))
    expect(moved, `${transfer.id} (${transfer.path.join(' → ')})`).toBe(this.model.ongoing(transfer))
    if (moved) this.model.step(transfer)
    const [row] = await server.app.db.selectFrom('transfers').select(['state', 'amount', 'exchange_rate', 'converted_amount']).where('id', '=', transfer.id).execute()
    expect(row?.state, `${transfer.id} (${transfer.path.join(' → ')})`).toBe(this.model.state(transfer))
  }

  /** The invariants that hold after every operation. */
  async check(): Promise<void> {
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
    const accounts = await server.app.db.selectFrom('ledger_accounts').selectAll().where('environment', '=', 'sandbox').execute()
    const sums = new Map<string, { posted: bigint; pending: bigint }>()
    for (const account of accounts) {
      if (account.kind !== 'world') expect(BigInt(account.available) >= 0n, `account ${account.kind} ${account.reference} ${account.currency} is below zero: ${account.available}`).toBe(true)
      const sum = sums.get(account.currency) ?? { posted: 0n, pending: 0n }
      sum.posted += BigInt(account.credits_posted) - BigInt(account.debits_posted)
      sum.pending += BigInt(account.credits_pending) - BigInt(account.debits_pending)
      sums.set(account.currency, sum)
    }
    for (const [currency, sum] of sums) expect(sum, `${currency} over all accounts`).toEqual({ posted: 0n, pending: 0n })
    for (const currency of COINS) {
      const wallet = accounts.find((account) => account.kind === 'wallet' && account.reference === this.walletId && account.currency === currency)
      expect(BigInt(wallet?.available ?? '0'), `the wallet's ${currency}`).toBe(this.model.available[currency])
    }
  }

  /** Every transfer moved on until it ends; none is left with a step to come. */
  async finish(): Promise<void> {
    for (let round = 0; round < 4; round++) await this.apply({ kind: 'scan' })
    for (const transfer of this.model.transfers) expect(this.model.ongoing(transfer), `${transfer.id} (${transfer.path.join(' → ')})`).toBe(false)
    const waiting = await server.app.db.selectFrom('transfers').select('id').where('app_id', '=', this.key.appId).where('next_step_at', 'is not', null).execute()
    expect(waiting).toEqual([])
  }

  /** One .created and one .updated per state each transfer went through, in its order. */
  async checkEvents(): Promise<void> {
    const rows = await server.app.db.selectFrom('events').select(['type', 'payload']).where('app_id', '=', this.key.appId).where((eb) => eb.or([eb('type', 'like', 'transfer.%'), eb('type', 'like', 'payment_intent.%')])).orderBy('id').execute()
    const seen = new Map<string, { type: string; state: string }[]>()
    for (const row of rows) {
      const data = (JSON.parse(row.payload) as { data: { id: string; state: string } }).data
      seen.set(data.id, [...(seen.get(data.id) ?? []), { type: row.type, state: data.state }])
    }
    expect(seen.size).toBe(this.model.transfers.length)
    for (const transfer of this.model.transfers) {
      const events = seen.get(transfer.id) ?? []
      expect(events.map((event) => event.state), transfer.id).toEqual(transfer.path)
      expect(events.map((event) => event.type), transfer.id).toEqual(events.map((_, index) => `${transfer.family}.${index === 0 ? 'created' : 'updated'}`))
      for (let index = 1; index < transfer.path.length; index++) expect(NEXT[transfer.path[index - 1] as string]).toContain(transfer.path[index])
    }
  }
}

const failure = (text: FailureText): AmountSpec => ({ kind: 'failure', text })
const units = (thousandths: bigint): AmountSpec => ({ kind: 'units', units: thousandths })

/** A sequence that takes every way a transfer can go, run before the random ones. */
const EVERY_PATH: Operation[] = [
  { kind: 'payment', currency: 'USD', cents: 20_000n },
  { kind: 'payment', currency: 'EUR', cents: 100n },
  ...(['13.01', '13.02', '13.03'] as const).map((text): Operation => ({ kind: 'out to beneficiary', from: 'usdc', to: 'usdc', amount: failure(text), fee: undefined, asNumber: true })),
  { kind: 'out to bank', from: 'usdc', to: 'usd', rail: 0, amount: units(5_000n), fee: 125n },
  { kind: 'convert', from: 'usdc', amount: units(2_000n) },
  { kind: 'out to beneficiary', from: 'usdc', to: 'eurc', amount: { kind: 'huge' }, fee: undefined, asNumber: false },
  ...(['13.01', '13.02', '13.03'] as const).map((text): Operation => ({ kind: 'direct wallet', currency: 'usdc', amount: failure(text), fee: 50n, asNumber: false })),
  { kind: 'direct wallet', currency: 'usdc', amount: units(3_000n), fee: undefined, asNumber: true },
  { kind: 'direct wallet', currency: 'eurc', amount: units(1_000n), fee: undefined, asNumber: true },
  ...Array.from({ length: 4 }, (): Operation => ({ kind: 'funds', transfer: 0, awaiting: true, amount: 'own' })),
  { kind: 'cancel', transfer: 0, awaiting: true },
  { kind: 'refund', payment: 1 },
  { kind: 'refund', payment: 1 },
]

/** Each run on an empty ledger, so the checks after every operation cost the same in every run. */
async function startRun(): Promise<void> {
  await transact(async (tx) => {
    for (const table of ['test_payments', 'ledger_postings', 'ledger_entries', 'ledger_accounts', 'transfers'] as const) await tx.db.deleteFrom(table).execute()
  })
}

describe(`transfers, payment intents and test payments against the ledger, random sequences (${TEST_BACKEND})`, () => {
  it(`${RUNS} random sequences keep every answer, every wallet and the ledger exact`, { timeout: Math.max(120_000, RUNS * 4_000) }, async () => {
    const totals = new Map<string, number>()
    const paths = new Map<string, number>()
    await fc.assert(
      fc.asyncProperty(fc.array(operationArbitrary, { minLength: 5, maxLength: 60 }), async (operations) => {
        await startRun()
        const key = await server.createKey({ environment: 'development' })
        const wallets = await server.request<{ data: { id: string; chain: string }[] }>('GET', '/api/v0/wallets', { key })
        const walletId = wallets.body.data.find((wallet) => wallet.chain === 'base')?.id as string
        const run = new Run(key, walletId)
        for (const operation of operations) {
          await run.apply(operation)
          await run.check()
        }
        await run.finish()
        await run.check()
        await run.checkEvents()
        for (const [what, count] of run.counts) totals.set(what, (totals.get(what) ?? 0) + count)
        for (const transfer of run.model.transfers) {
          const path = `${transfer.inbound ? 'in' : 'out'}: ${transfer.path.join('>')}`
          paths.set(path, (paths.get(path) ?? 0) + 1)
        }
      }),
      { numRuns: RUNS, examples: [[EVERY_PATH]] },
    )
    process.stdout.write(`transfers-property (${TEST_BACKEND}): ${[...totals].map(([what, count]) => `${what}: ${count}`).join(', ')}; ${[...paths].map(([path, count]) => `${path}: ${count}`).join(', ')}\n`)
    // The sequences reached every way a transfer can go.
    for (const path of [
      'in: awaiting_funds>funds_received>payment_submitted>payment_processed',
      'in: awaiting_funds>funds_received>undeliverable',
      'in: awaiting_funds>funds_received>error',
      'in: awaiting_funds>funds_received>payment_submitted>returned>refunded',
      'in: awaiting_funds>canceled',
      'out: funds_received>payment_submitted>payment_processed',
      'out: funds_received>undeliverable',
      'out: funds_received>error',
      'out: funds_received>payment_submitted>returned>refunded',
    ]) {
      expect(paths.get(path) ?? 0, path).toBeGreaterThan(0)
    }
    for (const what of ['refund', 'refund 409', 'out to beneficiary 409', 'convert 201', 'out to bank 201']) expect(totals.get(what) ?? 0, what).toBeGreaterThan(0)
  })
})
