// vitest: sqlite project only — configuration parsing, no backend.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

describe('METRICS_PORT', () => {
  it('unset or empty: no metrics listener', () => {
    expect(loadConfig({}).metricsPort).toBeUndefined()
    expect(loadConfig({ METRICS_PORT: '' }).metricsPort).toBeUndefined()
  })

  it('a port from 1 to 65535', () => {
    expect(loadConfig({ METRICS_PORT: '9464' }).metricsPort).toBe(9464)
    expect(loadConfig({ METRICS_PORT: '1' }).metricsPort).toBe(1)
    expect(loadConfig({ METRICS_PORT: '65535' }).metricsPort).toBe(65535)
    for (const bad of ['0', '65536', 'x', '-1', ' 9464']) {
      expect(() => loadConfig({ METRICS_PORT: bad })).toThrow(new ConfigError(`METRICS_PORT must be an integer from 1 to 65535 (got ${JSON.stringify(bad)})`))
    }
  })

  it('never the API port', () => {
    expect(() => loadConfig({ METRICS_PORT: '3000' })).toThrow(new ConfigError('METRICS_PORT must differ from PORT (both are 3000)'))
    expect(loadConfig({ PORT: '8080', METRICS_PORT: '3000' }).metricsPort).toBe(3000)
  })
})
