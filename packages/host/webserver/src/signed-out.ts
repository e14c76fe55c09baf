// The page a person sees when a page load is refused for want of a sign-in (a reload of a signed-out tab,
// an expired or used link): what happened and what to do, styled, with no script (docs/security.md, "Web").

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The refusal as a small HTML page; `message` is the host's own text (escaped all the same). */
export function signedOutPage(message: string): string {
  const why = escapeHtml(message.replace(/^refused: /, '')).replace(/`([^`]+)`/g, '<code>$1</code>')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>dsh web: signed out</title>
<style>
  :root { color-scheme: light dark; font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: #f7f7f8; color: #1c1d22; }
  main { max-width: 34rem; margin: 1.5rem; padding: 1.75rem 2rem; background: #fff; border: 1px solid #e3e4e8; border-radius: 10px; box-shadow: 0 1px 3px rgba(0,0,0,.06); }
  h1 { font-size: 1.15rem; margin: 0 0 .75rem; }
  p { line-height: 1.5; margin: .5rem 0; }
  code { font-family: ui-monospace, Menlo, Consolas, monospace; background: #f0f0f3; padding: .05rem .3rem; border-radius: 4px; }
  ol { padding-left: 1.25rem; line-height: 1.6; }
  .why { color: #6b6e7b; font-size: .9rem; }
  @media (prefers-color-scheme: dark) { body { background: #16171b; color: #e6e6ea; } main { background: #1f2026; border-color: #2e3038; } code { background: #2a2c33; } .why { color: #9a9cab; } }
</style></head>
<body><main data-testid="signed-out">
<h1>This browser is not signed in to dsh web</h1>
<ol>
  <li>In a terminal, run <code>dsh web</code> (or press Enter in the terminal where it already runs).</li>
  <li>Open the sign-in link it prints, in this browser.</li>
</ol>
<p class="why">${why}</p>
</main></body></html>
`
}
