// A page past the links cap is laid out with `word-break: break-all` from the moment its parser
// passes the cap. Why: anchors written without a break opportunity between them
// (`<a href=/p1>1</a><a href=/p2>2</a>…`) make one unbreakable word across 100,000 inline boxes,
// and Chromium's line breaker is quadratic in it. Measured on this machine: 100,000 such links kept
// the page's main thread busy for over three minutes (the load event at 62 s, the first read of the
// DOM 172 s after it); with a break opportunity at every character the same page loads and is read
// in about 4 s. Pages with up to the cap's anchors (10,000 such took under 3 s) render exactly as
// they are. The check runs in the page (an init script): an init script added once the document is
// on its way aborts the navigation, so the decision cannot wait for the recorder to see the bytes.

/** Runs in the page before its document is parsed: must not close over anything. */
export function breakAnywherePastCap(maxLinks: number): void {
  const anchors = document.getElementsByTagName('a');
  const observer = new MutationObserver(() => {
    if (anchors.length <= maxLinks) return;
    observer.disconnect();
    const sheet = new CSSStyleSheet();
    sheet.replaceSync('* { word-break: break-all !important; }');
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  });
  observer.observe(document, { childList: true, subtree: true });
}
