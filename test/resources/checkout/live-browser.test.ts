import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainConfig } from '../../../src/chains/config.js'
import { loadConfig } from '../../../src/config.js'
import type { Invoice } from '../../../src/resources/invoices/schemas.js'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { testXpub } from '../../helpers/receiving-key.js'
import { decodedQr } from './qr-decode.js'
import type { Address } from 'viem'
import { startAnvil } from '../../helpers/anvil.js'
import { deployToken, mint, transfer } from '../../helpers/test-token.js'

/**
 * The payment page in Debian's Chromium: a live one shows where to send the money (address, the
 * EIP-681 link, its QR code) and passes axe-core; an open page turns to paid by itself, by its
 * own script polling the status route, when the funds arrive by another way than the page.
 */

const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
/** A made-up USDC contract for the configuration: no node is asked here (the scheduler, and so the watcher, is off). */
const USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

let server: TestServer
let sandboxKey: TestKey
let liveKey: TestKey
let userDataDir: string
let browser: BrowserContext
let page: Page
const pageErrors: string[] = []

async function created<T extends { id: string }>(path: string, body: Record<string, unknown>, key: TestKey, on: TestServer = server): Promise<T> {
  const res = await on.request<T>('POST', path, { key, body })
  expect(res.status, res.text).toBe(201)
  return res.body
}

async function newInvoice(key: TestKey, on: TestServer = server): Promise<Invoice> {
  const customer = (await created<{ id: string }>('/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }, key, on)).id
  const product = (await created<{ id: string }>('/api/v0/products', { name: 'Consulting hour', price: '120.00' }, key, on)).id
  return created<Invoice>(
    '/api/v0/invoices',
    { name: 'April services', email: 'billing@example.com', customer_id: customer, currency: 'usdc', items: [{ product_id: product, quantity: 1 }], due_date: '2099-04-30T00:00:00Z', delivery: 'EMAIL', payment_link: false, payment_methods: ['CRYPTO'], status: 'OPEN', partial_payment: false },
    key,
    on,
  )
}

/** Opens the invoice's page and pays: the payment's page, and its intent's id. */
async function payInBrowser(invoice: Invoice, on: TestServer = server): Promise<string> {
  await page.goto(`${on.baseUrl}/invoices/${invoice.id}/pay`)
  await page.getByRole('button', { name: 'Pay 120.00 USDC' }).click()
  await page.waitForURL(/\/checkout\/[0-9a-f-]{36}$/)
  return page.url().split('/').at(-1) ?? ''
}

/** axe-core's violations on the open page (run through the debugging protocol, which the page's CSP does not govern). */
async function axeViolations(): Promise<string[]> {
  await page.evaluate(AXE)
  return page.evaluate<string[]>(`axe.run(document).then((result) => result.violations.map((violation) => violation.id + ': ' + violation.nodes.map((node) => node.html).join(' | ')))`)
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's Chromium (apt-get install -y --no-install-recommends chromium; .ci/run does)`)
  const base: ChainConfig = { chain: 'base', chainId: 8453, rpcUrls: ['http://127.0.0.1:9'], tokens: { usdc: USDC }, confirmations: 3, pollIntervalMs: 60_000, maxBlockRange: 500, startBlock: 0, rpcTimeoutMs: 1_000 }
  const defaults = loadConfig({ NODE_ENV: 'test' })
  server = await startTestServer({ config: { chains: { file: 'test', receivingXpub: testXpub(), chains: [base] }, drains: { ...defaults.drains, scheduler: false } } })
  sandboxKey = await server.createKey({ environment: 'development' })
  liveKey = await server.createKey({ environment: 'production' })
  userDataDir = mkdtempSync(join(tmpdir(), 'devplatform-chromium-'))
  browser = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, args: CHROMIUM_ARGS, viewport: { width: 1024, height: 800 } })
  // The page may ask nothing of anyone but the servers of this file, on this machine.
  await browser.route('**/*', (route) => (route.request().url().startsWith('http://127.0.0.1:') ? route.continue() : route.abort()))
  page = browser.pages()[0] ?? (await browser.newPage())
  page.on('pageerror', (error) => pageErrors.push(error.message))
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text())
  })
}, 60_000)

/** What a test started that must close after the browser. */
const closeLater: (() => Promise<void>)[] = []

afterAll(async () => {
  await browser?.close()
  for (const close of closeLater) await close()
  if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true })
  await server?.close()
})

describe('the payment page in Chromium', () => {
  it('a live payment shows the address with its copy button, the EIP-681 link and its QR code, and is axe-core clean', async () => {
    const invoice = await newInvoice(liveKey)
    const intentId = await payInBrowser(invoice)
    const intent = await server.request<{ source_deposit_instructions: { to_address: string } }>('GET', `/api/v0/payment-intents/${intentId}`, { key: liveKey })
    const to = intent.body.source_deposit_instructions.to_address
    expect(await page.locator('#deposit-address').innerText()).toBe(to)
    const uri = `ethereum:${USDC}@8453/transfer?address=${to}&uint256=120000000`
    expect(await page.getByRole('link', { name: 'Open in your wallet' }).getAttribute('href')).toBe(uri)
    expect(await page.getByRole('img', { name: /QR code to pay 120\.00 USDC on Base/ }).count()).toBe(1)
    expect(decodedQr(await page.content())).toBe(uri)
    // The page's own script shows the copy button (the CSP allows it: it is this server's).
    await expect.poll(() => page.getByRole('button', { name: 'Copy address' }).isVisible()).toBe(true)
    expect(await page.getByRole('button', { name: 'Complete payment (sandbox)' }).count()).toBe(0)
    expect(await axeViolations()).toEqual([])
    expect(pageErrors).toEqual([])
  })

  it('an open page turns to paid by itself when the funds arrive another way (its script polls the status route)', async () => {
    const invoice = await newInvoice(sandboxKey)
    const intentId = await payInBrowser(invoice)
    await expect.poll(() => page.getByRole('status').innerText()).toContain('Waiting for your payment')
    const arrived = await server.request('POST', `/api/v0/payment-intents/${intentId}/simulate_funds`, { key: sandboxKey, body: {} })
    expect(arrived.status, arrived.text).toBe(200)
    // No click, no navigation by the test: the page reloads itself.
    await expect.poll(() => page.getByRole('status').innerText(), { timeout: 10_000 }).toContain('Payment received')
    expect(page.url()).toBe(`${server.baseUrl}/checkout/${intentId}`)
    expect(await server.request<Invoice>('GET', `/api/v0/invoices/${invoice.id}`, { key: sandboxKey }).then((res) => res.body.status)).toBe('PAID')
    expect(await axeViolations()).toEqual([])
    expect(pageErrors).toEqual([])
  })

  it('a live invoice paid by a real token transfer on a real chain: the open page turns to paid by itself, with the transaction hash', async () => {
    const anvil = await startAnvil()
    const usdc = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
    const base: ChainConfig = { chain: 'base', chainId: anvil.chainId, rpcUrls: [anvil.url], tokens: { usdc: usdc.toLowerCase() }, confirmations: 2, pollIntervalMs: 100, maxBlockRange: 100, startBlock: 0, rpcTimeoutMs: 2_000 }
    const defaults = loadConfig({ NODE_ENV: 'test' })
    const chainServer = await startTestServer({ config: { chains: { file: 'test', receivingXpub: testXpub(), chains: [base] }, drains: { ...defaults.drains, scheduler: true, pollIntervalMs: 50 } } })
    try {
      const key = await chainServer.createKey({ environment: 'production' })
      const invoice = await newInvoice(key, chainServer)
      const intentId = await payInBrowser(invoice, chainServer)
      const to = (await page.locator('#deposit-address').innerText()) as Address
      expect(await page.getByRole('link', { name: 'Open in your wallet' }).getAttribute('href')).toBe(`ethereum:${usdc.toLowerCase()}@${anvil.chainId}/transfer?address=${to}&uint256=120000000`)
      const payer = anvil.accounts[3]
      if (payer === undefined) throw new Error('no account')
      await mint(anvil, usdc, payer.address, 120_000_000n)
      const paid = await transfer(anvil, usdc, payer, to, 120_000_000n)
      await anvil.mine(1)
      // No click, no navigation by the test: the watcher credits it and the page's script reloads it.
      await expect.poll(() => page.getByRole('status').innerText(), { timeout: 20_000 }).toContain('Payment received')
      expect(await page.content()).toContain(paid.transactionHash.toLowerCase())
      expect(page.url()).toBe(`${chainServer.baseUrl}/checkout/${intentId}`)
      expect((await chainServer.request<Invoice>('GET', `/api/v0/invoices/${invoice.id}`, { key })).body.status).toBe('PAID')
      const events = await chainServer.app.db.selectFrom('events').select(['type', 'payload']).where('app_id', '=', key.appId).execute()
      const livemodes = events.filter((event) => ['invoice.updated', 'payment_intent.updated', 'deposit.confirmed'].includes(event.type)).map((event) => (JSON.parse(event.payload) as { data: { livemode?: boolean } }).data.livemode)
      expect(livemodes.length).toBeGreaterThanOrEqual(3)
      expect(new Set(livemodes)).toEqual(new Set([true]))
      expect(await axeViolations()).toEqual([])
      expect(pageErrors).toEqual([])
    } finally {
      // Closed after the browser (afterAll): Chromium keeps its connections to the server open until then.
      closeLater.push(() => chainServer.close(), () => anvil.close())
    }
  }, 60_000)
})
