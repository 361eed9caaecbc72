import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyLedger } from '../../../src/ledger/ledger.js'
import { type WalletRow, WalletsRepository } from '../../../src/resources/wallets/repository.js'
import type { AggregatedBalanceResponse } from '../../../src/resources/balances/schemas.js'
import type { PaymentResponse, RefundResponse } from '../../../src/resources/test-payments/schemas.js'
import { type ApiResponse, MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { deposit, withdraw } from '../wallets/money.js'

/**
 * Test payments (sandbox card payments) over real HTTP on both backends: what they credit and a
 * refund debits in the ledger, every rule of the body on both sides of its boundary, the
 * required idempotency key, tenancy, production keys, and concurrent refunds.
 */

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => server.close())

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const DEVELOPMENT_ONLY = 'Test payments can only be made, read and refunded with a development key: they move sandbox money, and a production key moves live money'
const UNSUPPORTED_CURRENCY = "currency must be one of USD, EUR (any case): a test payment credits the sandbox's USDC or EURC"
const TOO_LARGE = 'amount must be at most 1000000.00 for a test payment'

/** A new application with a development key and a production key. */
async function newApplication(): Promise<{ sandbox: TestKey; live: TestKey }> {
  const sandbox = await server.createKey({ environment: 'development' })
  const live = await server.createKey({ appId: sandbox.appId, environment: 'production' })
  return { sandbox, live }
}

const newKey = () => `k-${crypto.randomUUID()}`

/** POST /test-payment with a fresh idempotency key unless one is given; a string body is sent as is (its JSON numbers as written). */
function pay(key: TestKey, body: unknown, idempotencyKey: string | null = newKey()): Promise<ApiResponse<PaymentResponse>> {
  return server.request<PaymentResponse>('POST', '/api/v0/test-payment', { key, body, headers: idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey } })
}

function refund(key: TestKey, paymentId: string, idempotencyKey: string | null = newKey()): Promise<ApiResponse<RefundResponse>> {
  return server.request<RefundResponse>('POST', `/api/v0/test-payment/${paymentId}/refund`, { key, headers: idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey } })
}

async function paid(key: TestKey, body: Record<string, unknown> = {}): Promise<PaymentResponse> {
  const res = await pay(key, { amount: 10, currency: 'USD', description: 'Order', ...body })
  expect(res.status, res.text).toBe(201)
  return res.body
}

async function balance(key: TestKey, currency: 'usdc' | 'eurc'): Promise<AggregatedBalanceResponse> {
  const res = await server.request<AggregatedBalanceResponse>('GET', `/api/v0/balance/${currency}`, { key })
  expect(res.status, res.text).toBe(200)
  return res.body
}

async function baseWallet(appId: string): Promise<WalletRow> {
  const wallet = (await new WalletsRepository(server.app.db).list('sandbox', appId)).find((row) => row.chain === 'base')
  if (wallet === undefined) throw new Error('no base wallet')
  return wallet
}

/** What the application has written: its payments, its ledger entries by reason, its events by type. */
async function written(appId: string): Promise<{ payments: number; entries: string[]; events: string[] }> {
  const payments = await server.app.db.selectFrom('test_payments').select('id').where('app_id', '=', appId).execute()
  const entries = await server.app.db.selectFrom('ledger_entries').select('reason_type').where('app_id', '=', appId).orderBy('created_at').execute()
  const events = await server.app.db.selectFrom('events').select('type').where('app_id', '=', appId).where('type', 'like', 'test_payment.%').orderBy('created_at').execute()
  return { payments: payments.length, entries: entries.map((row) => row.reason_type), events: events.map((row) => row.type) }
}

async function eventData(appId: string, type: string): Promise<unknown[]> {
  const rows = await server.app.db.selectFrom('events').select('payload').where('app_id', '=', appId).where('type', '=', type).orderBy('created_at').execute()
  return rows.map((row) => (JSON.parse(row.payload) as { data: unknown }).data)
}

async function expectLedgerExact(): Promise<void> {
  expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
}

/** Expects a 400 naming `text`, and nothing written for the application. */
async function expectRefused(key: TestKey, body: unknown, message: string | RegExp): Promise<void> {
  const before = await written(key.appId)
  const res = await pay(key, body)
  expect(res.status, res.text).toBe(400)
  const text = (res.body as unknown as { message: string }).message
  if (typeof message === 'string') expect(text).toBe(message)
  else expect(text).toMatch(message)
  expect(await written(key.appId)).toEqual(before)
}

describe('POST /api/v0/test-payment', () => {
  it("succeeds at once, in the published client's PaymentResponseDto, and credits the base wallet's USDC in one posted entry", async () => {
    const { sandbox } = await newApplication()
    const res = await pay(sandbox, { amount: 100.5, currency: 'USD', description: 'Order #1042' })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(/^pay_[0-9a-f]{24}$/),
      amount: 100.5,
      currency: 'USD',
      status: 'succeeded',
      timestamp: expect.stringMatching(ISO),
      description: 'Order #1042',
      customerId: null,
      refunded: false,
      refundId: null,
      livemode: false,
    })
    expect(res.text).toContain('"amount":100.5,')
    const usdc = await balance(sandbox, 'usdc')
    expect(usdc.total_balance).toBe('100.500000')
    expect(usdc.balances.map((part) => [part.chain, part.balance])).toEqual([
      ['base', '100.500000'],
      ['ethereum', '0.000000'],
      ['solana', '0.000000'],
    ])
    expect((await balance(sandbox, 'eurc')).total_balance).toBe('0.000000')
    expect(await written(sandbox.appId)).toEqual({ payments: 1, entries: ['test_payment'], events: ['test_payment.created'] })
    const entry = await server.app.db.selectFrom('ledger_entries').selectAll().where('app_id', '=', sandbox.appId).executeTakeFirstOrThrow()
    expect(entry).toMatchObject({ environment: 'sandbox', status: 'posted', reason_type: 'test_payment', reason_id: res.body.id })
    expect(await eventData(sandbox.appId, 'test_payment.created')).toEqual([res.body])
    await expectLedgerExact()
  })

  it('EUR (any case, a decimal string) credits EURC, and answers the currency upper case', async () => {
    const { sandbox } = await newApplication()
    const res = await pay(sandbox, { amount: '12.34', currency: 'eur', description: 'Euro order' })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ amount: 12.34, currency: 'EUR' })
    expect((await balance(sandbox, 'eurc')).total_balance).toBe('12.340000')
    expect((await balance(sandbox, 'usdc')).total_balance).toBe('0.000000')
    const mixed = await pay(sandbox, { amount: 1, currency: 'Usd', description: 'x' })
    expect(mixed.status).toBe(201)
    expect(mixed.body.currency).toBe('USD')
    expect((await balance(sandbox, 'usdc')).total_balance).toBe('1.000000')
    await expectLedgerExact()
  })

  it('GET /balance adds the payments of both currencies', async () => {
    const { sandbox } = await newApplication()
    await paid(sandbox, { amount: 5 })
    await paid(sandbox, { amount: '2.50' })
    const res = await server.request<{ usdc: AggregatedBalanceResponse }>('GET', '/api/v0/balance', { key: sandbox })
    expect(res.body.usdc.total_balance).toBe('7.500000')
  })

  describe('amount', () => {
    it('at most 2 decimals: 1.01 is taken, 1.001 (number or string) is refused; a JSON number is read as written', async () => {
      const { sandbox } = await newApplication()
      const ok = await pay(sandbox, '{"amount": 1.01, "currency": "USD", "description": "d"}')
      expect(ok.status, ok.text).toBe(201)
      expect(ok.body.amount).toBe(1.01)
      // 0.29 is no double exactly; it is taken as the 29 cents it was written as.
      const cents = await pay(sandbox, '{"amount": 0.29, "currency": "USD", "description": "d"}')
      expect(cents.status).toBe(201)
      expect((await balance(sandbox, 'usdc')).total_balance).toBe('1.300000')
      await expectRefused(sandbox, '{"amount": 1.001, "currency": "USD", "description": "d"}', /^amount: .*more than 2 decimals/)
      await expectRefused(sandbox, { amount: '1.001', currency: 'EUR', description: 'd' }, /^amount: .*more than 2 decimals/)
      await expectRefused(sandbox, '{"amount": 1.00, "currency": "USD", "description": "d", "x": 1}', /x|additional/i)
    })

    it('greater than 0: 0.01 is taken, 0 and 0.00 are refused; a sign, an exponent or text is refused', async () => {
      const { sandbox } = await newApplication()
      expect((await pay(sandbox, { amount: 0.01, currency: 'USD', description: 'd' })).status).toBe(201)
      await expectRefused(sandbox, { amount: 0, currency: 'USD', description: 'd' }, 'amount must be greater than 0')
      await expectRefused(sandbox, { amount: '0.00', currency: 'USD', description: 'd' }, 'amount must be greater than 0')
      await expectRefused(sandbox, { amount: -1, currency: 'USD', description: 'd' }, /^amount/)
      await expectRefused(sandbox, '{"amount": 1e2, "currency": "USD", "description": "d"}', /^amount/)
      await expectRefused(sandbox, { amount: 'ten', currency: 'USD', description: 'd' }, /^amount/)
      await expectRefused(sandbox, { amount: true, currency: 'USD', description: 'd' }, /amount/)
      await expectRefused(sandbox, { currency: 'USD', description: 'd' }, /amount/)
    })

    it('at most 1000000.00: that is taken, 1000000.01 and anything above (past the platform-wide bound too) is refused', async () => {
      const { sandbox } = await newApplication()
      const top = await pay(sandbox, { amount: 1000000, currency: 'EUR', description: 'd' })
      expect(top.status, top.text).toBe(201)
      expect(top.body.amount).toBe(1000000)
      expect((await pay(sandbox, { amount: '1000000.00', currency: 'USD', description: 'd' })).status).toBe(201)
      await expectRefused(sandbox, { amount: 1000000.01, currency: 'USD', description: 'd' }, TOO_LARGE)
      await expectRefused(sandbox, { amount: '2000000000', currency: 'USD', description: 'd' }, TOO_LARGE)
      expect((await balance(sandbox, 'eurc')).total_balance).toBe('1000000.000000')
      await expectLedgerExact()
    })
  })

  it('currency: USD or EUR in any case; anything else is a 400 naming them', async () => {
    const { sandbox } = await newApplication()
    for (const currency of ['GBP', 'usdc', 'EURC', 'US', '']) await expectRefused(sandbox, { amount: 1, currency, description: 'd' }, UNSUPPORTED_CURRENCY)
    await expectRefused(sandbox, { amount: 1, description: 'd' }, /currency/)
  })

  it('description: 1 to 500 characters, required', async () => {
    const { sandbox } = await newApplication()
    expect((await pay(sandbox, { amount: 1, currency: 'USD', description: 'x' })).status).toBe(201)
    expect((await pay(sandbox, { amount: 1, currency: 'USD', description: 'x'.repeat(500) })).status).toBe(201)
    await expectRefused(sandbox, { amount: 1, currency: 'USD', description: '' }, /description/)
    await expectRefused(sandbox, { amount: 1, currency: 'USD', description: 'x'.repeat(501) }, /description/)
    await expectRefused(sandbox, { amount: 1, currency: 'USD' }, /description/)
  })

  it("customerId: one of the application's customers (or null); another application's or an unknown one is 404 and nothing is written", async () => {
    const { sandbox, live } = await newApplication()
    const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', { key: live, body: { first_name: 'A', last_name: 'B', phone_number: '1' } })
    expect(customer.status).toBe(201)
    const own = await pay(sandbox, { amount: 3, currency: 'USD', description: 'd', customerId: customer.body.id.toUpperCase() })
    expect(own.status, own.text).toBe(201)
    expect(own.body.customerId).toBe(customer.body.id)
    expect((await pay(sandbox, { amount: 3, currency: 'USD', description: 'd', customerId: null })).body.customerId).toBeNull()

    const other = await newApplication()
    const theirs = await server.request<{ id: string }>('POST', '/api/v0/customers', { key: other.live, body: { first_name: 'C', last_name: 'D', phone_number: '2' } })
    const before = await written(sandbox.appId)
    for (const customerId of [theirs.body.id, MISSING_UUID, 'cus_123']) {
      const res = await pay(sandbox, { amount: 3, currency: 'USD', description: 'd', customerId })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Customer not found' })
    }
    expect(await written(sandbox.appId)).toEqual(before)
    expect((await balance(sandbox, 'usdc')).total_balance).toBe('6.000000')
  })

  describe('idempotency-key', () => {
    it('is required: 400 without it, nothing written', async () => {
      const { sandbox } = await newApplication()
      const res = await pay(sandbox, { amount: 1, currency: 'USD', description: 'd' }, null)
      expect(res.status).toBe(400)
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'The idempotency-key header is required for this operation' })
      expect(await written(sandbox.appId)).toEqual({ payments: 0, entries: [], events: [] })
    })

    it('the same key answers the first payment again and credits once; another body with it is 422', async () => {
      const { sandbox } = await newApplication()
      const key = newKey()
      const first = await pay(sandbox, { amount: 25, currency: 'USD', description: 'd' }, key)
      expect(first.status).toBe(201)
      const again = await pay(sandbox, { amount: 25, currency: 'USD', description: 'd' }, key)
      expect(again.status).toBe(201)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(again.body).toEqual(first.body)
      const changed = await pay(sandbox, { amount: 26, currency: 'USD', description: 'd' }, key)
      expect(changed.status).toBe(422)
      expect(changed.body).toEqual({ statusCode: 422, error: 'Unprocessable Entity', message: 'Idempotency-Key was already used with a different request' })
      expect(await written(sandbox.appId)).toEqual({ payments: 1, entries: ['test_payment'], events: ['test_payment.created'] })
      expect((await balance(sandbox, 'usdc')).total_balance).toBe('25.000000')
      await expectLedgerExact()
    })
  })

  it('a production key: 403, nothing written in either environment', async () => {
    const { live } = await newApplication()
    const res = await pay(live, { amount: 1, currency: 'USD', description: 'd' })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: DEVELOPMENT_ONLY })
    expect(await written(live.appId)).toEqual({ payments: 0, entries: [], events: [] })
    expect((await balance(live, 'usdc')).total_balance).toBe('0.000000')
  })
})

describe('GET /api/v0/test-payment/:id', () => {
  it('answers the payment as it was made, and as refunded after its refund', async () => {
    const { sandbox } = await newApplication()
    const payment = await paid(sandbox, { amount: '7.10', description: 'Tea' })
    const res = await server.request<PaymentResponse>('GET', `/api/v0/test-payment/${payment.id}`, { key: sandbox })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(payment)
    expect(res.text).toContain('"amount":7.1,')
    const refunded = await refund(sandbox, payment.id)
    const after = await server.request<PaymentResponse>('GET', `/api/v0/test-payment/${payment.id.toUpperCase()}`, { key: sandbox })
    expect(after.body).toEqual({ ...payment, refunded: true, refundId: refunded.body.id })
  })

  it("unknown, malformed or another application's id: 404; an id over 100 characters: the platform's 414", async () => {
    const { sandbox } = await newApplication()
    const other = await newApplication()
    const theirs = await paid(other.sandbox)
    for (const id of [theirs.id, 'pay_000000000000000000000000', 'abc', 'x'.repeat(100)]) {
      const res = await server.request('GET', `/api/v0/test-payment/${id}`, { key: sandbox })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Test payment not found' })
    }
    expect((await server.request('GET', `/api/v0/test-payment/${'x'.repeat(101)}`, { key: sandbox })).status).toBe(414)
  })

  it("a production key: 403 for the application's own payment, 404 for another's", async () => {
    const { sandbox, live } = await newApplication()
    const payment = await paid(sandbox)
    const own = await server.request('GET', `/api/v0/test-payment/${payment.id}`, { key: live })
    expect(own.status).toBe(403)
    expect(own.body).toEqual({ statusCode: 403, error: 'Forbidden', message: DEVELOPMENT_ONLY })
    const other = await newApplication()
    expect((await server.request('GET', `/api/v0/test-payment/${payment.id}`, { key: other.live })).status).toBe(404)
  })
})

describe('POST /api/v0/test-payment/:id/refund', () => {
  it("refunds in full in the published client's RefundResponseDto: the wallet's money goes back in one posted entry, with its event", async () => {
    const { sandbox } = await newApplication()
    const payment = await paid(sandbox, { amount: 42.42, currency: 'EUR' })
    const res = await refund(sandbox, payment.id)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ id: expect.stringMatching(/^ref_[0-9a-f]{24}$/), paymentId: payment.id, amount: 42.42, currency: 'EUR', status: 'succeeded', timestamp: expect.stringMatching(ISO), livemode: false })
    expect((await balance(sandbox, 'eurc')).total_balance).toBe('0.000000')
    expect(await written(sandbox.appId)).toEqual({ payments: 1, entries: ['test_payment', 'test_payment_refund'], events: ['test_payment.created', 'test_payment.refunded'] })
    const entry = await server.app.db.selectFrom('ledger_entries').selectAll().where('app_id', '=', sandbox.appId).where('reason_type', '=', 'test_payment_refund').executeTakeFirstOrThrow()
    expect(entry).toMatchObject({ environment: 'sandbox', status: 'posted', reason_id: res.body.id })
    const stored = await server.app.db.selectFrom('test_payments').selectAll().where('id', '=', payment.id).executeTakeFirstOrThrow()
    expect(stored).toMatchObject({ refund_id: res.body.id, refund_entry_id: entry.id, refunded_at: res.body.timestamp })
    expect(await eventData(sandbox.appId, 'test_payment.refunded')).toEqual([res.body])
    await expectLedgerExact()
  })

  it('at most once: a second refund with another key is 409 and moves nothing; the same key answers the refund again', async () => {
    const { sandbox } = await newApplication()
    const payment = await paid(sandbox, { amount: 5 })
    const key = newKey()
    const first = await refund(sandbox, payment.id, key)
    expect(first.status).toBe(200)
    const replay = await refund(sandbox, payment.id, key)
    expect(replay.status).toBe(200)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.body).toEqual(first.body)
    const second = await refund(sandbox, payment.id)
    expect(second.status).toBe(409)
    expect(second.body).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: `Test payment ${payment.id} was already refunded (${first.body.id}): a payment is refunded at most once, in full`,
    })
    expect((await written(sandbox.appId)).entries).toEqual(['test_payment', 'test_payment_refund'])
    expect((await balance(sandbox, 'usdc')).total_balance).toBe('0.000000')
    await expectLedgerExact()
  })

  it('needs the idempotency-key: 400 without it, nothing refunded', async () => {
    const { sandbox } = await newApplication()
    const payment = await paid(sandbox)
    const res = await refund(sandbox, payment.id, null)
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'The idempotency-key header is required for this operation' })
    expect((await balance(sandbox, 'usdc')).total_balance).toBe('10.000000')
  })

  it("unknown or another application's payment: 404, nothing moved", async () => {
    const { sandbox } = await newApplication()
    const other = await newApplication()
    const theirs = await paid(other.sandbox)
    for (const id of [theirs.id, 'pay_000000000000000000000000', 'nope']) {
      const res = await refund(sandbox, id)
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Test payment not found' })
    }
    expect((await server.request<PaymentResponse>('GET', `/api/v0/test-payment/${theirs.id}`, { key: other.sandbox })).body.refunded).toBe(false)
    expect((await balance(other.sandbox, 'usdc')).total_balance).toBe('10.000000')
  })

  it("a production key: 403 for the application's own payment, which stays unrefunded", async () => {
    const { sandbox, live } = await newApplication()
    const payment = await paid(sandbox)
    const res = await refund(live, payment.id)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: DEVELOPMENT_ONLY })
    expect((await server.request<PaymentResponse>('GET', `/api/v0/test-payment/${payment.id}`, { key: sandbox })).body.refunded).toBe(false)
    expect((await balance(sandbox, 'usdc')).total_balance).toBe('10.000000')
  })

  it('when the wallet no longer holds the amount: 409 with the balance available, nothing moved; once it does (to the last unit), the refund goes through', async () => {
    const { sandbox } = await newApplication()
    const payment = await paid(sandbox, { amount: 10 })
    const wallet = await baseWallet(sandbox.appId)
    await withdraw(server.app.db, wallet, 'usdc', '0.000001')
    const refused = await refund(sandbox, payment.id)
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: `Insufficient sandbox balance to refund test payment ${payment.id}: the base wallet has 9.999999 USDC available, the refund needs 10.000000 USDC`,
    })
    expect((await server.request<PaymentResponse>('GET', `/api/v0/test-payment/${payment.id}`, { key: sandbox })).body.refunded).toBe(false)
    expect(await written(sandbox.appId)).toMatchObject({ events: ['test_payment.created'] })
    await expectLedgerExact()
    // Money reserved by a pending debit is not available either.
    await deposit(server.app.db, wallet, 'usdc', '0.000001')
    const reserved = await withdraw(server.app.db, wallet, 'usdc', '5', 'pending')
    expect((await refund(sandbox, payment.id)).status).toBe(409)
    expect(reserved).toEqual(expect.any(String))
    await deposit(server.app.db, wallet, 'usdc', '5')
    const ok = await refund(sandbox, payment.id)
    expect(ok.status, ok.text).toBe(200)
    expect((await balance(sandbox, 'usdc')).balances[0]?.balance).toBe('0.000000')
    await expectLedgerExact()
  })

  it('50 concurrent refunds of one payment with different keys: exactly one 200, 49 clear 409s, one refund in the ledger', async () => {
    const { sandbox } = await newApplication()
    const payment = await paid(sandbox, { amount: 50 })
    await paid(sandbox, { amount: 50 })
    const answers = await Promise.all(Array.from({ length: 50 }, () => refund(sandbox, payment.id)))
    const statuses = answers.map((res) => res.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    expect(statuses.filter((status) => status === 409)).toHaveLength(49)
    const winner = answers.find((res) => res.status === 200)?.body as RefundResponse
    for (const res of answers.filter((answer) => answer.status === 409)) {
      expect((res.body as unknown as { message: string }).message).toBe(`Test payment ${payment.id} was already refunded (${winner.id}): a payment is refunded at most once, in full`)
    }
    expect(await written(sandbox.appId)).toEqual({
      payments: 2,
      entries: ['test_payment', 'test_payment', 'test_payment_refund'],
      events: ['test_payment.created', 'test_payment.created', 'test_payment.refunded'],
    })
    expect((await balance(sandbox, 'usdc')).total_balance).toBe('50.000000')
    await expectLedgerExact()
  })
})
