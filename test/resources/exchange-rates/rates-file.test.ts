import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../../src/config.js'
import type { ExchangeRateBody } from '../../../src/resources/exchange-rates/schemas.js'
import { dropFreshDatabases, freshDatabase } from '../../backend.js'
import { startTestServer } from '../../helper.js'
import { cleanUp, exitWithin, launch, SERVER, tempDir } from '../../processes.js'

afterAll(async () => {
  cleanUp()
  await dropFreshDatabases()
})

const iso = (ms: number) => new Date(ms).toISOString()
const liveRate = (overrides: Record<string, string> = {}) => ({
  environment: 'live',
  from: 'usd',
  to: 'eur',
  midmarket_rate: '0.87',
  buy_rate: '0.86',
  sell_rate: '0.88',
  timestamp: iso(Date.now() - 1000),
  ...overrides,
})

describe('configuration', () => {
  it('EXCHANGE_RATES_FILE: a path made absolute; unset or empty: none', () => {
    expect(loadConfig({}).exchangeRatesFile).toBeUndefined()
    expect(loadConfig({ EXCHANGE_RATES_FILE: '' }).exchangeRatesFile).toBeUndefined()
    expect(loadConfig({ EXCHANGE_RATES_FILE: 'rates.json' }).exchangeRatesFile).toBe(resolve('rates.json'))
    expect(loadConfig({ EXCHANGE_RATES_FILE: '/etc/devplatform/rates.json' }).exchangeRatesFile).toBe('/etc/devplatform/rates.json')
  })

  it('EXCHANGE_RATE_MAX_AGE_SECONDS: 1 to 31536000, an hour by default', () => {
    expect(loadConfig({}).exchangeRateMaxAgeMs).toBe(3_600_000)
    expect(loadConfig({ EXCHANGE_RATE_MAX_AGE_SECONDS: '1' }).exchangeRateMaxAgeMs).toBe(1000)
    expect(loadConfig({ EXCHANGE_RATE_MAX_AGE_SECONDS: '31536000' }).exchangeRateMaxAgeMs).toBe(31_536_000_000)
    for (const bad of ['0', '31536001', '-1', '1.5', 'abc', '']) {
      expect(() => loadConfig({ EXCHANGE_RATE_MAX_AGE_SECONDS: bad }), bad).toThrow(
        new ConfigError(`EXCHANGE_RATE_MAX_AGE_SECONDS must be an integer from 1 to 31536000 (got ${JSON.stringify(bad)})`),
      )
    }
  })
})

describe('a server with EXCHANGE_RATES_FILE', () => {
  it('loads the file before it answers: a production key reads the live rate at once', async () => {
    const file = join(tempDir('devplatform-rates-'), 'rates.json')
    const asOf = iso(Date.now() - 1000)
    writeFileSync(file, JSON.stringify([liveRate({ timestamp: asOf })]))
    const server = await startTestServer({ config: { exchangeRatesFile: file } })
    try {
      const key = await server.createKey({ environment: 'production' })
      const res = await server.request<ExchangeRateBody>('GET', '/api/v0/exchange-rate/usd-to-eur', { key })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ from: 'usd', to: 'eur', midmarket_rate: '0.87', buy_rate: '0.86', sell_rate: '0.88', timestamp: asOf })
    } finally {
      await server.close()
    }
  })

  it('a bad file stops start-up, naming the variable, the file and the rate', async () => {
    const file = join(tempDir('devplatform-rates-'), 'rates.json')
    writeFileSync(file, JSON.stringify([liveRate(), liveRate({ from: 'eur', to: 'usd', timestamp: iso(Date.now() + 60_000) })]))
    await expect(startTestServer({ config: { exchangeRatesFile: file } })).rejects.toThrow(`EXCHANGE_RATES_FILE: ${file}: rate 2: timestamp`)
  })

  it('the server process: one line on stderr and exit 1, nothing stored', async () => {
    const file = join(tempDir('devplatform-rates-'), 'rates.json')
    writeFileSync(file, JSON.stringify([liveRate({ buy_rate: '0.87' })]))
    const database = await freshDatabase()
    const running = launch(SERVER, [], { DATABASE_URL: database.url, PORT: '0', NODE_ENV: 'test', LOG_LEVEL: 'silent', EXCHANGE_RATES_FILE: file })
    const exit = await exitWithin(running, 20_000)
    expect(exit.code).toBe(1)
    expect(running.stderr()).toBe(`devplatform: failed to start: EXCHANGE_RATES_FILE: ${file}: rate 1: buy_rate < midmarket_rate < sell_rate must hold (got 0.87, 0.87, 0.88)\n`)
    expect(await database.count('select count(*) as n from exchange_rates')).toBe(0)
  })
})
