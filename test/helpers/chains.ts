import { HDKey } from 'viem/accounts'
import { type ChainsConfig, parseChainsConfig } from '../../src/chains/config.js'

/** The account-level extended public key (m/44'/60'/0') of a fixed test seed. */
export const TEST_RECEIVING_XPUB = HDKey.fromMasterSeed(new Uint8Array(32).fill(7)).derive("m/44'/60'/0'").publicExtendedKey

/**
 * A chains configuration for the API's tests, nothing watched: ethereum takes USDC and EURC, base
 * USDC only (so EURC on base is off), every other chain is off. Its RPC URL answers nothing.
 */
export function testChainsConfig(): ChainsConfig {
  const chain = (chainId: number, tokens: Record<string, string>) => ({ chainId, rpcUrls: ['http://127.0.0.1:9'], tokens, confirmations: 3 })
  return parseChainsConfig(
    JSON.stringify({
      receivingXpub: TEST_RECEIVING_XPUB,
      chains: {
        ethereum: chain(1, { usdc: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', eurc: '0x1abaea1f7c830bd89acc67ec4af516284b1bc33c' }),
        base: chain(8453, { usdc: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913' }),
      },
    }),
    'test chains',
  )
}
