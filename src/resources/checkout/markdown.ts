import { escapeHtml, Html } from './html.js'

/**
 * A payment link's description as Markdown, the small part of it a description needs: paragraphs,
 * line breaks, `-`/`*` and `1.` lists, **bold**, *italic* or _italic_, `code`, and [links](https://…)
 * (http, https and mailto only). Raw HTML is not rendered: every character of the text is escaped
 * first, so `<b>` shows as the text `<b>`.
 */
export function markdown(text: string): Html {
  const blocks = text.replace(/\r\n?/g, '\n').split(/\n\s*\n/)
  return new Html(blocks.map(block).filter((markup) => markup !== '').join('\n'))
}

const BULLET = /^\s*[-*+]\s+(.*)$/
const NUMBERED = /^\s*\d{1,9}[.)]\s+(.*)$/

function block(text: string): string {
  const lines = text.split('\n').filter((line) => line.trim() !== '')
  if (lines.length === 0) return ''
  if (lines.every((line) => BULLET.test(line))) return `<ul>${lines.map((line) => `<li>${inline(BULLET.exec(line)?.[1] ?? '')}</li>`).join('')}</ul>`
  if (lines.every((line) => NUMBERED.test(line))) return `<ol>${lines.map((line) => `<li>${inline(NUMBERED.exec(line)?.[1] ?? '')}</li>`).join('')}</ol>`
  return `<p>${lines.map((line) => inline(line.trim())).join('<br>\n')}</p>`
}

const SAFE_URL = /^(https?:\/\/|mailto:)[^\s]+$/i

/** One line: escaped, then the inline marks; code spans are taken out first so nothing inside them is a mark. */
function inline(text: string): string {
  const codes: string[] = []
  let markup = escapeHtml(text).replace(/`([^`]+)`/g, (_match, code: string) => {
    codes.push(`<code>${code}</code>`)
    return `\u0000${codes.length - 1}\u0000`
  })
  markup = markup.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (match, label: string, url: string) => {
    // The URL is already escaped: &amp; stays &amp; in the attribute, as it must.
    if (!SAFE_URL.test(url)) return match
    return `<a href="${url}" rel="nofollow noopener noreferrer">${label}</a>`
  })
  markup = markup.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>').replace(/__([^_]+)__/g, '<strong>$1</strong>')
  markup = markup.replace(/(^|[^\w*])\*([^*\s][^*]*?)\*(?!\w)/g, '$1<em>$2</em>').replace(/(^|[^\w])_([^_\s][^_]*?)_(?!\w)/g, '$1<em>$2</em>')
  return markup.replace(/\u0000(\d+)\u0000/g, (_match, index: string) => codes[Number(index)] ?? '')
}
