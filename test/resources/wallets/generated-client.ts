import { describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, call, key } from '../../openapi/generated-client.js'

export function generatedClientCases(): void {
  describe('wallets', () => {
    it('walletControllerGetWallets: GET /wallets', async () => {
      const { data, response } = await call('walletControllerGetWallets')
      expect(response.status).toBe(200)
      const wallet = { id: A_UUID, bridge_id: A_UUID, address: expect.any(String), created_at: A_VALID_DATE, updated_at: A_VALID_DATE, app: { id: key.appId, name: 'test app' } }
      expect(data).toEqual({
        data: ['base', 'ethereum', 'solana'].map((chain) =>
          expect.objectContaining({ ...wallet, chain, balances: [expect.objectContaining({ balance: '0.000000', currency: 'usdc', chain }), expect.objectContaining({ balance: '0.000000', currency: 'eurc', chain })] }),
        ),
      })
    })
  })
}
