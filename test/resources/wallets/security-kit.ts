import { walletsManifest } from '../../../src/resources/wallets/manifest.js'
import { defineSecurityKit } from '../../auth/security-kit.js'

export const securityKit = defineSecurityKit(walletsManifest, {
  /** the application's sandbox base wallet, which the test payment's USDC goes to */
  async fixtures({ server, sandboxKey }) {
    const wallets = await server.request<{ data: { id: string; chain: string }[] }>('GET', '/api/v0/wallets', { key: sandboxKey })
    return { sandboxWallet: wallets.body.data.find((wallet) => wallet.chain === 'base')?.id ?? '' }
  },
})
