/** A mistake in how the command was called (or an unknown id): one line on stderr, exit 2. */
export class UsageError extends Error {}
