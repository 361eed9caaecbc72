/*
 * What other modules may use of checkout (the only file of this folder they import): the pages'
 * HTML template, which escapes every interpolated value.
 */
export { escapeHtml, Html, html } from './html.js'
