import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
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

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's Chromium (apt-get install -y --no-install-recommends chromium; .ci/run does)`)
  mkdirSync(SCREENSHOTS, { recursive: true })
  server = await startTestServer()
  userDataDir = mkdtempSync(join(tmpdir(), 'devplatform-chromium-'))
  // A persistent context is how Playwright takes a user-data-dir: a fresh one, so no state carries over.
  browser = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 } })
  page = browser.pages()[0] ?? (await browser.newPage())
  page.on('pageerror', (error) => pageErrors.push(error.message))
  await page.goto(`${server.baseUrl}/docs`)
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
