import type { Environment } from '../keys/credentials.js'

/** Who is calling: set by the auth hook on every authenticated route. */
export interface AuthContext {
  appId: string
  keyId: string
  environment: Environment
  /** the scopes the key was given (src/resources/index.ts lists them all) */
  scopes: readonly string[]
}
