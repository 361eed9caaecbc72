// vitest: sqlite project only — the docs page in Chromium reads no data.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EVENT_TYPES } from '../../src/resources/index.js'
import { TEST_BACKEND } from '../backend.js'
import { startTestServer, type TestServer } from '../helper.js'

/**
 * The docs page (/docs) in Debian's Chromium, as a user opens it: its name, the tags in the order
 * a user meets them, real example values, and the events. A screenshot of each state checked is
 * saved to SCREENSHOTS (one set per backend's run) for a person to look at.
 */

const CHROMIUM = '/usr/bin/chromium'
const SCREENSHOTS = join(tmpdir(), 'devplatform-docs-page')

/**
 * Headless, and quiet on the network: without the background-networking flags Chromium keeps
 * trying to reach Google's services (updates, sync, safe browsing) on a closed network.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

let server: TestServer
let userDataDir: string
let browser: BrowserContext
let page: Page
const pageErrors: string[] = []
/** Content Security Policy violations the page reported (its securitypolicyviolation events and Chromium's console lines). */
const violations: string[] = []
/** The headers /docs was served with as the browser loaded it. */
let docsHeaders: Record<string, string> = {}

/** Records each securitypolicyviolation event in the page's console, where the test hears it. */
const REPORT_VIOLATIONS = `document.addEventListener('securitypolicyviolation', (event) => {
  console.error('securitypolicyviolation: ' + event.effectiveDirective + ' blocked ' + event.blockedURI)
})`

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's Chromium (apt-get install -y --no-install-recommends chromium; .ci/run does)`)
  mkdirSync(SCREENSHOTS, { recursive: true })
  server = await startTestServer()
  userDataDir = mkdtempSync(join(tmpdir(), 'devplatform-chromium-'))
  // A persistent context is how Playwright takes a user-data-dir: a fresh one, so no state carries over.
  browser = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 } })
  page = browser.pages()[0] ?? (await browser.newPage())
  page.on('pageerror', (error) => pageErrors.push(error.message))
  await page.addInitScript(REPORT_VIOLATIONS)
  page.on('console', (message) => {
    if (/securitypolicyviolation|Content Security Policy/i.test(message.text())) violations.push(message.text())
  })
  const response = await page.goto(`${server.baseUrl}/docs`)
  docsHeaders = (await response?.allHeaders()) ?? {}
  await page.locator('.opblock-tag-section').first().waitFor()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true })
  await server?.close()
})

function screenshot(name: string): string {
  return join(SCREENSHOTS, `${TEST_BACKEND}-${name}.png`)
}

/** Opens an operation (or an event) by its operationId and answers the text of its first example. */
async function openExample(operationId: string): Promise<string> {
  const operation = page.locator(`[id$="-${operationId}"]`)
  await operation.locator('.opblock-summary').click()
  const example = operation.locator('.microlight').first()
  await example.waitFor()
  await operation.scrollIntoViewIfNeeded()
  return example.innerText()
}

describe('the docs page in Chromium', () => {
  it("the project's name in the tab and the top bar, and no logo there", async () => {
    expect(await page.title()).toBe('devplatform API reference')
    const topBar = page.locator('.swagger-ui .topbar')
    expect(await topBar.innerText()).toBe('devplatform')
    expect(await topBar.locator('img, svg, a.link').count()).toBe(0)
    expect(await page.locator('.info .title').innerText()).toContain('Developer Platform API')
    const favicon = await page.locator('link[rel="icon"]').getAttribute('href')
    expect(favicon).toMatch(/favicon\.svg$/)
    await page.screenshot({ path: screenshot('top') })
    expect(pageErrors).toEqual([])
  })

  it('tags in the order a user meets them: health, customers, liquidation addresses, webhooks, taxes, then the others', async () => {
    const tags = await page.locator('.opblock-tag-section .opblock-tag').evaluateAll((elements) => elements.map((element) => element.getAttribute('data-tag')))
    expect(tags.slice(0, 5)).toEqual(['health', 'customers', 'liquidation addresses', 'webhooks', 'taxes'])
  })

  it('real example values: a customer, and a liquidation address that passes the chain check', async () => {
    const customer = await openExample('customerControllerCreate')
    expect(customer).toContain('"first_name": "Ada"')
    expect(customer).toContain('"email": "ada.lovelace@example.com"')
    expect(customer).not.toContain('"string"')
    await page.screenshot({ path: screenshot('customer-example') })
    const address = await openExample('liquidationAddressControllerCreateLiquidationAddress')
    expect(address).toContain('"address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"')
    expect(address).not.toContain('"string"')
  })

  it('every event type in the Webhooks section, each with its envelope and data', async () => {
    expect(await page.getByRole('heading', { name: 'Webhooks', exact: true }).count()).toBe(1)
    const shown = await page.locator('.opblock-post .opblock-summary-path').allInnerTexts()
    for (const type of EVENT_TYPES) expect(shown.map((text) => text.trim())).toContain(type)
    const event = await openExample('customerCreatedEvent')
    expect(event).toContain('"type": "customer.created"')
    expect(event).toContain('"first_name": "Ada"')
    await page.screenshot({ path: screenshot('customer-created-event') })
  })
})

/** A page of another origin (another port of 127.0.0.1) that frames `url`. */
async function framingSite(url: string): Promise<{ url: string; close: () => Promise<void> }> {
  const site: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end(`<!doctype html><title>another site</title><iframe id="framed" src="${url}" width="800" height="600"></iframe>`)
  })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  const { port } = site.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    // The browser keeps its connection open: close() alone would wait for it.
    close: () => new Promise((resolve) => {
      site.close(() => resolve())
      site.closeAllConnections()
    }),
  }
}

describe("the docs page's protections", () => {
  it("the page and its assets send a CSP with frame-ancestors 'none', nosniff and X-Frame-Options DENY", async () => {
    for (const path of ['/docs', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js', '/docs/static/swagger-ui.css', '/docs/static/theme/devplatform.js', '/docs/json']) {
      const res = await fetch(`${server.baseUrl}${path}`)
      expect(res.status, path).toBe(200)
      const csp = res.headers.get('content-security-policy') ?? ''
      expect(csp, path).toContain("frame-ancestors 'none'")
      expect(csp, path).toContain("default-src 'none'")
      expect(csp, path).not.toContain('unsafe-eval')
      expect(csp, path).toMatch(/script-src 'self';/)
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff')
      expect(res.headers.get('x-frame-options'), path).toBe('DENY')
    }
  })

  it('Swagger UI works under its CSP: an operation is tried out, and no violation is reported', async () => {
    expect(docsHeaders['content-security-policy'] ?? '').toContain("frame-ancestors 'none'")
    const operation = page.locator('[id$="-healthControllerPublicHealthCheckV0"]')
    await operation.locator('.opblock-summary').click()
    await operation.getByRole('button', { name: 'Try it out' }).click()
    await operation.getByRole('button', { name: 'Execute' }).click()
    const status = operation.locator('.live-responses-table .response .response-col_status')
    await status.waitFor()
    expect(await status.innerText()).toContain('200')
    await page.getByRole('button', { name: 'Authorize' }).click()
    await page.locator('.modal-ux').waitFor()
    await page.screenshot({ path: screenshot('tried-out-and-authorize') })
    expect(await page.locator('.opblock-tag-section').count()).toBeGreaterThan(5)
    expect(violations).toEqual([])
    expect(pageErrors).toEqual([])
  })

  it('a page of another origin cannot frame it', async () => {
    const site = await framingSite(`${server.baseUrl}/docs`)
    const framing = await browser.newPage()
    const refusals: string[] = []
    framing.on('console', (message) => refusals.push(message.text()))
    try {
      // The page's load event waits for its frame's, which fires whether the frame was let in or refused.
      await framing.goto(site.url, { waitUntil: 'load' })
      const framed = framing.frames().find((frame) => frame !== framing.mainFrame())
      expect(framed).toBeDefined()
      // Swagger UI's page puts #swagger-ui in the document before its load event: refused, there is none.
      expect(await framed?.locator('#swagger-ui').count()).toBe(0)
      expect(framed?.url()).not.toBe(`${server.baseUrl}/docs`)
      expect(refusals.join('\n')).toMatch(/frame-ancestors 'none'/)
      await framing.screenshot({ path: screenshot('framed-by-another-origin') })
    } finally {
      await framing.close()
      await site.close()
    }
  })
})
