// Draws the ```mermaid blocks of a page (superfences writes each as <div class="mermaid">) with the mermaid
// bundle that scripts/docs.mjs copies from npm into the site, so diagrams need no network. Loaded after the
// page's content, like every extra_javascript of the theme.
(() => {
  const mermaid = window.mermaid;
  if (mermaid === undefined || document.querySelector('div.mermaid') === null) return;
  const dark = document.body.getAttribute('data-md-color-scheme') === 'slate';
  mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: dark ? 'dark' : 'default' });
  mermaid.run({ querySelector: 'div.mermaid' });
})();
