// vitest: sqlite project only — the docs page in Chromium reads no data.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
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
 * a user meets them, every operation of the served document with its parameters, body fields and
 * answers, real example values, and the events; at 360 px and 1280 px wide without horizontal
 * overflow and with no serious or critical axe-core violation. A screenshot of each state checked
 * is saved to SCREENSHOTS for a person to look at.
 */

const CHROMIUM = '/usr/bin/chromium'
const SCREENSHOTS = join(tmpdir(), 'devplatform-docs-page')
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

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
  await page.locator('nav.contents').waitFor()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true })
  await server?.close()
})

function screenshot(name: string): string {
  return join(SCREENSHOTS, `${TEST_BACKEND}-${name}.png`)
}

/** Opens an operation (or an event) from the contents by its operationId and answers the text of its first example. */
async function openExample(operationId: string): Promise<string> {
  await page.locator(`nav.contents a[href="#${operationId}"]`).click()
  const operation = page.locator(`section.operation[id="${operationId}"]`)
  await expect.poll(() => page.evaluate<string>('location.hash')).toBe(`#${operationId}`)
  expect(await operation.evaluate((element) => element.matches(':target'))).toBe(true)
  const example = operation.locator('pre').first()
  expect(await example.isVisible()).toBe(true)
  return example.innerText()
}

interface DocumentOperation {
  operationId: string
  tags?: string[]
  parameters?: { $ref?: string; name?: string }[]
  requestBody?: { content: Record<string, { schema?: { required?: string[]; properties?: Record<string, unknown> } }> }
  responses: Record<string, unknown>
}

/** Every operation of the served document, with its method and path. */
async function servedOperations(): Promise<{ method: string; path: string; operation: DocumentOperation }[]> {
  const document = (await server.request<{ paths: Record<string, Record<string, DocumentOperation>> }>('GET', '/api/v0/openapi.json')).body
  return Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ method, path, operation })))
}

/** The page's width against the viewport's, and axe-core's serious or critical violations. */
async function measure(width: number, name: string): Promise<{ scrollWidth: number; clientWidth: number; violations: string[] }> {
  await page.setViewportSize({ width, height: 900 })
  await page.screenshot({ path: screenshot(`${name}-${width}`) })
  const { scrollWidth, clientWidth } = await page.evaluate<{ scrollWidth: number; clientWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth })')
  await page.evaluate(AXE)
  const violations = await page.evaluate<string[]>(
    `axe.run(document).then((result) => result.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => violation.id + ': ' + violation.nodes.slice(0, 3).map((node) => node.html).join(' | ')))`,
  )
  return { scrollWidth, clientWidth, violations }
}

describe('the docs page in Chromium', () => {
  it("the project's name in the tab and the top bar, no logo, its icon, and a link to the raw document", async () => {
    expect(await page.title()).toBe('devplatform API reference')
    const topBar = page.locator('header.topbar')
    expect(await topBar.locator('.name').innerText()).toBe('devplatform')
    expect(await topBar.locator('img, svg').count()).toBe(0)
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toContain('Developer Platform API')
    const favicon = await page.locator('link[rel="icon"]').getAttribute('href')
    expect(favicon).toBe('/docs/favicon.svg')
    const raw = page.getByRole('link', { name: 'OpenAPI document (JSON)' })
    expect(await raw.getAttribute('href')).toBe('/api/v0/openapi.json')
    expect((await fetch(`${server.baseUrl}/api/v0/openapi.json`)).status).toBe(200)
    // The page is drawn by the server: no script of any kind.
    expect(await page.locator('script').count()).toBe(0)
    await page.screenshot({ path: screenshot('top') })
    expect(pageErrors).toEqual([])
  })

  it("tags in the order a user meets them: health, customers, liquidation addresses, webhooks first, the document's declared tags in its order, then the others", async () => {
    const tags = (await page.locator('main section.tag > h2').allTextContents()).map((tag) => tag.toLowerCase())
    expect(tags.slice(0, 4)).toEqual(['health', 'customers', 'liquidation addresses', 'webhooks'])
    const document = (await server.request<{ tags: { name: string }[] }>('GET', '/api/v0/openapi.json')).body
    const used = [...new Set((await servedOperations()).map(({ operation }) => operation.tags?.[0] ?? ''))]
    const declared = document.tags.map((tag) => tag.name)
    expect(tags.slice(0, -2)).toEqual([...declared.filter((tag) => used.includes(tag)), ...used.filter((tag) => !declared.includes(tag))])
    expect(tags.slice(-2)).toEqual(['webhooks', 'schemas'])
  })

  it("every operation of the served document, listed and linked, with its method, path, parameters, required body fields and every response status", async () => {
    const operations = await servedOperations()
    expect(operations.length).toBeGreaterThan(70)
    // Read in one pass from the page (one round trip rather than hundreds); textContent, as the operations out of view are not laid out.
    const shown = await page.evaluate<Record<string, { heading: string; cells: string[]; listed: boolean }>>(`Object.fromEntries([...document.querySelectorAll('main section.operation')].map((section) => [section.id, {
      heading: section.querySelector('h3').textContent,
      cells: [...section.querySelectorAll('td, h5')].map((cell) => cell.textContent.trim()),
      listed: document.querySelector('nav.contents a[href="#' + section.id + '"]') !== null,
    }]))`)
    for (const { method, path, operation } of operations) {
      const section = shown[operation.operationId]
      expect(section, operation.operationId).toBeDefined()
      expect(section?.listed, operation.operationId).toBe(true)
      expect(section?.heading.replace(/\s+/g, ' '), operation.operationId).toBe(`${method.toUpperCase()} ${path}`)
      for (const parameter of operation.parameters ?? []) {
        const name = parameter.name ?? (parameter.$ref?.endsWith('RequiredIdempotencyKey') === true ? 'idempotency-key' : 'Idempotency-Key')
        expect(section?.cells, `${operation.operationId} ${name}`).toContain(name)
      }
      const body = operation.requestBody?.content['application/json']?.schema
      for (const field of Object.keys(body?.properties ?? {})) expect(section?.cells, `${operation.operationId} ${field}`).toContain(field)
      for (const status of Object.keys(operation.responses)) expect(section?.cells, `${operation.operationId} ${status}`).toContain(status)
    }
  })

  it('real example values: a customer, and a liquidation address that passes the chain check, each reached from the contents', async () => {
    const customer = await openExample('customerControllerCreate')
    expect(customer).toContain('"first_name": "Ada"')
    expect(customer).toContain('"email": "ada.lovelace@example.com"')
    expect(customer).not.toContain('"string"')
    await page.screenshot({ path: screenshot('customer-example') })
    const address = await openExample('liquidationAddressControllerCreateLiquidationAddress')
    expect(address).toContain('"address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"')
    expect(address).not.toContain('"string"')
    // Each error's true message, and the answer's fields one click away.
    const errors = (await page.locator('section.operation[id="customerControllerCreate"] table.errors').textContent()) ?? ''
    expect(errors).toContain('Missing required scope')
    expect(errors).toContain('customer:create')
    const fields = page.locator('section.operation[id="liquidationAddressControllerCreateLiquidationAddress"] details').first()
    await fields.locator('summary').click()
    expect(await fields.locator('table').isVisible()).toBe(true)
  })

  it('every event type in the Webhooks section, each with its envelope and data', async () => {
    expect(await page.getByRole('heading', { name: 'Webhooks', exact: true }).count()).toBe(1)
    const shown = await page.locator('#webhooks section.operation h3 .path').allTextContents()
    for (const type of EVENT_TYPES) expect(shown.map((text) => text.trim())).toContain(type)
    const event = await openExample('customerCreatedEvent')
    expect(event).toContain('"type": "customer.created"')
    expect(event).toContain('"first_name": "Ada"')
    await page.screenshot({ path: screenshot('customer-created-event') })
  })

  it("no horizontal overflow at 360 px, and no serious or critical axe-core violation at 360 and 1280 px", async () => {
    // The whole page, every answer's fields opened, laid out at once: no part wider than the screen.
    await page.setViewportSize({ width: 360, height: 900 })
    await page.evaluate(`for (const details of document.querySelectorAll('details')) details.open = true
      for (const section of document.querySelectorAll('.operation, .schema')) section.style.contentVisibility = 'visible'`)
    const { scrollWidth, clientWidth } = await page.evaluate<{ scrollWidth: number; clientWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth })')
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth)
    // axe-core over the whole page takes minutes: every part of the page's markup is checked on the
    // header, the contents, the first two tags, an event and a schema (every operation is drawn by the same code).
    await page.evaluate(`for (const section of document.querySelectorAll('main > section.tag')) {
        for (const child of section.querySelectorAll(':scope > section')) {
          if (!['tag-health', 'tag-customers'].includes(section.id) && !['customerCreatedEvent', 'schema-Error', 'schema-Customer'].includes(child.id)) child.remove()
        }
      }`)
    for (const width of [360, 1280]) {
      const measured = await measure(width, 'page')
      expect(measured.scrollWidth, `at ${width} px`).toBeLessThanOrEqual(measured.clientWidth)
      expect(measured.violations, `at ${width} px`).toEqual([])
    }
    await page.reload()
  }, 120_000)
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
  it("the page, its icon and the document send a CSP that allows no script and only the page's own style, frame-ancestors 'none', nosniff and X-Frame-Options DENY", async () => {
    for (const path of ['/docs', '/docs/json', '/docs/favicon.svg', '/favicon.ico']) {
      const res = await fetch(`${server.baseUrl}${path}`)
      expect(res.status, path).toBe(200)
      const csp = res.headers.get('content-security-policy') ?? ''
      expect(csp, path).toContain("frame-ancestors 'none'")
      expect(csp, path).toContain("default-src 'none'")
      expect(csp, path).not.toContain('script-src')
      expect(csp, path).not.toContain('unsafe')
      expect(csp, path).toMatch(/style-src 'sha256-[A-Za-z0-9+/]+=*';/)
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff')
      expect(res.headers.get('x-frame-options'), path).toBe('DENY')
    }
    // Swagger UI's assets are gone.
    expect((await fetch(`${server.baseUrl}/docs/static/swagger-ui-bundle.js`)).status).toBe(404)
  })

  it('its style applies under its CSP, and no violation is reported', async () => {
    expect(docsHeaders['content-security-policy'] ?? '').toContain("frame-ancestors 'none'")
    expect(await page.evaluate<string>(`getComputedStyle(document.querySelector('header.topbar')).backgroundColor`)).toBe('rgb(27, 27, 27)')
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
      // Refused, the frame has none of the page's contents.
      expect(await framed?.locator('nav.contents').count()).toBe(0)
      expect(framed?.url()).not.toBe(`${server.baseUrl}/docs`)
      expect(refusals.join('\n')).toMatch(/frame-ancestors 'none'/)
      await framing.screenshot({ path: screenshot('framed-by-another-origin') })
    } finally {
      await framing.close()
      await site.close()
    }
  })
})
