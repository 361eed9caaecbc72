import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type LoadedRate, saveRates } from '../../../src/ledger/rates.js'
import type { ExchangeRateBody } from '../../../src/resources/exchange-rates/schemas.js'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'

const MAX_AGE_MS = 60_000
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let server: TestServer
/** a development key: sandbox rates */
let development: TestKey
/** a production key: live rates */
let production: TestKey

beforeAll(async () => {
  server = await startTestServer({ config: { exchangeRateMaxAgeMs: MAX_AGE_MS } })
  development = await server.createKey({ environment: 'development' })
  production = await server.createKey({ environment: 'production' })
})
afterAll(async () => server.close())
beforeEach(async () => {
  await server.app.db.deleteFrom('exchange_rates').execute()
})

const iso = (ms: number) => new Date(ms).toISOString()

function load(...rates: Partial<LoadedRate>[]) {
  return saveRates(
    server.app.db,
    rates.map((rate) => ({ environment: 'live', from: 'usd', to: 'eur', midmarket: '0.91', buy: '0.9', sell: '0.92', asOf: iso(Date.now() - 1000), ...rate })),
  )
}

const get = (key: TestKey, path: string) => server.request<ExchangeRateBody>('GET', `/api/v0${path}`, { key })
const badRequest = (message: string) => ({ statusCode: 400, error: 'Bad Request', message })

describe('the sandbox (a development key)', () => {
  it('answers the fixed defaults, timestamped now, on all three routes', async () => {
    const before = Date.now()
    const usdToEur = await get(development, '/exchange-rate/usd-to-eur')
    expect(usdToEur.status).toBe(200)
    expect(usdToEur.body).toEqual({ from: 'usd', to: 'eur', midmarket_rate: '0.85000', buy_rate: '0.84500', sell_rate: '0.85500', timestamp: expect.stringMatching(ISO_MS) })
    expect(Date.parse(usdToEur.body.timestamp)).toBeGreaterThanOrEqual(before - 1)
    expect(Date.parse(usdToEur.body.timestamp)).toBeLessThanOrEqual(Date.now())
    const eurToUsd = await get(development, '/exchange-rate/eur-to-usd')
    expect(eurToUsd.body).toEqual({ from: 'eur', to: 'usd', midmarket_rate: '1.17647', buy_rate: '1.17000', sell_rate: '1.18300', timestamp: expect.stringMatching(ISO_MS) })
    expect((await get(development, '/exchange-rate?from=usd&to=eur')).body).toMatchObject({ from: 'usd', to: 'eur', midmarket_rate: '0.85000' })
    expect((await get(development, '/exchange-rate?from=eur&to=usd')).body).toMatchObject({ from: 'eur', to: 'usd', midmarket_rate: '1.17647' })
  })

  it('a fresh sandbox rate an operator loaded comes first; a live one never does', async () => {
    await load({ environment: 'live', midmarket: '0.7', buy: '0.69', sell: '0.71' })
    expect((await get(development, '/exchange-rate/usd-to-eur')).body.midmarket_rate).toBe('0.85000')
    const asOf = iso(Date.now() - 5000)
    await load({ environment: 'sandbox', asOf })
    expect((await get(development, '/exchange-rate?from=usd&to=eur')).body).toEqual({ from: 'usd', to: 'eur', midmarket_rate: '0.91', buy_rate: '0.9', sell_rate: '0.92', timestamp: asOf })
  })

  it('a stale sandbox rate gives way to the default: the sandbox never goes without a rate', async () => {
    await load({ environment: 'sandbox', asOf: iso(Date.now() - MAX_AGE_MS - 1000) })
    const res = await get(development, '/exchange-rate/usd-to-eur')
    expect(res.status).toBe(200)
    expect(res.body.midmarket_rate).toBe('0.85000')
  })
})

describe('live (a production key)', () => {
  it('without any loaded rate: 503 with Retry-After, naming the pair and the max age', async () => {
    for (const path of ['/exchange-rate/usd-to-eur', '/exchange-rate?from=usd&to=eur']) {
      const res = await get(production, path)
      expect(res.status, path).toBe(503)
      expect(res.headers.get('retry-after')).toBe('60')
      expect(res.body).toEqual({
        statusCode: 503,
        error: 'Service Unavailable',
        message: 'No live usd to eur exchange rate is at most 60 s old: none has been loaded',
        details: 'An operator loads rates with `devplatform rates load` or EXCHANGE_RATES_FILE; retry later',
      })
    }
  })

  it('answers the newest fresh live rate as loaded (texts as written); a sandbox rate never', async () => {
    await load({ environment: 'sandbox' })
    expect((await get(production, '/exchange-rate/usd-to-eur')).status).toBe(503)
    const asOf = iso(Date.now() - 2000)
    await load({ asOf: iso(Date.now() - 3000), midmarket: '0.5', buy: '0.4', sell: '0.6' }, { asOf, midmarket: '0.86000', buy: '0.85', sell: '0.870' })
    await load({ from: 'eur', to: 'usd', midmarket: '1.16', buy: '1.15', sell: '1.17', asOf })
    expect((await get(production, '/exchange-rate/usd-to-eur')).body).toEqual({ from: 'usd', to: 'eur', midmarket_rate: '0.86000', buy_rate: '0.85', sell_rate: '0.870', timestamp: asOf })
    expect((await get(production, '/exchange-rate?from=usd&to=eur')).body).toEqual((await get(production, '/exchange-rate/usd-to-eur')).body)
    expect((await get(production, '/exchange-rate/eur-to-usd')).body).toEqual({ from: 'eur', to: 'usd', midmarket_rate: '1.16', buy_rate: '1.15', sell_rate: '1.17', timestamp: asOf })
  })

  it('a rate older than the max age is not used: 503 naming when the newest was true', async () => {
    const asOf = iso(Date.now() - MAX_AGE_MS - 1)
    await load({ asOf })
    const res = await get(production, '/exchange-rate/usd-to-eur')
    expect(res.status).toBe(503)
    expect(res.body).toMatchObject({ message: `No live usd to eur exchange rate is at most 60 s old: the newest is from ${asOf}` })
    // one direction loaded is not the other: eur → usd still has none
    await load({ asOf: iso(Date.now()) })
    expect((await get(production, '/exchange-rate/usd-to-eur')).status).toBe(200)
    expect((await get(production, '/exchange-rate/eur-to-usd')).body).toMatchObject({ statusCode: 503, message: 'No live eur to usd exchange rate is at most 60 s old: none has been loaded' })
  })
})

describe('GET /exchange-rate: from and to are usd or eur, two different ones', () => {
  it.each([
    ['', 'from is required; to is required'],
    ['?to=eur', 'from is required'],
    ['?from=usd', 'to is required'],
    ['?from=xyz&to=abc', 'from must be usd (USDC) or eur (EURC); to must be usd (USDC) or eur (EURC)'],
    ['?from=&to=eur', 'from must be usd (USDC) or eur (EURC)'],
    ['?from=usdc&to=eur', 'from must be usd (USDC) or eur (EURC)'],
    ['?from=USD&to=eur', 'from must be usd (USDC) or eur (EURC)'],
    ['?from=usd&to=mxn', 'to must be usd (USDC) or eur (EURC)'],
    ['?from=usd&to=eurc', 'to must be usd (USDC) or eur (EURC)'],
    ['?from=usd&to=eur%00', 'to must be usd (USDC) or eur (EURC)'],
    ['?from=usd&from=eur&to=eur', 'from must be usd (USDC) or eur (EURC)'],
    ['?from=usd&to=usd', 'Unsupported currency pair: from and to are both usd; an exchange rate is between usd and eur'],
    ['?from=eur&to=eur', 'Unsupported currency pair: from and to are both eur; an exchange rate is between usd and eur'],
  ])('%s: 400 %s', async (query, message) => {
    for (const key of [development, production]) {
      const res = await get(key, `/exchange-rate${query}`)
      expect(res.status).toBe(400)
      expect(res.body).toEqual(badRequest(message))
    }
  })

  it('unknown query parameters are ignored, as on every list', async () => {
    expect((await get(development, '/exchange-rate?from=usd&to=eur&amount=5')).status).toBe(200)
  })
})

describe('access', () => {
  it('needs exchange_rate:read, and that scope alone is enough', async () => {
    const without = await server.createKey({ environment: 'development', scopes: ['wallet:read'] })
    for (const path of ['/exchange-rate/usd-to-eur', '/exchange-rate/eur-to-usd', '/exchange-rate?from=usd&to=eur']) {
      const res = await get(without, path)
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ message: 'Missing required scope', details: 'This API key lacks the required scope: exchange_rate:read' })
    }
    const only = await server.createKey({ environment: 'development', scopes: ['exchange_rate:read'] })
    expect((await get(only, '/exchange-rate/usd-to-eur')).status).toBe(200)
  })

  it('the document names each operation as the published client does, with its answers', async () => {
    const document = await server.request<{ paths: Record<string, { get: { operationId: string; responses: Record<string, unknown> } }> }>('GET', '/api/v0/openapi.json')
    expect(document.body.paths['/api/v0/exchange-rate']?.get.operationId).toBe('exchangeRateControllerGetExchangeRate')
    expect(document.body.paths['/api/v0/exchange-rate/eur-to-usd']?.get.operationId).toBe('exchangeRateControllerGetEURToUSDRate')
    expect(document.body.paths['/api/v0/exchange-rate/usd-to-eur']?.get.operationId).toBe('exchangeRateControllerGetUSDToEURRate')
    expect(Object.keys(document.body.paths['/api/v0/exchange-rate']?.get.responses ?? {}).sort()).toEqual(['200', '400', '401', '403', '429', '503'])
  })
})
