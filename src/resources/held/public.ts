/*
 * What other modules may use of held money (the only file of this folder they import): the list,
 * the audit and the actions, for a console page that offers them to an application's admin.
 */

export { actOnHeld, type HeldRequest, listHeld, listHeldActions } from './actions.js'
export { HELD_ACTIONS, HELD_KINDS, type HeldAction, type HeldActionName, type HeldItem, type HeldKind } from './schemas.js'
