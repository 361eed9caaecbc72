import { describe, expect, it } from 'vitest'
import { VERSION } from '../../../src/version.js'
import { A_VALID_DATE, anonymous, call } from '../../openapi/generated-client.js'

export function generatedClientCases(): void {
  describe('health', () => {
    it('healthControllerPublicHealthCheckV0: GET /health/public, without a key', async () => {
      const { data, response } = await call('healthControllerPublicHealthCheckV0', { client: anonymous })
      expect(response.status).toBe(200)
      expect(data).toEqual({ status: 'ok', timestamp: A_VALID_DATE, version: VERSION })
    })

    it('healthControllerCheckV0: GET /health', async () => {
      const { data, response } = await call('healthControllerCheckV0')
      expect(response.status).toBe(200)
      expect(data).toEqual({
        status: 'ok',
        timestamp: A_VALID_DATE,
        version: VERSION,
        database: 'connected',
        message: 'Service is up and running',
        authenticated: true,
      })
    })
  })
}
