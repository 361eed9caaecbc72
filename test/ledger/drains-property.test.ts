import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isoOf } from '../../src/db/time.js'
import { transactOn } from '../../src/events/transact.js'
import { domainHooks } from '../../src/resources/index.js'
import type { SignalSink } from '../../src/db/unit-of-work.js'
import { CURRENCY_DECIMALS, type Currency, formatAmount, parseAmount } from '../../src/ledger/amount.js'
import type { LedgerEnvironment } from '../../src/ledger/ledger.js'
import { verifyLedger } from '../../src/ledger/ledger.js'
import { ExchangeRates, type RateCurrency, rateCurrencyOf, SANDBOX_DEFAULT_RATES, saveRates } from '../../src/ledger/rates.js'
import { newWalletAddress, type WalletRow, WalletsRepository } from '../../src/resources/wallets/repository.js'
import { advanceDrain, type DrainContext, MAX_DEPOSIT_UNITS, RATE_RETRY_MS, receiveDeposit } from '../../src/resources/drains/lifecycle.js'
import { TEST_BACKEND } from '../backend.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * Random sequences of deposits, deactivations, exchange rates, clock ticks and drain steps (one
 * at a time, all that are due, or several at once on the same drains) against the real intake
 * and the real step function, on a real database. After every operation each drain must have
 * moved exactly as the drain model says (only when due, one step, to the state its deposit and
 * address call for) and the ledger must verify; at the end of each sequence, every drain's
 * entries and every account of the application must add up to what its drains say, unit for
 * unit: nothing created, nothing lost.
 */

const RUNS = Number(process.env.DRAIN_PROPERTY_RUNS ?? 50)
const MAX_AGE_MS = 60_000
const TIMINGS = { fastDelayMs: 1_000, achDelayMs: 3_000 }
const ACH_RAILS = new Set(['ach', 'ach_push', 'ach_same_day'])

const SOURCE_CURRENCIES = ['usdc', 'eurc', 'dai', 'pyusd', 'usdt'] as const
const DESTINATION_CURRENCIES = ['usd', 'eur', 'mxn', 'usdc', 'eurc', 'dai', 'pyusd', 'usdt'] as const
const SOURCE_CHAINS = ['base', 'ethereum', 'polygon', 'solana'] as const
const BANK_RAILS = ['ach', 'ach_push', 'ach_same_day', 'wire', 'sepa', 'swift', 'spei'] as const
const ENVIRONMENTS: readonly LedgerEnvironment[] = ['sandbox', 'live']
const FAILURES = { '13.01': 'undeliverable', '13.02': 'returned', '13.03': 'error' } as const
type FailureText = keyof typeof FAILURES

type SourceCurrency = (typeof SOURCE_CURRENCIES)[number]
type DestinationCurrency = (typeof DESTINATION_CURRENCIES)[number]
type SourceChain = (typeof SOURCE_CHAINS)[number]

type DestinationSpec =
  | { kind: 'bank'; rail: (typeof BANK_RAILS)[number]; currency: DestinationCurrency }
  | { kind: 'chain'; rail: SourceChain; currency: DestinationCurrency }
  | { kind: 'own wallet'; environment: LedgerEnvironment; wallet: number; currency: DestinationCurrency }
  | { kind: 'foreign wallet'; currency: DestinationCurrency }

interface AddressSpec {
  currency: SourceCurrency
  chain: SourceChain
  fee: string | undefined
  destination: DestinationSpec
  returnAddress: boolean
}

type AmountSpec = { kind: 'one' } | { kind: 'max' } | { kind: 'units'; units: bigint } | { kind: 'failure'; text: FailureText } | { kind: 'beside failure'; text: FailureText; by: -1n | 1n }

interface DepositSpec {
  address: number
  amount: AmountSpec
  environment: LedgerEnvironment
}

type Operation =
  | ({ kind: 'deposit' } & DepositSpec)
  | { kind: 'deactivate'; address: number }
  | { kind: 'tick'; ms: number }
  | { kind: 'step'; drain: number }
  | { kind: 'scan' }
  | { kind: 'burst'; drains: number[]; deposits: DepositSpec[] }
  | { kind: 'rate'; environment: LedgerEnvironment; from: RateCurrency; to: RateCurrency; buyDigits: bigint; buyScale: number }

interface Scenario {
  addresses: AddressSpec[]
  operations: Operation[]
}

// ---------------------------------------------------------------------------------------------
// Generators

const feeArbitrary: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('0', '99.99999', '0.00001', '50', '1.5'),
  fc.tuple(fc.integer({ min: 0, max: 99 }), fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 0, maxLength: 5 })).map(([whole, fraction]) => (fraction === '' ? String(whole) : `${whole}.${fraction}`)),
)

const destinationArbitrary: fc.Arbitrary<DestinationSpec> = fc.oneof(
  fc.record({ kind: fc.constant('bank' as const), rail: fc.constantFrom(...BANK_RAILS), currency: fc.constantFrom(...DESTINATION_CURRENCIES) }),
  fc.record({ kind: fc.constant('chain' as const), rail: fc.constantFrom(...SOURCE_CHAINS), currency: fc.constantFrom(...DESTINATION_CURRENCIES) }),
  fc.record({ kind: fc.constant('own wallet' as const), environment: fc.constantFrom(...ENVIRONMENTS), wallet: fc.integer({ min: 0, max: 2 }), currency: fc.constantFrom(...DESTINATION_CURRENCIES) }),
  fc.record({ kind: fc.constant('foreign wallet' as const), currency: fc.constantFrom(...DESTINATION_CURRENCIES) }),
)

const addressArbitrary: fc.Arbitrary<AddressSpec> = fc.record({
  currency: fc.constantFrom(...SOURCE_CURRENCIES),
  chain: fc.constantFrom(...SOURCE_CHAINS),
  fee: feeArbitrary,
  destination: destinationArbitrary,
  returnAddress: fc.constantFrom(true, true, false),
})

const failureText = fc.constantFrom<FailureText>('13.01', '13.02', '13.03')

const amountArbitrary: fc.Arbitrary<AmountSpec> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: 'one' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'max' as const }) },
  { weight: 4, arbitrary: fc.bigInt({ min: 1n, max: 10n ** 9n }).map((units) => ({ kind: 'units' as const, units })) },
  { weight: 2, arbitrary: fc.bigInt({ min: 1n, max: 10n ** 28n }).map((units) => ({ kind: 'units' as const, units })) },
  { weight: 5, arbitrary: failureText.map((text) => ({ kind: 'failure' as const, text })) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('beside failure' as const), text: failureText, by: fc.constantFrom<-1n | 1n>(-1n, 1n) }) },
)

const depositArbitrary: fc.Arbitrary<DepositSpec> = fc.record({
  address: fc.nat(),
  amount: amountArbitrary,
  environment: fc.constantFrom<LedgerEnvironment>('sandbox', 'sandbox', 'sandbox', 'live'),
})

const ratePair = fc.constantFrom<[RateCurrency, RateCurrency]>(['usd', 'eur'], ['eur', 'usd'], ['usd', 'mxn'], ['mxn', 'usd'], ['eur', 'mxn'], ['mxn', 'eur'])

const operationArbitrary: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 6, arbitrary: depositArbitrary.map((deposit) => ({ kind: 'deposit' as const, ...deposit })) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deactivate' as const), address: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.constantFrom(1, 999, 1_000, 2_999, 3_000, 5_000, 70_000) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('step' as const), drain: fc.nat() }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'scan' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('burst' as const), drains: fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), deposits: fc.array(depositArbitrary, { maxLength: 3 }) }),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...ENVIRONMENTS), ratePair, fc.bigInt({ min: 1n, max: 10n ** 10n }), fc.integer({ min: 0, max: 12 }))
      .map(([environment, [from, to], buyDigits, buyScale]) => ({ kind: 'rate' as const, environment, from, to, buyDigits, buyScale })),
  },
)

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  addresses: fc.array(addressArbitrary, { minLength: 1, maxLength: 4 }),
  operations: fc.array(operationArbitrary, { minLength: 5, maxLength: 40 }),
})

// ---------------------------------------------------------------------------------------------
// The model: what a drain must do next, computed here independently of src/

interface Rate {
  digits: bigint
  scale: number
  text: string
}

function rateOf(text: string): Rate {
  const [whole = '0', fraction = ''] = text.split('.')
  return { digits: BigInt(whole + fraction), scale: fraction.length, text }
}

function decimalText(digits: bigint, scale: number): string {
  if (scale === 0) return digits.toString()
  const padded = digits.toString().padStart(scale + 1, '0')
  return `${padded.slice(0, -scale)}.${padded.slice(-scale)}`
}

/** `units` of `from` at `rate`, in `to`'s smallest unit, rounded down. */
function converted(units: bigint, from: Currency, to: Currency, rate: Rate): bigint {
  return (units * rate.digits * 10n ** BigInt(CURRENCY_DECIMALS[to])) / (10n ** BigInt(rate.scale) * 10n ** BigInt(CURRENCY_DECIMALS[from]))
}

/** The fee of a percent of at most 5 decimals, rounded down. */
function feeOfPercent(units: bigint, percent: string | undefined): bigint {
  const [whole = '0', fraction = ''] = (percent ?? '0').split('.')
  return (units * BigInt(whole + fraction.padEnd(5, '0'))) / 10_000_000n
}

interface AddressModel {
  id: string
  spec: AddressSpec
  active: boolean
  /** the wallet bridge_wallet_id names, when it is one of the application's */
  ownWallet: WalletRow | undefined
}

/** Where the money of a submitted drain goes: an account kind and reference (shard stripped). */
interface Receiving {
  kind: 'wallet' | 'world'
  reference: string
  currency: Currency
}

interface Submission {
  rate: string
  fee: bigint
  subtotal: bigint
  to: Currency
  converted: bigint
  receiving: Receiving
}

interface DrainModel {
  id: string
  address: AddressModel
  environment: LedgerEnvironment
  amount: bigint
  currency: SourceCurrency
  failure: (typeof FAILURES)[FailureText] | undefined
  /** every state it has been in, the first one funds_received */
  path: string[]
  nextStepAt: string | null
  submission: Submission | undefined
}

interface StoredRateModel {
  environment: LedgerEnvironment
  from: RateCurrency
  to: RateCurrency
  buy: string
  asOf: number
}

type Expected = { state: string; nextStepAt: string | null; submission?: Submission }

class Model {
  readonly drains: DrainModel[] = []
  readonly rates: StoredRateModel[] = []

  constructor(readonly addresses: AddressModel[]) {}

  private rate(environment: LedgerEnvironment, from: RateCurrency, to: RateCurrency, now: number): string | undefined {
    if (from === to) return '1'
    const newest = this.rates.filter((rate) => rate.environment === environment && rate.from === from && rate.to === to).sort((a, b) => b.asOf - a.asOf)[0]
    if (newest !== undefined && now - newest.asOf <= MAX_AGE_MS) return newest.buy
    if (environment === 'sandbox') return SANDBOX_DEFAULT_RATES.find((rate) => rate.from === from && rate.to === to)?.buy
    return undefined
  }

  /** Whether the drain waits for a payout sender: live money paid out of the platform is not simulated (docs/chains.md). */
  waitsForSender(drain: DrainModel): boolean {
    const destination = drain.address.spec.destination
    return drain.environment === 'live' && (destination.kind === 'bank' || destination.kind === 'chain')
  }

  /** The wait before each step of the drain, by its destination's rail. */
  delay(drain: DrainModel): number {
    const destination = drain.address.spec.destination
    const rail = destination.kind === 'bank' || destination.kind === 'chain' ? destination.rail : 'bridge_wallet'
    return ACH_RAILS.has(rail) ? TIMINGS.achDelayMs : TIMINGS.fastDelayMs
  }

  /** What one step of `drain` at `now` must do. */
  next(drain: DrainModel, now: number): Expected {
    const state = drain.path[drain.path.length - 1]
    // Live, a refund is a payout on chain: with no payout sender in this context, a live drain holds the deposit.
    const returnable = drain.address.spec.returnAddress && drain.environment === 'sandbox'
    const stopped = (to: 'canceled' | 'returned' | 'undeliverable' | 'error'): Expected => ({ state: to, nextStepAt: (to === 'canceled' || to === 'returned') && returnable ? isoOf(now + this.delay(drain)) : null })
    switch (state) {
      case 'funds_received': {
        if (!drain.address.active) return stopped('canceled')
        if (drain.failure === 'undeliverable') return stopped('undeliverable')
        if (drain.failure === 'error') return stopped('error')
        const destination = drain.address.spec.destination
        let to: Currency = destination.currency
        const wallet = destination.kind === 'own wallet' && drain.address.ownWallet?.environment === drain.environment ? drain.address.ownWallet : undefined
        if (wallet !== undefined) {
          // A wallet holds USDC and EURC; a fiat is held as its stablecoin, anything else cannot be.
          to = to === 'usd' ? 'usdc' : to === 'eur' ? 'eurc' : to
          if (to !== 'usdc' && to !== 'eurc') return stopped('undeliverable')
        }
        const rateText = this.rate(drain.environment, rateCurrencyOf(drain.currency), rateCurrencyOf(to), now)
        if (rateText === undefined) return { state: 'funds_received', nextStepAt: isoOf(now + RATE_RETRY_MS) }
        const fee = feeOfPercent(drain.amount, drain.address.spec.fee)
        const subtotal = drain.amount - fee
        const amount = converted(subtotal, drain.currency, to, rateOf(rateText))
        if (amount <= 0n) return stopped('canceled')
        const rail = destination.kind === 'bank' || destination.kind === 'chain' ? destination.rail : 'bridge_wallet'
        const receiving: Receiving = wallet !== undefined ? { kind: 'wallet', reference: wallet.id, currency: to } : { kind: 'world', reference: `payout:${rail}`, currency: to }
        return { state: 'payment_submitted', nextStepAt: isoOf(now + this.delay(drain)), submission: { rate: rateText, fee, subtotal, to, converted: amount, receiving } }
      }
      case 'payment_submitted':
        return drain.failure === 'returned' ? stopped('returned') : { state: 'payment_processed', nextStepAt: null }
      case 'returned':
      case 'canceled':
        return { state: 'refunded', nextStepAt: null }
      default:
        throw new Error(`drain ${drain.id} stepped in ${state}, where nothing follows`)
    }
  }
}

function amountUnits(spec: AmountSpec, currency: Currency): bigint {
  const max = parseAmount(MAX_DEPOSIT_UNITS.toString(), currency)
  switch (spec.kind) {
    case 'one':
      return 1n
    case 'max':
      return max
    case 'units':
      return 1n + ((spec.units - 1n) % max)
    case 'failure':
      return parseAmount(spec.text, currency)
    case 'beside failure':
      return parseAmount(spec.text, currency) + spec.by
  }
}

function failureOf(environment: LedgerEnvironment, units: bigint, currency: Currency): DrainModel['failure'] {
  if (environment !== 'sandbox') return undefined
  for (const [text, failure] of Object.entries(FAILURES)) if (parseAmount(text, currency) === units) return failure
  return undefined
}

// ---------------------------------------------------------------------------------------------
// The harness

let server: TestServer
let transact: ReturnType<typeof transactOn>
/** The drains' clock: only this test moves it, and it never goes back. */
let clock = Date.now()
const context: DrainContext = { rates: new ExchangeRates({ maxAgeMs: MAX_AGE_MS, now: () => clock }), timings: TIMINGS, now: () => clock }
const noSignals: SignalSink = { signalStatements: () => undefined, committed: () => undefined }

beforeAll(async () => {
  server = await startTestServer({ config: { drains: { scheduler: false, fastDelayMs: TIMINGS.fastDelayMs, achDelayMs: TIMINGS.achDelayMs, pollIntervalMs: 1_000, concurrency: 1 } } })
  transact = transactOn(server.app.db, noSignals, domainHooks({ publicUrl: () => server.baseUrl, money: { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 0, achDelayMs: 0 }, now: Date.now } }))
})

afterAll(async () => {
  await server.close()
})

function newChainAddress(chain: SourceChain): string {
  return chain === 'solana' ? newWalletAddress('solana') : randomEvmAddress()
}

async function createAddresses(key: TestKey, specs: readonly AddressSpec[]): Promise<{ customerId: string; addresses: AddressModel[] }> {
  const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+14155550100' } })
  expect(customer.status).toBe(201)
  const wallets = new Map<LedgerEnvironment, WalletRow[]>()
  for (const environment of ENVIRONMENTS) wallets.set(environment, await transact((tx) => new WalletsRepository(tx.db).ensure(environment, key.appId)))
  const addresses: AddressModel[] = []
  for (const spec of specs) {
    const destination = spec.destination
    const body: Record<string, unknown> = { chain: spec.chain, currency: spec.currency, address: newChainAddress(spec.chain), destination_currency: destination.currency }
    if (spec.fee !== undefined) body.custom_developer_fee_percent = spec.fee
    if (spec.returnAddress) body.return_address = newChainAddress(spec.chain)
    let ownWallet: WalletRow | undefined
    if (destination.kind === 'bank') Object.assign(body, { destination_payment_rail: destination.rail, external_account_id: 'ext_123' })
    else if (destination.kind === 'chain') Object.assign(body, { destination_payment_rail: destination.rail, destination_address: newChainAddress(destination.rail) })
    else if (destination.kind === 'own wallet') {
      ownWallet = wallets.get(destination.environment)?.[destination.wallet]
      Object.assign(body, { destination_payment_rail: 'bridge_wallet', bridge_wallet_id: ownWallet?.id })
    } else Object.assign(body, { destination_payment_rail: 'bridge_wallet', bridge_wallet_id: randomUUID() })
    const created = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses`, { key, body })
    expect(created.status, created.text).toBe(201)
    addresses.push({ id: created.body.id, spec, active: true, ownWallet })
  }
  return { customerId: customer.body.id, addresses }
}

interface DrainSnapshot {
  id: string
  state: string
  next_step_at: string | null
  exchange_rate: string | null
  developer_fee: string | null
  subtotal_amount: string | null
  converted_amount: string | null
  outgoing_amount: string | null
  amount: string
  destination: string
}

async function snapshot(appId: string): Promise<Map<string, DrainSnapshot>> {
  const rows = await server.app.db
    .selectFrom('drains')
    .select(['id', 'state', 'next_step_at', 'exchange_rate', 'developer_fee', 'subtotal_amount', 'converted_amount', 'outgoing_amount', 'amount', 'destination'])
    .where('app_id', '=', appId)
    .execute()
  return new Map(rows.map((row) => [row.id, row]))
}

class Run {
  private readonly model: Model
  /** per drain: how many of the calls to advance it this operation reported a step */
  private stepped = new Map<string, number>()
  /** the drains this operation asked to advance */
  private asked = new Set<string>()

  constructor(
    private readonly appId: string,
    private readonly customerId: string,
    addresses: AddressModel[],
  ) {
    this.model = new Model(addresses)
  }

  private async deposit(spec: DepositSpec): Promise<void> {
    const address = this.model.addresses[spec.address % this.model.addresses.length] as AddressModel
    const currency = address.spec.currency
    const units = amountUnits(spec.amount, currency)
    const drain = await transact((tx) =>
      receiveDeposit(tx, context, { environment: spec.environment, appId: this.appId, customerId: this.customerId, liquidationAddressId: address.id, amount: formatAmount(units, currency) }),
    )
    this.model.drains.push({
      id: drain.id,
      address,
      environment: spec.environment,
      amount: units,
      currency,
      failure: failureOf(spec.environment, units, currency),
      path: ['funds_received'],
      nextStepAt: null,
      submission: undefined,
    })
  }

  private async advance(drainId: string): Promise<void> {
    this.asked.add(drainId)
    if (await transact((tx) => advanceDrain(tx, context, drainId))) this.stepped.set(drainId, (this.stepped.get(drainId) ?? 0) + 1)
  }

  private drainAt(index: number): DrainModel | undefined {
    return this.model.drains.length === 0 ? undefined : this.model.drains[index % this.model.drains.length]
  }

  async apply(operation: Operation): Promise<void> {
    this.stepped = new Map()
    this.asked = new Set()
    switch (operation.kind) {
      case 'deposit':
        return this.deposit(operation)
      case 'deactivate': {
        const address = this.model.addresses[operation.address % this.model.addresses.length] as AddressModel
        await transact((tx) => tx.db.updateTable('liquidation_addresses').set({ state: 'deactivated' }).where('id', '=', address.id).execute())
        address.active = false
        return
      }
      case 'tick':
        clock += operation.ms
        return
      case 'step': {
        const drain = this.drainAt(operation.drain)
        if (drain !== undefined) await this.advance(drain.id)
        return
      }
      case 'scan': {
        // What the scheduler does: every due drain of this run, one after the other.
        for (const drain of this.model.drains) if (drain.nextStepAt !== null && drain.nextStepAt <= isoOf(clock)) await this.advance(drain.id)
        return
      }
      case 'burst': {
        const steps = operation.drains.flatMap((index) => {
          const drain = this.drainAt(index)
          return drain === undefined ? [] : [this.advance(drain.id)]
        })
        await Promise.all([...steps, ...operation.deposits.map((deposit) => this.deposit(deposit))])
        return
      }
      case 'rate': {
        // A later time than any rate before it: a time holds one rate.
        clock += 1
        const buy = decimalText(operation.buyDigits, operation.buyScale)
        const rate = { environment: operation.environment, from: operation.from, to: operation.to, buy, asOf: clock }
        await saveRates(server.app.db, [
          {
            environment: rate.environment,
            from: rate.from,
            to: rate.to,
            buy,
            midmarket: decimalText(operation.buyDigits + 1n, operation.buyScale),
            sell: decimalText(operation.buyDigits + 2n, operation.buyScale),
            asOf: isoOf(clock),
          },
        ])
        this.model.rates.push(rate)
        return
      }
    }
  }

  /**
   * Every drain moved exactly as the model says, and only those asked to while due, each by one
   * step reported once; the ledger verifies in both environments.
   */
  async check(before: Map<string, DrainSnapshot>): Promise<void> {
    const now = isoOf(clock)
    const after = await snapshot(this.appId)
    expect(after.size).toBe(this.model.drains.length)
    for (const drain of this.model.drains) {
      const row = after.get(drain.id)
      if (row === undefined) throw new Error(`drain ${drain.id} is missing`)
      const previous = before.get(drain.id)
      if (previous === undefined) {
        // Taken in by this operation.
        expect(row.state).toBe('funds_received')
        expect(row.next_step_at).toBe(this.model.waitsForSender(drain) ? null : isoOf(clock + this.model.delay(drain)))
        expect(BigInt(row.developer_fee ?? '-1')).toBe(feeOfPercent(drain.amount, drain.address.spec.fee))
        expect(BigInt(row.developer_fee ?? '0') + BigInt(row.subtotal_amount ?? '0')).toBe(drain.amount)
        drain.nextStepAt = row.next_step_at
        continue
      }
      const due = previous.next_step_at !== null && previous.next_step_at <= now
      const steps = this.stepped.get(drain.id) ?? 0
      if (!this.asked.has(drain.id) || !due) {
        expect(steps, `drain ${drain.id} stepped while not due or not asked`).toBe(0)
        expect(row).toEqual(previous)
        continue
      }
      expect(steps, `drain ${drain.id}: one step reported, however many asked`).toBe(1)
      const expected = this.model.next(drain, clock)
      expect({ state: row.state, nextStepAt: row.next_step_at }, `drain ${drain.id} from ${previous.state}`).toEqual({ state: expected.state, nextStepAt: expected.nextStepAt })
      if (expected.submission !== undefined) {
        const submission = expected.submission
        expect({ rate: row.exchange_rate, converted: row.converted_amount, outgoing: row.outgoing_amount, currency: (JSON.parse(row.destination) as { currency: string }).currency }).toEqual({
          rate: submission.rate,
          converted: submission.converted.toString(),
          outgoing: submission.converted.toString(),
          currency: submission.to,
        })
        drain.submission = submission
      }
      if (expected.state !== previous.state) drain.path.push(expected.state)
      drain.nextStepAt = row.next_step_at
    }
    for (const environment of ENVIRONMENTS) expect(await verifyLedger(server.app.db, environment)).toBeUndefined()
  }

  /** Runs every drain of this run to its end (a live one with no fresh rate keeps waiting). */
  async finish(): Promise<void> {
    for (let round = 0; round < 4; round++) {
      const before = await snapshot(this.appId)
      clock += TIMINGS.achDelayMs
      await this.apply({ kind: 'scan' })
      await this.check(before)
    }
    for (const drain of this.model.drains) {
      const waitsForRate = drain.environment === 'live' && drain.path.length === 1 && this.model.next(drain, clock).state === 'funds_received'
      if (!waitsForRate) expect(drain.nextStepAt, `drain ${drain.id} (${drain.path.join(' → ')}) has not ended`).toBeNull()
    }
  }

  /** Each drain's entries, and every account of the application, against what its drains say. */
  async checkConservation(): Promise<void> {
    const postings = await server.app.db
      .selectFrom('ledger_postings as p')
      .innerJoin('ledger_entries as e', 'e.id', 'p.entry_id')
      .innerJoin('ledger_accounts as a', 'a.id', 'p.account_id')
      .select(['e.id as entryId', 'e.reason_type', 'e.reason_id', 'e.status', 'a.environment', 'a.kind', 'a.reference', 'a.currency', 'a.app_id', 'p.direction', 'p.amount'])
      .where('e.app_id', '=', this.appId)
      .execute()
    const entriesOf = new Map<string, Map<string, typeof postings>>()
    for (const posting of postings) {
      expect(posting.reason_type).toBe('drain')
      expect(posting.app_id).toBe(this.appId)
      const entries = entriesOf.get(posting.reason_id) ?? new Map<string, typeof postings>()
      entries.set(posting.entryId, [...(entries.get(posting.entryId) ?? []), posting])
      entriesOf.set(posting.reason_id, entries)
    }
    expect(new Set(entriesOf.keys())).toEqual(new Set(this.model.drains.map((drain) => drain.id)))

    const key = (environment: string, kind: string, reference: string, currency: string) => `${environment} ${kind} ${reference.replace(/#\d+$/, '')} ${currency}`
    const expectedSums = new Map<string, { debitsPosted: bigint; creditsPosted: bigint; debitsPending: bigint; creditsPending: bigint }>()
    const add = (account: string, field: 'debitsPosted' | 'creditsPosted' | 'debitsPending' | 'creditsPending', amount: bigint) => {
      const sums = expectedSums.get(account) ?? { debitsPosted: 0n, creditsPosted: 0n, debitsPending: 0n, creditsPending: 0n }
      sums[field] += amount
      expectedSums.set(account, sums)
    }

    for (const drain of this.model.drains) {
      const state = drain.path[drain.path.length - 1] as string
      const at = (kind: string, reference: string, currency: string) => key(drain.environment, kind, reference, currency)
      const clearing = at('clearing', drain.address.id, drain.currency)
      const lineTexts = (entry: typeof postings) => entry.map((p) => `${p.direction} ${key(p.environment, p.kind, p.reference, p.currency)} ${p.amount} (${p.status})`).sort()
      const entries = [...(entriesOf.get(drain.id)?.values() ?? [])].map(lineTexts)
      const expectedEntries: string[][] = [[`credit ${clearing} ${drain.amount} (posted)`, `debit ${at('world', `chain:${drain.address.spec.chain}`, drain.currency)} ${drain.amount} (posted)`].sort()]
      add(clearing, 'creditsPosted', drain.amount)
      add(at('world', `chain:${drain.address.spec.chain}`, drain.currency), 'debitsPosted', drain.amount)
      const submission = drain.submission
      const submitted = drain.path.includes('payment_submitted')
      expect(submission !== undefined, `drain ${drain.id} (${drain.path.join(' → ')})`).toBe(submitted)
      if (submission !== undefined) {
        const status = state === 'payment_submitted' ? 'pending' : state === 'payment_processed' ? 'posted' : 'voided'
        // deposit = fee + subtotal, the subtotal converted (rounded down) to the destination.
        expect(submission.fee + submission.subtotal).toBe(drain.amount)
        const receiving = at(submission.receiving.kind, submission.receiving.reference, submission.to)
        const lines: [string, string, bigint][] = [['debit', clearing, drain.amount]]
        if (submission.fee > 0n) lines.push(['credit', at('developer_fee', 'fee', drain.currency), submission.fee])
        if (submission.to === drain.currency) lines.push(['credit', receiving, submission.subtotal])
        else {
          lines.push(['credit', at('world', 'exchange', drain.currency), submission.subtotal])
          lines.push(['debit', at('world', 'exchange', submission.to), submission.converted])
          lines.push(['credit', receiving, submission.converted])
        }
        expectedEntries.push(lines.map(([direction, account, amount]) => `${direction} ${account} ${amount} (${status})`).sort())
        if (status !== 'voided') {
          for (const [direction, account, amount] of lines) add(account, `${direction === 'debit' ? 'debits' : 'credits'}${status === 'pending' ? 'Pending' : 'Posted'}`, amount)
        }
      }
      if (state === 'refunded') {
        const refund = at('world', `refund:${drain.address.spec.chain}`, drain.currency)
        expectedEntries.push([`credit ${refund} ${drain.amount} (posted)`, `debit ${clearing} ${drain.amount} (posted)`].sort())
        add(clearing, 'debitsPosted', drain.amount)
        add(refund, 'creditsPosted', drain.amount)
      }
      expect(entries.sort(), `drain ${drain.id} (${drain.path.join(' → ')})`).toEqual(expectedEntries.sort())
    }

    const accounts = await server.app.db.selectFrom('ledger_accounts').selectAll().where('app_id', '=', this.appId).execute()
    const actualSums = new Map<string, { debitsPosted: bigint; creditsPosted: bigint; debitsPending: bigint; creditsPending: bigint }>()
    for (const account of accounts) {
      expect(BigInt(account.available)).toBe(BigInt(account.credits_posted) - BigInt(account.debits_posted) - BigInt(account.debits_pending))
      if (account.may_go_negative === 0) expect(BigInt(account.available) >= 0n, `account ${account.id} (${account.kind}) is below zero`).toBe(true)
      const name = key(account.environment, account.kind, account.reference, account.currency)
      const sums = actualSums.get(name) ?? { debitsPosted: 0n, creditsPosted: 0n, debitsPending: 0n, creditsPending: 0n }
      sums.debitsPosted += BigInt(account.debits_posted)
      sums.creditsPosted += BigInt(account.credits_posted)
      sums.debitsPending += BigInt(account.debits_pending)
      sums.creditsPending += BigInt(account.credits_pending)
      actualSums.set(name, sums)
    }
    // An account opened for an entry that was refused or rolled back holds nothing.
    for (const [name, sums] of actualSums) if (!expectedSums.has(name)) expect(sums, name).toEqual({ debitsPosted: 0n, creditsPosted: 0n, debitsPending: 0n, creditsPending: 0n })
    for (const [name, sums] of expectedSums) expect(actualSums.get(name), name).toEqual(sums)
  }

  /** One drain.created and one drain.updated per state each drain went through, in its order. */
  async checkEvents(): Promise<void> {
    const rows = await server.app.db.selectFrom('events').select(['type', 'payload']).where('app_id', '=', this.appId).where('type', 'like', 'liquidation_address.drain.%').orderBy('id').execute()
    const seen = new Map<string, string[]>()
    for (const row of rows) {
      const drain = (JSON.parse(row.payload) as { data: { id: string; state: string } }).data
      expect(row.type).toBe((seen.get(drain.id) ?? []).length === 0 ? 'liquidation_address.drain.created' : 'liquidation_address.drain.updated')
      seen.set(drain.id, [...(seen.get(drain.id) ?? []), drain.state])
    }
    expect([...seen.keys()].sort()).toEqual(this.model.drains.map((drain) => drain.id).sort())
    for (const drain of this.model.drains) expect(seen.get(drain.id), `the events of drain ${drain.id}`).toEqual(drain.path)
  }

  get drainCount(): number {
    return this.model.drains.length
  }

  get states(): string[] {
    return this.model.drains.map((drain) => drain.path.join('>'))
  }
}

/**
 * Each run starts on an empty ledger (so verifying it after every operation costs the same in
 * every run) and past every rate an earlier run loaded.
 */
async function startRun(): Promise<void> {
  clock = Math.max(clock, Date.now()) + MAX_AGE_MS + 1_000
  await transact(async (tx) => {
    for (const table of ['ledger_postings', 'ledger_entries', 'ledger_accounts', 'drains', 'exchange_rates'] as const) await tx.db.deleteFrom(table).execute()
  })
}

describe(`drains against the ledger, random sequences (${TEST_BACKEND})`, () => {
  it(`${RUNS} random sequences of deposits, deactivations, rates and steps keep every drain and the ledger exact`, { timeout: Math.max(120_000, RUNS * 2_000) }, async () => {
    let drains = 0
    const paths = new Map<string, number>()
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        await startRun()
        const key = await server.createKey({ environment: 'development' })
        const { customerId, addresses } = await createAddresses(key, scenario.addresses)
        const run = new Run(key.appId, customerId, addresses)
        for (const operation of scenario.operations) {
          const before = await snapshot(key.appId)
          await run.apply(operation)
          await run.check(before)
        }
        await run.finish()
        await run.checkConservation()
        await run.checkEvents()
        drains += run.drainCount
        for (const path of run.states) paths.set(path, (paths.get(path) ?? 0) + 1)
      }),
      { numRuns: RUNS },
    )
    // The sequences reached every way a drain can go.
    process.stdout.write(`drains-property (${TEST_BACKEND}): ${drains} drains; ${[...paths].map(([path, count]) => `${path}: ${count}`).join(', ')}\n`)
    for (const path of ['funds_received>payment_submitted>payment_processed', 'funds_received>undeliverable', 'funds_received>error', 'funds_received>payment_submitted>returned>refunded', 'funds_received>canceled>refunded']) {
      expect(paths.get(path) ?? 0, path).toBeGreaterThan(0)
    }
  })
})
