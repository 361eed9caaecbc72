import { Type, type Static } from 'typebox'
import { Livemode, Timestamp, UuidParam } from '../../schemas/common.js'
import { BASE_WALLET_EXAMPLE } from '../wallets/public.js'

/**
 * The examples: the drain of 13.03 USDC a sandbox deposit forced into error, its audit record once
 * an operator released it into the application's base wallet.
 */
const EXAMPLE = {
  drainId: '4b7c1e2a-8d3f-4a6b-9c0e-5f1a2b3c4d5e',
  actionId: 'a1d2c3b4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
  entryId: 'e5f4d3c2-b1a0-4f9e-8d7c-6b5a4f3e2d1c',
  by: 'ada@operations',
  reason: 'ticket 4121: the merchant asked for the deposit in their wallet',
  returnAddress: '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
} as const

const By = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', 'x-message': 'by must be 1 to 200 characters: who acts', description: 'who acts, kept in the audit record', examples: [EXAMPLE.by] })
const Reason = Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S', 'x-message': 'reason must be 1 to 1000 characters: why', description: 'why, kept in the audit record', examples: [EXAMPLE.reason] })

export const RetryBody = Type.Object({ by: By, reason: Reason }, { additionalProperties: false, examples: [{ by: EXAMPLE.by, reason: 'ticket 4122: the payout rail is back' }] })
export type RetryBody = Static<typeof RetryBody>

export const RefundBody = Type.Object(
  {
    by: By,
    reason: Reason,
    return_address: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: "where the funds go back on the deposit's chain; a drain's liquidation address without a return address is given it; required when none is known", examples: [EXAMPLE.returnAddress] }),
    ),
  },
  { additionalProperties: false, examples: [{ by: EXAMPLE.by, reason: 'ticket 4123: the sender asked for the deposit back', return_address: EXAMPLE.returnAddress }] },
)
export type RefundBody = Static<typeof RefundBody>

export const ReleaseBody = Type.Object(
  { by: By, reason: Reason, wallet_id: Type.String({ format: 'uuid', description: "the application's wallet (of the key's environment) the funds go into", examples: [BASE_WALLET_EXAMPLE.id] }) },
  { additionalProperties: false, examples: [{ by: EXAMPLE.by, reason: EXAMPLE.reason, wallet_id: BASE_WALLET_EXAMPLE.id }] },
)
export type ReleaseBody = Static<typeof ReleaseBody>

export const HELD_KINDS = ['drain', 'transfer'] as const
export const HELD_ACTIONS = ['retry', 'refund', 'release'] as const
export type HeldKind = (typeof HELD_KINDS)[number]
export type HeldActionName = (typeof HELD_ACTIONS)[number]

const ACTION_EXAMPLE = {
  id: EXAMPLE.actionId,
  target_type: 'drain',
  target_id: EXAMPLE.drainId,
  action: 'release',
  from_state: 'error',
  to_state: 'released',
  amount: '13.030000',
  currency: 'usdc',
  ledger_entry_id: EXAMPLE.entryId,
  wallet_id: BASE_WALLET_EXAMPLE.id,
  by: EXAMPLE.by,
  reason: EXAMPLE.reason,
  livemode: false,
  created_at: '2026-11-29T16:40:00.000Z',
}

export const HeldActionSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', examples: [EXAMPLE.actionId] }),
    target_type: Type.Enum([...HELD_KINDS], { examples: ['drain'] }),
    target_id: Type.String({ format: 'uuid', examples: [EXAMPLE.drainId] }),
    action: Type.Enum([...HELD_ACTIONS], { examples: ['release'] }),
    from_state: Type.String({ examples: ['error'] }),
    to_state: Type.String({ description: 'the state the action left it in', examples: ['released'] }),
    amount: Type.String({ description: 'the held amount acted on, with all of its currency\'s decimals', examples: ['13.030000'] }),
    currency: Type.String({ examples: ['usdc'] }),
    ledger_entry_id: Type.Optional(Type.String({ format: 'uuid', description: 'the ledger entry the action wrote: pending for a retry and a live refund, posted otherwise', examples: [EXAMPLE.entryId] })),
    return_address: Type.Optional(Type.String({ examples: [EXAMPLE.returnAddress] })),
    wallet_id: Type.Optional(Type.String({ format: 'uuid', examples: [BASE_WALLET_EXAMPLE.id] })),
    by: Type.String({ examples: [EXAMPLE.by] }),
    reason: Type.String({ examples: [EXAMPLE.reason] }),
    livemode: Livemode,
    created_at: Timestamp,
  },
  { $id: 'HeldAction', examples: [ACTION_EXAMPLE] },
)
export type HeldAction = Static<typeof HeldActionSchema>

const ITEM_EXAMPLE = {
  type: 'drain',
  id: EXAMPLE.drainId,
  state: 'error',
  reason: 'sandbox: the payment could not be made; it needs an operator',
  amount: '13.030000',
  currency: 'usdc',
  actions: ['retry', 'refund', 'release'],
  held_since: '2026-11-29T16:31:02.000Z',
  livemode: false,
}

export const HeldItemSchema = Type.Object(
  {
    type: Type.Enum([...HELD_KINDS], { examples: ['drain'] }),
    id: Type.String({ format: 'uuid', examples: [EXAMPLE.drainId] }),
    state: Type.String({ examples: ['error'] }),
    reason: Type.Optional(Type.String({ description: 'why it stopped', examples: [ITEM_EXAMPLE.reason] })),
    amount: Type.String({ description: "the held amount, with all of its currency's decimals", examples: ['13.030000'] }),
    currency: Type.String({ examples: ['usdc'] }),
    actions: Type.Array(Type.Enum([...HELD_ACTIONS]), { description: 'what an operator may do with it', examples: [ITEM_EXAMPLE.actions] }),
    held_since: Timestamp,
    livemode: Livemode,
  },
  { $id: 'HeldItem', examples: [ITEM_EXAMPLE] },
)
export type HeldItem = Static<typeof HeldItemSchema>

export const HeldListSchema = Type.Object({ data: Type.Array(HeldItemSchema) }, { $id: 'HeldList', examples: [{ data: [ITEM_EXAMPLE] }] })
export const HeldActionListSchema = Type.Object({ data: Type.Array(HeldActionSchema) }, { $id: 'HeldActionList', examples: [{ data: [ACTION_EXAMPLE] }] })

export const DrainIdParams = Type.Object({ heldDrainId: UuidParam('drain') })
export const TransferIdParams = Type.Object({ heldTransferId: UuidParam('transfer') })
