import { describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, call, key } from '../../openapi/generated-client.js'

export function generatedClientCases(): void {
  describe('wallets', () => {
    it('walletControllerGetWallets: GET /wallets', async () => {
      const { data, response } = await call('walletControllerGetWallets')
      expect(response.status).toBe(200)
      // A production key's wallets on a server with test chains (base and ethereum on): live
      // receiving addresses there; none on solana, saying why.
      const wallet = { id: A_UUID, bridge_id: A_UUID, created_at: A_VALID_DATE, updated_at: A_VALID_DATE, app: { id: key.appId, name: 'test app' } }
      const addressOn = (chain: string) =>
        chain === 'solana' ? { address: null, address_unavailable_reason: 'live deposits on solana are off: this platform receives live money on EVM chains only (docs/chains.md)' } : { address: expect.stringMatching(/^0x[0-9a-f]{40}$/) }
      expect(data).toEqual({
        data: ['base', 'ethereum', 'solana'].map((chain) =>
          expect.objectContaining({ ...wallet, ...addressOn(chain), chain, balances: [expect.objectContaining({ balance: '0.000000', currency: 'usdc', chain }), expect.objectContaining({ balance: '0.000000', currency: 'eurc', chain })] }),
        ),
      })
    })
  })
}
