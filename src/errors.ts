/**
 * Why the domain refused what was asked, with nothing changed: what domain code (the ledger,
 * repositories, each resource's rules and lifecycle) throws. It knows nothing of HTTP; the one
 * error handler (src/http/error-handler.ts) chooses each kind's answer, with the message as its
 * text.
 */
export abstract class DomainError extends Error {
  abstract readonly kind: 'invalid-request' | 'not-found' | 'conflict'

  constructor(message: string) {
    super(message)
    this.name = new.target.name
  }
}

/** The input breaks a rule: a field out of range, a combination not allowed, a reference to nothing usable. */
export class InvalidRequest extends DomainError {
  readonly kind = 'invalid-request'
}

/** What the request names does not exist (for this application). */
export class NotFound extends DomainError {
  readonly kind = 'not-found'
}

/** The state of what exists forbids it: a transition not allowed, a limit reached, a unique value taken. */
export class Conflict extends DomainError {
  readonly kind = 'conflict'
}
