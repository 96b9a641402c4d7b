// The page's state report (title, type, final state, activity counters), read by
// toolserver.browser.reports: as it is now (__TURN__ false: STATE_NOW_JS), or a task turn later
// (true: STATE_JS). init.js makes it; a document without init.js gets a plain one. One
// expression, not a function: Playwright evaluates a function's source, then calls it (~0.5 ms
// more). These leading comment lines are not sent to the page.
(window.__sandboxState ? window.__sandboxState(__TURN__)
  : {seq: 0, top: true, title: document.title, type: document.contentType, ready: document.readyState, pending: 0,
     navs: 0, opens: 0, downloads: 0, closes: 0, final: null})
