import { Type, type Static } from 'typebox'
import { CHAIN_TOKENS, EVM_CHAINS } from '../../chains/config.js'
import { Livemode, Pagination, Timestamp, UuidParam } from '../../schemas/common.js'

const EXAMPLE = {
  id: '6f1d2c4b-8a3e-4f5d-9b7c-2e1a0d9c8b7a',
  address: '0x8ba1f109551bd432803012645ac136ddd64dba72',
  createdAt: '2026-01-15T10:00:00.000Z',
} as const

export const ReceivingAddressSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', examples: [EXAMPLE.id] }),
    address: Type.String({ description: 'lower-case 0x address: give it as `address` when creating a liquidation address on the same chain and currency', examples: [EXAMPLE.address] }),
    chain: Type.Enum([...EVM_CHAINS]),
    currency: Type.Enum([...CHAIN_TOKENS]),
    livemode: Livemode,
    liquidation_address_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'the liquidation address that took it; null until one does' }),
    created_at: { ...Timestamp, examples: [EXAMPLE.createdAt] },
  },
  { $id: 'ReceivingAddress' },
)
export type ReceivingAddress = Static<typeof ReceivingAddressSchema>

export const CreateReceivingAddressBody = Type.Object(
  {
    chain: Type.Enum([...EVM_CHAINS], { description: 'an EVM chain; live, one the platform receives on (docs/chains.md)' }),
    currency: Type.Enum([...CHAIN_TOKENS]),
  },
  { additionalProperties: false, examples: [{ chain: 'base', currency: 'usdc' }] },
)
export type CreateReceivingAddressBody = Static<typeof CreateReceivingAddressBody>

export const ReceivingAddressParams = Type.Object({ id: UuidParam('receiving address') })

export const ListReceivingAddressesQuery = Type.Object({ ...Pagination }, { additionalProperties: false })

export const ReceivingAddressListSchema = Type.Object(
  { data: Type.Array(ReceivingAddressSchema), total: Type.Integer({ examples: [1] }), skip: Type.Integer({ examples: [0] }), take: Type.Integer({ examples: [10] }) },
  { $id: 'ReceivingAddressList' },
)
