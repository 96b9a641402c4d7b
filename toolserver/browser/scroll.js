// browser_scroll: scroll by dx, dy and say where the page is now (a function, called with them).
// init.js does it with the built-ins as they were before the page's scripts ran.
(dx, dy) => {
  if (window.__sandboxScroll) return window.__sandboxScroll(dx, dy);
  window.scrollBy(dx, dy);
  const el = document.scrollingElement || document.documentElement;
  return {x: Math.round(window.scrollX), y: Math.round(window.scrollY),
          max_x: Math.max(0, el.scrollWidth - window.innerWidth),
          max_y: Math.max(0, el.scrollHeight - window.innerHeight),
          viewport_height: window.innerHeight};
}
