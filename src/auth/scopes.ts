export const SCOPES = [
  'webhook:create',
  'webhook:read',
  'webhook:update',
  'webhook:delete',
  'customer:create',
  'customer:read',
  'customer:update',
  'liquidation_address:create',
  'liquidation_address:read',
  'tax:create',
  'tax:read',
  'tax:update',
  'tax:delete',
] as const

export type Scope = (typeof SCOPES)[number]

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}
