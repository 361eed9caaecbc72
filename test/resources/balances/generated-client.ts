import { describe, expect, it } from 'vitest'
import { A_UUID, call } from '../../openapi/generated-client.js'

export function generatedClientCases(): void {
  describe('balances', () => {
    const aggregated = (currency: string) => ({
      currency,
      total_balance: '0.000000',
      balances: ['base', 'ethereum', 'solana'].map((chain) =>
        expect.objectContaining({ wallet_id: A_UUID, chain, currency, balance: '0.000000', pending_incoming: '0.000000', pending_outgoing: '0.000000' }),
      ),
    })

    it('balanceControllerGetAllBalances: GET /balance', async () => {
      const { data, response } = await call('balanceControllerGetAllBalances')
      expect(response.status).toBe(200)
      expect(data).toEqual({ usdc: aggregated('usdc'), eurc: aggregated('eurc'), total_usd_value: '0.00' })
    })

    it('balanceControllerGetUSDCBalance: GET /balance/usdc', async () => {
      const { data, response } = await call('balanceControllerGetUSDCBalance')
      expect(response.status).toBe(200)
      expect(data).toEqual(aggregated('usdc'))
    })

    it('balanceControllerGetEURCBalance: GET /balance/eurc', async () => {
      const { data, response } = await call('balanceControllerGetEURCBalance')
      expect(response.status).toBe(200)
      expect(data).toEqual(aggregated('eurc'))
    })
  })
}
