import { Type, type Static } from 'typebox'
import { TOKEN_CONTRACTS, WALLET_CHAINS, WALLET_CURRENCIES, type WalletChain, type WalletCurrency } from './repository.js'
import { Timestamp } from '../../schemas/common.js'

/** What one example wallet holds in one currency: available, on its way in, reserved on its way out. */
interface ExampleHolding {
  balance: string
  pending_incoming: string
  pending_outgoing: string
}

const nothing: ExampleHolding = { balance: '0.000000', pending_incoming: '0.000000', pending_outgoing: '0.000000' }

/** The application whose wallets the docs page shows (the id its tax example applies to). */
export const APPLICATION_EXAMPLE = { id: 'ee60ee84-f6d9-41a4-9f72-41c7646070b7', name: 'Acme Marketplace' } as const

/** An example wallet and what it holds in each currency. */
interface WalletExample {
  id: string
  chain: WalletChain
  address: string
  holdings: Readonly<Record<WalletCurrency, ExampleHolding>>
}

/** The first of WALLET_EXAMPLES: the wallet each field's own example describes. */
export const BASE_WALLET_EXAMPLE: WalletExample = {
  id: '3aa4ee38-3a41-4d41-897f-fa4e948e9de3',
  chain: 'base',
  address: '0xb02afc064349642341cfc949a7cd7cd26c5cc8bc',
  holdings: { usdc: { balance: '1200.500000', pending_incoming: '250.000000', pending_outgoing: '0.000000' }, eurc: nothing },
}

/**
 * The wallets the docs page shows, in WALLET_CHAINS order, with addresses of the form the server
 * makes (lower-case hex on EVM chains, base58 of 32 bytes on Solana), and what each holds: USDC on
 * base (250 of it on its way in) and ethereum, EURC on ethereum. The balances examples are the
 * same money (src/resources/balances/schemas.ts).
 */
export const WALLET_EXAMPLES: readonly WalletExample[] = [
  BASE_WALLET_EXAMPLE,
  {
    id: '2766afb4-2af1-460c-91ec-9a9b2602723a',
    chain: 'ethereum',
    address: '0x45ca5197a1a3758d05ef3d9040ba73f9fe653963',
    holdings: { usdc: { ...nothing, balance: '34.060000' }, eurc: { ...nothing, balance: '500.000000' } },
  },
  { id: '445ff4ed-39cd-4cb6-bc12-2d70b5a4fa29', chain: 'solana', address: '4Y8PVhVxJ9cTY8VsPPp6NU4ZX2rdjhwJ2P39gRaqhYu6', holdings: { usdc: nothing, eurc: nothing } },
]

/** An amount of USDC or EURC: a decimal string with all 6 decimals ("12.500000"). */
export function stablecoinAmount(description: string, example: string) {
  return Type.String({ pattern: '^(0|[1-9][0-9]*)\\.[0-9]{6}$', examples: [example], description })
}

function applicationOf(description: string) {
  return Type.Object(
    { id: Type.String({ format: 'uuid', examples: [APPLICATION_EXAMPLE.id] }), name: Type.String({ examples: [APPLICATION_EXAMPLE.name] }) },
    { description },
  )
}

export const WalletBalanceSchema = Type.Object({
  balance: stablecoinAmount('available: posted credits − posted debits − reserved (pending) debits', BASE_WALLET_EXAMPLE.holdings.usdc.balance),
  currency: Type.Enum([...WALLET_CURRENCIES]),
  chain: Type.Enum([...WALLET_CHAINS]),
  contract_address: Type.String({ description: "the token's contract on the chain (Solana: its mint)", examples: [TOKEN_CONTRACTS.base.usdc] }),
})

/** One example wallet as the API answers it. */
function walletExample(wallet: WalletExample) {
  return {
    id: wallet.id,
    bridge_id: wallet.id,
    address: wallet.address,
    chain: wallet.chain,
    balances: WALLET_CURRENCIES.map((currency) => ({
      balance: wallet.holdings[currency].balance,
      currency,
      chain: wallet.chain,
      contract_address: TOKEN_CONTRACTS[wallet.chain][currency],
    })),
    created_at: '2026-11-21T19:02:47.000Z',
    updated_at: '2026-11-21T19:02:47.000Z',
    business: APPLICATION_EXAMPLE,
    app: APPLICATION_EXAMPLE,
  }
}

export const WalletSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', examples: [BASE_WALLET_EXAMPLE.id] }),
    bridge_id: Type.String({
      description: 'the id a liquidation address names in bridge_wallet_id: the same as id (this platform is its own provider)',
      examples: [BASE_WALLET_EXAMPLE.id],
    }),
    address: Type.Union([Type.String(), Type.Null()], {
      description: "the wallet's address, valid for its chain; in live, a receiving address the platform watches, or null while live deposits on the chain are off",
      examples: [BASE_WALLET_EXAMPLE.address],
    }),
    address_unavailable_reason: Type.Optional(
      Type.String({ description: 'only with a null address: why no live money can arrive on the chain', examples: ['live deposits on base are off: this platform has no configuration for base (CHAINS_FILE, docs/chains.md)'] }),
    ),
    chain: Type.Enum([...WALLET_CHAINS]),
    balances: Type.Array(WalletBalanceSchema, { description: 'one per currency, usdc then eurc; zero until money arrives' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    business: applicationOf('the application that owns the wallet: an application is its own business here'),
    app: applicationOf('the application that owns the wallet'),
  },
  { $id: 'Wallet', examples: [walletExample(BASE_WALLET_EXAMPLE)] },
)
export type Wallet = Static<typeof WalletSchema>

export const WalletListSchema = Type.Object({ data: Type.Array(WalletSchema) }, { $id: 'WalletList', examples: [{ data: WALLET_EXAMPLES.map(walletExample) }] })
export type WalletList = Static<typeof WalletListSchema>
