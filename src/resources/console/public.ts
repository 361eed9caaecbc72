/*
 * What other modules may use of the console (the only file of this folder they import): making a
 * link, as `devplatform console link` does.
 */
export { CONSOLE_ROLES, type ConsoleRole, createConsoleLink, DEFAULT_LINK_TTL_SECONDS, DEFAULT_ROLE, isRole, ttlSecondsOf } from './sessions.js'
