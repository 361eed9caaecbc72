import { describe, expect, it } from 'vitest'
import { call } from '../../openapi/generated-client.js'

export function generatedClientCases(): void {
  describe('balance transactions', () => {
    it('balanceTransactionControllerFindAll: GET /balance-transactions', async () => {
      const { data, response } = await call('balanceTransactionControllerFindAll', { query: { type: 'fee', currency: 'usdc', take: 5 } })
      expect(response.status).toBe(200)
      expect(data).toEqual({ data: expect.any(Array), has_more: false })
    })
  })
}
