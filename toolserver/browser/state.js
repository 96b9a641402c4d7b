// The page's state report (title, final state, activity counters) as it is now, read by
// toolserver.browser.reports (STATE_NOW_JS; STATE_JS a task turn later). One expression, not a
// function: Playwright evaluates a function's source, then calls it (~0.5 ms more). These
// leading comment lines are not sent to the page.
({...(window.__sandboxState ? window.__sandboxState()
  : {seq: 0, top: true, title: document.title, ready: document.readyState, pending: 0, navs: 0, opens: 0,
     downloads: 0, final: null}), content_type: document.contentType})
