import { describe, expect, it } from 'vitest'
import { markdown } from '../../../src/resources/checkout/markdown.js'

/** A link's description as its page renders it: the Markdown a description needs, raw HTML as text, no way to run anything. */
describe('a description as Markdown', () => {
  it('renders paragraphs, line breaks, lists, bold, italic, code and http(s)/mailto links', () => {
    expect(markdown('Our **best** widgets\nin _teal_ and *blue*.\n\n- one\n- `two`\n\n1. first\n2. [site](https://example.com/a?b=1&c=2)').markup).toBe(
      '<p>Our <strong>best</strong> widgets<br>\nin <em>teal</em> and <em>blue</em>.</p>\n<ul><li>one</li><li><code>two</code></li></ul>\n<ol><li>first</li><li><a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener noreferrer">site</a></li></ol>',
    )
    expect(markdown('write to [us](mailto:help@example.com)').markup).toContain('<a href="mailto:help@example.com"')
  })

  const attacks = [
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(1)>',
    '<svg/onload=alert(1)>',
    '[click](javascript:alert(1))',
    '[click](JaVaScRiPt:alert(1))',
    '[click](data:text/html,<script>alert(1)</script>)',
    '[click](https://example.com/"onmouseover="alert(1))',
    '[<img src=x onerror=alert(1)>](https://example.com)',
    '**<b onclick=alert(1)>x</b>**',
    '`<script>alert(1)</script>`',
    '<a href="javascript:alert(1)">x</a>',
    '"><script>alert(1)</script>',
    '\u0000<script>alert(1)</script>\u0000',
  ]
  it.each(attacks)('%s renders no element of its own and no script URL', (attack) => {
    const markup = markdown(attack).markup
    expect(markup).not.toMatch(/<(script|img|svg|b |iframe)/i)
    expect(markup).not.toMatch(/href="(?!https?:|mailto:)/i)
    expect(markup).not.toMatch(/\son\w+="/i)
  })
})
