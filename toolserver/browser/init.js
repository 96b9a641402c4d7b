// Injected into every document by toolserver.browser (javascript.init_script): reports what the page does, refuses what it must not.
(() => {
  if (window.__sandboxInstalled) return; window.__sandboxInstalled = true;
  // Reports go out as console messages with a prefix (cheaper than a binding per context) that
  // holds the session's report key: a page cannot read it (no function the page can reach holds
  // it), so it cannot forge a report. console.debug and JSON.stringify are taken now, before a
  // page script could replace them.
  const debug = console.debug.bind(console), stringify = JSON.stringify;
  const prefix = '__sandbox__' + '__REPORT_KEY__' + ':';
  // A report is serialised from a copy without prototypes, so a toJSON the page puts on
  // Object.prototype or Array.prototype cannot change what it says.
  const create = Object.create, keys = Object.keys, isArray = Array.isArray, setPrototype = Object.setPrototypeOf;
  const bare = (value) => {
    if (value === null || typeof value !== 'object') return value;
    const copy = isArray(value) ? setPrototype([], null) : create(null), names = keys(value);
    for (let i = 0; i < names.length; i++) copy[names[i]] = bare(value[names[i]]);
    return copy;
  };
  const report = (kind, info) => debug(prefix + stringify(bare({kind, info})));
  // The page's own console messages go nowhere: the sandbox reads none of them, and each would
  // cross the one Playwright driver and the one event loop every run shares (a page flooding its
  // console would slow every other run). The reports above keep the original console.debug.
  const quiet = () => undefined;
  for (const name of ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir', 'dirxml', 'table', 'assert',
      'count', 'countReset', 'group', 'groupCollapsed', 'groupEnd', 'time', 'timeLog', 'timeEnd', 'timeStamp']) {
    try { console[name] = quiet; } catch (e) {}
  }
  document.addEventListener('submit', (event) => {
    const form = event.target;
    const info = {action: form.action || '', method: (form.method || 'get').toUpperCase()};
    if (window.__sandboxBlockStateChanges) { event.preventDefault(); info.blocked = true; }
    report('form_submission', info);
  }, true);
  // What the page is doing, so the sandbox waits exactly as long as it is busy (no fixed pause):
  // scripted requests until their answers were read and handled (a task turn after the body was
  // read), and the navigations, popups and downloads it started.
  const net = window.__sandboxNet = {pending: 0, navs: 0, opens: 0, downloads: 0, seq: 0};
  const top = window === window.top;
  const finalState = () => {
    for (const el of document.querySelectorAll('[data-sandbox-final-state]')) {
      if (el.checkVisibility()) return el.getAttribute('data-sandbox-final-state');
    }
    return null;
  };
  // A meta refresh of 0 s starts a navigation right after the load: it is part of loading.
  const refreshing = () => {
    const meta = document.querySelector('meta[http-equiv="refresh" i]');
    return !!meta && /^\s*0*(\.0*)?\s*($|[;,])/.test(meta.content || '');
  };
  const state = () => ({seq: ++net.seq, top, title: document.title, type: document.contentType,
                        ready: document.readyState, pending: net.pending, navs: net.navs, opens: net.opens,
                        downloads: net.downloads, final: finalState(), refresh: refreshing(),
                        paint: window.__sandboxShots ? paint() : null});
  Object.defineProperty(window, '__sandboxState', {value: state});
  // Whether the viewport can look different since the last picture (toolserver.media): asked at
  // a screenshot, read with a snapshot, and part of each state report while the run keeps
  // screenshots; the first ask starts counting what can change it (DOM, scroll, focus, input,
  // loads, animations), so a page pays nothing while screenshots are off.
  // The DOM functions it uses are taken now, before a page script could replace them.
  const doc = Math.random().toString(36).slice(2);
  const Observer = MutationObserver, listen = EventTarget.prototype.addEventListener;
  const query = Document.prototype.querySelector, animations = Document.prototype.getAnimations;
  let changes = null;
  const paint = () => {
    if (changes === null) {
      changes = 0;
      const touch = () => { changes++; };
      new Observer(touch).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
      for (const type of ['scroll', 'resize', 'input', 'change', 'focusin', 'focusout', 'load', 'error',
                          'pointerover', 'pointerout', 'transitionrun', 'animationstart', 'animationiteration',
                          'hashchange', 'popstate'])   // a new :target restyles with no DOM change
        listen.call(window, type, touch, true);
      listen.call(document, 'selectionchange', touch);
    }
    const still = document.readyState === 'complete' && (!document.fonts || document.fonts.status === 'loaded')
      && Array.prototype.every.call(document.images, (img) => img.complete)
      && !query.call(document, 'canvas, video, iframe, frame, embed, object, marquee')
      && !animations.call(document).some((a) => a.playState === 'running');
    return {doc, mark: changes, still};
  };
  Object.defineProperty(window, '__sandboxPaint', {value: paint});
  const begin = () => { net.pending++; };
  const end = () => setTimeout(() => {
    net.pending = Math.max(0, net.pending - 1);
    if (!net.pending && document.readyState === 'complete') report('idle', state());
  }, 0);
  // The load is reported once the page's own load listeners ran (they may start requests): from
  // a pageshow listener added during the load, so after the page's own, which Chromium fires in
  // the same task right after the load (a task turn later, as a fallback, if it did not).
  let shown = false;
  const loaded = () => { if (!shown) { shown = true; report('loaded', state()); } };
  window.addEventListener('load', () => {
    listen.call(window, 'pageshow', (event) => { if (event.isTrusted) loaded(); }, {once: true});
    setTimeout(loaded, 0);
  });
  // Typing (a trusted input event) is reported once the page's own handlers have run, with the
  // field's value then: the sandbox need not ask the page again.
  window.addEventListener('input', (event) => {
    if (event.isTrusted) report('input', {...state(), value: 'value' in event.target ? event.target.value : null});
  });
  // A click on a control marked as a state-changing action (the marker on it or around it) is
  // reported as it happens, so a click the sandbox sent is checked even if it acted after its
  // call had failed. A run that blocks state changes checks the marker before it clicks instead.
  const getAttribute = Element.prototype.getAttribute, composedPath = Event.prototype.composedPath;
  listen.call(window, 'click', (event) => {
    if (!event.isTrusted || window.__sandboxBlockStateChanges) return;
    for (const node of composedPath.call(event)) {
      const name = node.nodeType === 1 ? getAttribute.call(node, 'data-sandbox-state-change') : null;
      if (name !== null) {
        report('marked_click', {name, tag: node.localName, text: (node.textContent || '').trim().slice(0, 80)});
        return;
      }
    }
  }, true);
  if (window.fetch) {
    const fetch = window.fetch;
    const reads = ['json', 'text', 'arrayBuffer', 'blob', 'formData', 'bytes'];
    window.fetch = function (...args) {
      begin();
      let ended = false, reading = false;
      const finish = () => { if (!ended) { ended = true; end(); } };
      return fetch.apply(this, args).then((response) => {
        for (const name of reads) {
          const read = response[name];
          if (typeof read !== 'function') continue;
          response[name] = function (...a) {
            reading = true; const p = read.apply(this, a); p.then(finish, finish); return p;
          };
        }
        setTimeout(() => { if (!reading) finish(); }, 0);   // an answer whose body is never read
        return response;
      }, (error) => { finish(); throw error; });
    };
  }
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    begin(); this.addEventListener('loadend', end, {once: true}); return send.apply(this, args);
  };
  if (window.navigation) {
    navigation.addEventListener('navigate', (event) => {
      if (event.downloadRequest !== null) net.downloads++;
      else if (!event.destination.sameDocument && /^https?:/.test(event.destination.url)) net.navs++;
    });
  }
  // Popups that load an http(s) document (about:blank ones have nothing to wait for).
  const loads = (url) => {
    try { return /^https?:$/.test(new URL(url, location.href).protocol); } catch (e) { return false; }
  };
  // A document opens at most __MAX_POPUPS__ windows (the session's tab cap): beyond it open()
  // returns null at once and is reported, so a page cannot bury the browser in new windows.
  const open = window.open;
  let popups = 0;
  window.open = function (...args) {
    if (popups >= __MAX_POPUPS__) {
      report('popup_refused', {url: String(args[0] ?? '')});
      return null;
    }
    popups++;
    const opened = open.apply(this, args);
    if (opened && args[0] && loads(String(args[0]))) net.opens++;
    return opened;
  };
  window.addEventListener('click', (event) => {
    const link = event.target instanceof Element && event.target.closest('a[href][target]');
    if (link && !event.defaultPrevented && !['', '_self', '_parent', '_top'].includes(link.target.toLowerCase())
        && loads(link.href)) net.opens++;
  });
  // WebRTC could send UDP past the router and the proxy (Chromium also runs with non-proxied UDP
  // disabled): the API is removed, and each attempt is recorded as a blocked request.
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection']) {
    if (!window[name]) continue;
    const refuse = function (config) {
      const urls = ((config && config.iceServers) || []).flatMap((s) => [].concat(s.urls || s.url || []));
      report('webrtc', {urls: urls.map(String)});
      throw new DOMException('WebRTC is blocked in the offline sandbox', 'NotAllowedError');
    };
    try { Object.defineProperty(window, name, {value: refuse, configurable: false, writable: false}); } catch (e) {}
  }
  // Service workers are blocked; record each registration attempt instead of letting it fail silently.
  if (navigator.serviceWorker) {
    const register = (url) => {
      report('service_worker', {url: String(url)});
      return Promise.reject(new DOMException('service workers are blocked in the offline sandbox', 'SecurityError'));
    };
    try { Object.defineProperty(navigator.serviceWorker, 'register', {value: register}); } catch (e) {}
  }
})();
