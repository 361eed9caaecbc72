// vitest: sqlite project only — the page calls the held-money actions, which test/resources/held/held.test.ts runs on both backends; what is the page's own (forms, CSRF, roles, idempotency keys, layout) cannot depend on the backend.
// Cost: one server, one Chromium launch, about 10 s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AccountKey, LedgerRepository, verifyLedger } from '../../../src/ledger/ledger.js'
import type { MoneyContext } from '../../../src/ledger/money-context.js'
import { ExchangeRates } from '../../../src/ledger/rates.js'
import { advanceDrain } from '../../../src/resources/drains/lifecycle.js'
import { DEFAULT_SCOPES } from '../../../src/resources/index.js'
import { WalletsRepository } from '../../../src/resources/wallets/repository.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { type Browser, launchChromium, pageChecks } from '../../helpers/chromium.js'
import { type ConsoleRole, consoleLink, consoleSession, postForm } from '../../helpers/console.js'

/**
 * The console's held-money page (docs/console.md#held-money): it lists what is held with why; an
 * admin's form releases a drain into a wallet (one ledger entry, one audit record naming the
 * person), a form sent twice acts once, two admins at once give one action; a viewer, a forged
 * form and another application's drain are refused and change nothing.
 */

let server: TestServer
let owner: TestKey
let stranger: TestKey
let walletId: string
let browser: Browser

const later: MoneyContext = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 1, achDelayMs: 1 }, now: () => Date.now() + 3_600_000 }

beforeAll(async () => {
  server = await startTestServer({ config: { drains: { scheduler: false, fastDelayMs: 1_000, achDelayMs: 3_000, pollIntervalMs: 250, concurrency: 4 } } })
  owner = await server.createKey({ environment: 'development', scopes: [...DEFAULT_SCOPES, 'console:link'] })
  stranger = await server.createKey({ environment: 'development', scopes: DEFAULT_SCOPES })
  const [wallet] = await server.app.transact((tx) => new WalletsRepository(tx.db).ensure('sandbox', owner.appId))
  if (wallet === undefined) throw new Error('no wallet')
  walletId = wallet.id
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

/** A sandbox drain of 13.03 USDC, forced into error: its funds held in clearing. */
async function heldDrain(key: TestKey = owner): Promise<string> {
  const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+14155550100' } })
  const address = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses`, {
    key,
    body: { chain: 'base', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_123' },
  })
  expect(address.status, address.text).toBe(201)
  const drain = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses/${address.body.id}/simulate_deposit`, { key, body: { amount: '13.03' } })
  expect(drain.status, drain.text).toBe(201)
  await server.app.transact((tx) => advanceDrain(tx, later, drain.body.id))
  return drain.body.id
}

const link = (role: ConsoleRole): Promise<string> => consoleLink(server, owner, role)
const session = (role: ConsoleRole) => consoleSession(server, owner, role)
const post = (path: string, cookie: string, form: Record<string, string>) => postForm(server, path, cookie, form)

async function heldPage(cookie: string): Promise<string> {
  const response = await fetch(`${server.baseUrl}/console/sandbox/held`, { headers: { cookie } })
  expect(response.status).toBe(200)
  return response.text()
}

async function available(key: AccountKey): Promise<bigint> {
  return server.app.transact(async (tx) => {
    const ledger = new LedgerRepository(tx.db)
    const [balance] = await ledger.balances([await ledger.account(key)])
    return balance?.available ?? 0n
  })
}

const walletUsdc = (): AccountKey => ({ environment: 'sandbox', appId: owner.appId, kind: 'wallet', currency: 'usdc', reference: walletId })

async function auditCount(drainId: string): Promise<number> {
  const rows = await server.app.db.selectFrom('held_actions').select('id').where('target_id', '=', drainId).execute()
  return rows.length
}

describe('the held-money page', () => {
  it('lists a held drain with why; a viewer sees no form, an admin the actions its state allows', async () => {
    const drainId = await heldDrain()
    const viewer = await heldPage((await session('viewer')).cookie)
    expect(viewer).toContain(drainId)
    expect(viewer).toContain('needs an operator')
    expect(viewer).toContain('13.030000 USDC')
    expect(viewer).not.toContain(`/held/drain/${drainId}/release`)
    const admin = await heldPage((await session('admin')).cookie)
    for (const action of ['retry', 'refund', 'release']) expect(admin).toContain(`/console/sandbox/held/drain/${drainId}/${action}`)
    expect(await heldPage((await session('admin')).cookie)).not.toContain('Nothing is held')
  })

  it('an admin releases it: one posted entry into the wallet, one audit record naming the person; the same form again acts once', async () => {
    const drainId = await heldDrain()
    const { cookie, csrf } = await session('admin')
    const before = await available(walletUsdc())
    const form = { _csrf: csrf, idempotency_key: crypto.randomUUID(), by: 'Grace Hopper', reason: 'ticket 7: the merchant asked for it in the wallet', wallet_id: walletId }
    const first = await post(`/console/sandbox/held/drain/${drainId}/release`, cookie, form)
    expect(first.status, first.text).toBe(303)
    expect(first.location).toBe(`/console/sandbox/held?done=release&id=${drainId}`)
    expect((await available(walletUsdc())) - before).toBe(13_030_000n)
    const again = await post(`/console/sandbox/held/drain/${drainId}/release`, cookie, form)
    expect(again.status, again.text).toBe(303)
    expect((await available(walletUsdc())) - before).toBe(13_030_000n)
    expect(await auditCount(drainId)).toBe(1)
    const page = await heldPage(cookie)
    expect(page).toContain('Grace Hopper (console)')
    expect(page).toContain('error → released')
    expect(page).not.toContain(`id="h-${drainId}"`)
    expect(await verifyLedger(server.app.db, 'sandbox')).toBeUndefined()
  })

  it('two admins at once on one drain: one action, the other a 409 page; nothing moved twice', async () => {
    const drainId = await heldDrain()
    const [a, b] = await Promise.all([session('admin'), session('admin')])
    const before = await available(walletUsdc())
    const send = (who: { cookie: string; csrf: string }, by: string) =>
      post(`/console/sandbox/held/drain/${drainId}/release`, who.cookie, { _csrf: who.csrf, idempotency_key: crypto.randomUUID(), by, reason: 'both at once', wallet_id: walletId })
    const answers = await Promise.all([send(a, 'Ada'), send(b, 'Alan')])
    expect(answers.map((answer) => answer.status).sort()).toEqual([303, 409])
    expect((await available(walletUsdc())) - before).toBe(13_030_000n)
    expect(await auditCount(drainId)).toBe(1)
  })

  it('refused, changing nothing: a viewer (403), a form without the CSRF token (403), another application\'s drain (404), no idempotency key or a blank name (400)', async () => {
    const drainId = await heldDrain()
    const theirs = await heldDrain(stranger)
    const admin = await session('admin')
    const viewer = await session('viewer')
    const form = (csrf: string) => ({ _csrf: csrf, idempotency_key: crypto.randomUUID(), by: 'Mallory', reason: 'no', wallet_id: walletId })
    const before = await available(walletUsdc())
    expect((await post(`/console/sandbox/held/drain/${drainId}/release`, viewer.cookie, form(viewer.csrf))).status).toBe(403)
    expect((await post(`/console/sandbox/held/drain/${drainId}/release`, admin.cookie, { ...form(admin.csrf), _csrf: '' })).status).toBe(403)
    expect((await post(`/console/sandbox/held/drain/${theirs}/release`, admin.cookie, form(admin.csrf))).status).toBe(404)
    expect((await post(`/console/sandbox/held/drain/${drainId}/destroy`, admin.cookie, form(admin.csrf))).status).toBe(404)
    expect((await post(`/console/sandbox/held/drain/${drainId}/release`, admin.cookie, { ...form(admin.csrf), idempotency_key: '' })).status).toBe(400)
    expect((await post(`/console/sandbox/held/drain/${drainId}/release`, admin.cookie, { ...form(admin.csrf), by: '  ' })).status).toBe(400)
    expect(await available(walletUsdc())).toBe(before)
    expect(await auditCount(drainId)).toBe(0)
    expect(await auditCount(theirs)).toBe(0)
  })

  it('in Chromium, with an admin\'s forms open: no serious or critical axe-core finding at 360 and 1280 px, no overflow at 360 px', async () => {
    await heldDrain()
    const { page } = browser
    await page.goto(await link('admin'))
    await page.waitForURL(/\/console\/sandbox$/)
    await page.getByRole('link', { name: 'Held money' }).first().click()
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Held money')
    await page.locator('details summary').first().click()
    for (const width of [360, 1280]) {
      const { overflow, violations } = await pageChecks(page, width)
      expect(violations, `${width} px`).toEqual([])
      if (width === 360) expect(overflow).toBeLessThanOrEqual(0)
    }
    expect(await page.locator('script').count()).toBe(0)
  })
})
