// Injected into every document by toolserver.browser (javascript.init_script): reports what the page does, refuses what it must not.
(() => {
  if (window.__sandboxInstalled) return;
  // It runs before any script of the page, and takes now every built-in it uses later (functions,
  // getters, constructors): a page that replaces or breaks them (Document.prototype.title,
  // querySelectorAll, setTimeout, Promise, Function.prototype.call, JSON.stringify ...) changes
  // neither what the sandbox reads nor when it thinks the page is done. The run's switches are
  // constants, and what the sandbox calls is defined read-only on window.
  const define = Object.defineProperty, describe = Object.getOwnPropertyDescriptor, apply = Reflect.apply;
  define(window, '__sandboxInstalled', {value: true});
  const BLOCK_STATE_CHANGES = __BLOCK_STATE_CHANGES__, SHOTS = __SHOTS__;
  // Text the page makes (a title, a URL) is cut at this length before it leaves the page, and a
  // navigation to a longer URL is refused: Chromium's one browser process, which every run
  // shares, took about a second for each 2 MB URL a page set with history.replaceState.
  const MAX_TEXT = __MAX_PAGE_TEXT_CHARS__;
  // method(proto, name)(self, ...args) and getter(proto, name)(self) call the built-in itself.
  const method = (proto, name) => { const f = proto[name]; return (self, ...args) => apply(f, self, args); };
  const getter = (proto, name) => { const get = describe(proto, name).get; return (self) => apply(get, self, []); };
  const later = setTimeout, max = Math.max, Url = URL;
  const Exception = DOMException;
  const then = method(Promise.prototype, 'then'), reject = Promise.reject.bind(Promise), Promise_ = Promise;
  const listen = method(EventTarget.prototype, 'addEventListener'), exec = RegExp.prototype.exec;
  // A pattern that keeps its own exec: test() looks exec up on the pattern, which a page can replace.
  const pattern = (source, flags) => define(new RegExp(source, flags), 'exec', {value: exec});
  const test = method(RegExp.prototype, 'test');
  const lower = method(String.prototype, 'toLowerCase'), upper = method(String.prototype, 'toUpperCase');
  const trim = method(String.prototype, 'trim'), slice = method(String.prototype, 'slice');
  const doc = Document.prototype;
  const titleOf = getter(doc, 'title'), readyOf = getter(doc, 'readyState'), typeOf = getter(doc, 'contentType');
  const imagesOf = getter(doc, 'images'), fontsOf = getter(doc, 'fonts');
  const queryAll = method(doc, 'querySelectorAll'), query = method(doc, 'querySelector');
  const animations = method(doc, 'getAnimations');
  const nodesIn = getter(NodeList.prototype, 'length'), itemsIn = getter(HTMLCollection.prototype, 'length');
  const visible = method(Element.prototype, 'checkVisibility'), getAttribute = method(Element.prototype, 'getAttribute');
  const localName = getter(Element.prototype, 'localName');
  const nodeType = getter(Node.prototype, 'nodeType'), textOf = getter(Node.prototype, 'textContent');
  const fontStatus = getter(FontFaceSet.prototype, 'status'), complete = getter(HTMLImageElement.prototype, 'complete');
  const playState = getter(Animation.prototype, 'playState'), metaContent = getter(HTMLMetaElement.prototype, 'content');
  const target = getter(Event.prototype, 'target'), composedPath = method(Event.prototype, 'composedPath');
  const prevented = getter(Event.prototype, 'defaultPrevented'), preventDefault = method(Event.prototype, 'preventDefault');
  const formAction = getter(HTMLFormElement.prototype, 'action'), formMethod = getter(HTMLFormElement.prototype, 'method');
  const protocolOf = getter(Url.prototype, 'protocol'), urlText = getter(Url.prototype, 'href');
  const searchSet = describe(Url.prototype, 'search').set, setSearch = (url, text) => apply(searchSet, url, [text]);
  const Fields = FormData, Params = URLSearchParams, paramsText = method(URLSearchParams.prototype, 'toString');
  const submitterOf = getter(SubmitEvent.prototype, 'submitter'), hasAttribute = method(Element.prototype, 'hasAttribute');
  const formTarget = getter(HTMLFormElement.prototype, 'target');  // baseOf: below
  const observe = method(MutationObserver.prototype, 'observe'), Observer = MutationObserver;
  const fetch = window.fetch, open = window.open, xhr = XMLHttpRequest.prototype;
  const send = xhr.send, reopen = xhr.open, abort = xhr.abort;
  const sent = new WeakMap(), sentNow = method(WeakMap.prototype, 'get'), mark = method(WeakMap.prototype, 'set');
  const view = (name) => getter(window, name);  // the window's own attributes (a page may shadow them)
  const scrollX = view('scrollX'), scrollY = view('scrollY'), innerWidth = view('innerWidth');
  const innerHeight = view('innerHeight'), scrollBy = method(window, 'scrollBy');
  const scrollingElement = getter(doc, 'scrollingElement'), documentElement = getter(doc, 'documentElement');
  const scrollWidth = getter(Element.prototype, 'scrollWidth'), scrollHeight = getter(Element.prototype, 'scrollHeight');
  const round = Math.round;
  // Reports go out as console messages with a prefix (cheaper than a binding per context) that
  // holds the session's report key: a page cannot read it (no function the page can reach holds
  // it), so it cannot forge a report.
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
  // What the page tried and was refused is reported one by one for the first 20 tries of each
  // kind in a document, then as counts at most five times a second: a page trying in a loop must
  // not flood the one driver every run shares.
  const tries = create(null), untold = create(null);
  const refused = (kind, info) => {
    tries[kind] = (tries[kind] || 0) + 1;
    if (tries[kind] <= 20) return report(kind, info);
    if (untold[kind]) return void untold[kind].count++;
    untold[kind] = {info, count: 1};
    later(() => { const held = untold[kind]; untold[kind] = null; report(kind, {...held.info, untold: held.count}); }, 200);
  };
  // The page's own console messages go nowhere: the sandbox reads none of them, and each would
  // cross the one Playwright driver and the one event loop every run shares (a page flooding its
  // console would slow every other run). The reports above keep the original console.debug.
  const quiet = () => undefined;
  for (const name of ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir', 'dirxml', 'table', 'assert',
      'count', 'countReset', 'group', 'groupCollapsed', 'groupEnd', 'time', 'timeLog', 'timeEnd', 'timeStamp']) {
    try { console[name] = quiet; } catch (e) {}
  }
  // The page's uncaught errors and unhandled rejections go nowhere either: Chromium hands each to the
  // driver (message and stack), read or not, and a page throwing 2 MB errors in a loop would hold
  // the driver every run shares. A cancelled error event is not reported; the page's own listeners
  // still see it.
  for (const type of ['error', 'unhandledrejection']) {
    listen(window, type, (event) => { if (event.isTrusted && target(event) === window) preventDefault(event); }, true);
  }
  // On window, in the capture phase, and first of all: no listener of the page comes before it.
  // A blocked submission never reaches the router, so its report says the URL it would have
  // requested (its submitter's formaction and formmethod count; a GET's query is its fields), which
  // the sandbox checks against the allow-list, and whether it would have navigated this frame only.
  const attribute = (node, name) => node && hasAttribute(node, name) ? getAttribute(node, name) : null;
  const submission = (form, submitter, info) => {
    try {
      const action = attribute(submitter, 'formaction'), verb = upper(attribute(submitter, 'formmethod') ?? info.method);
      const url = action === null ? new Url(info.action) : new Url(action, baseOf(form));
      if (verb === 'DIALOG') return info;  // closes a dialog: no request
      if (verb !== 'POST') setSearch(url, '?' + paramsText(new Params(submitter ? new Fields(form, submitter) : new Fields(form))));
      const aimed = lower(attribute(submitter, 'formtarget') ?? formTarget(form) ?? '');
      info.url = urlText(url);
      info.frame = !top && (aimed === '' || aimed === '_self');
    } catch (e) {}
    return info;
  };
  listen(window, 'submit', (event) => {
    if (!event.isTrusted) return;  // one the page dispatched submits nothing (isTrusted is the event's own, unforgeable)
    const form = target(event);
    const info = {action: formAction(form) || '', method: upper(formMethod(form) || 'get')};
    if (BLOCK_STATE_CHANGES) { preventDefault(event); info.blocked = true; submission(form, submitterOf(event), info); }
    report('form_submission', info);
  }, true);
  // form.submit() fires no submit event: the method itself reports it (and, blocking, refuses it).
  const submitForm = method(HTMLFormElement.prototype, 'submit');
  define(HTMLFormElement.prototype, 'submit', {configurable: true, writable: true, value: function submit() {
    const info = {action: formAction(this) || '', method: upper(formMethod(this) || 'get'), scripted: true};
    if (BLOCK_STATE_CHANGES) { info.blocked = true; submission(this, null, info); }
    report('form_submission', info);
    if (!BLOCK_STATE_CHANGES) submitForm(this);
  }});
  // What the page is doing, so the sandbox waits exactly as long as it is busy (no fixed pause):
  // scripted requests until their answers were read and handled (a task turn after the body was
  // read), and the navigations, popups and downloads it started.
  const net = {pending: 0, navs: 0, opens: 0, downloads: 0, closes: 0, clicks: 0, seq: 0};
  const top = window === window.top;
  const finalState = () => {
    const marked = queryAll(document, '[data-sandbox-final-state]');
    for (let i = 0; i < nodesIn(marked); i++) {
      if (visible(marked[i])) return getAttribute(marked[i], 'data-sandbox-final-state');
    }
    return null;
  };
  // A meta refresh of 0 s starts a navigation right after the load: it is part of loading.
  const zeroSeconds = pattern('^\\s*0*(\\.0*)?\\s*($|[;,])');
  const refreshing = () => {
    const meta = query(document, 'meta[http-equiv="refresh" i]');
    return !!meta && test(zeroSeconds, metaContent(meta) || '');
  };
  const cut = (text) => text.length > MAX_TEXT ? slice(text, 0, MAX_TEXT) : text;
  const title = () => cut(titleOf(document));
  const state = () => ({seq: ++net.seq, top, title: title(), type: typeOf(document),
                        ready: readyOf(document), pending: net.pending, navs: net.navs, opens: net.opens,
                        downloads: net.downloads, closes: net.closes, clicks: net.clicks, final: finalState(),
                        refresh: refreshing(), paint: SHOTS ? paint() : null});
  // The state report (toolserver.browser.reports): now, or (later) a task turn from now, when
  // what the last input event started (timers of 0 ms, promise chains) has begun.
  define(window, '__sandboxState', {value: (turn) => turn
    ? new Promise_((resolve) => { later(() => resolve(state()), 0); }) : state()});
  // The page's type and title (browser_snapshot), with the paint key while the run keeps screenshots.
  define(window, '__sandboxInfo', {value: () => ({content_type: typeOf(document), title: title(),
                                                  paint: SHOTS ? paint() : null})});
  define(window, '__sandboxTitle', {value: title});   // another tab's title, in a tab list
  // browser_scroll: scroll by dx, dy and say where the page is now.
  define(window, '__sandboxScroll', {value: (dx, dy) => {
    scrollBy(window, dx, dy);
    const el = scrollingElement(document) || documentElement(document);
    return {x: round(scrollX(window)), y: round(scrollY(window)),
            max_x: max(0, scrollWidth(el) - innerWidth(window)), max_y: max(0, scrollHeight(el) - innerHeight(window)),
            viewport_height: innerHeight(window)};
  }});
  // Whether the viewport can look different since the last picture (toolserver.media): asked at
  // a screenshot, read with a snapshot, and part of each state report while the run keeps
  // screenshots; the first ask starts counting what can change it (DOM, scroll, focus, input,
  // loads, animations), so a page pays nothing while screenshots are off.
  const docId = slice(Math.random().toString(36), 2);
  let changes = null;
  const paint = () => {
    if (changes === null) {
      changes = 0;
      const touch = () => { changes++; };
      observe(new Observer(touch), document, {subtree: true, childList: true, attributes: true, characterData: true});
      for (const type of ['scroll', 'resize', 'input', 'change', 'focusin', 'focusout', 'load', 'error',
                          'pointerover', 'pointerout', 'transitionrun', 'animationstart', 'animationiteration',
                          'hashchange', 'popstate'])   // a new :target restyles with no DOM change
        listen(window, type, touch, true);
      listen(document, 'selectionchange', touch);
    }
    let still = readyOf(document) === 'complete';
    const fonts = fontsOf(document), images = imagesOf(document), running = animations(document);
    if (still && fonts) still = fontStatus(fonts) === 'loaded';
    for (let i = 0; still && i < itemsIn(images); i++) still = complete(images[i]);
    still = still && !query(document, 'canvas, video, iframe, frame, embed, object, marquee');
    for (let i = 0; still && i < running.length; i++) still = playState(running[i]) !== 'running';
    return {doc: docId, mark: changes, still};
  };
  define(window, '__sandboxPaint', {value: paint});
  const begin = () => { net.pending++; };
  const end = () => later(() => {
    net.pending = max(0, net.pending - 1);
    if (!net.pending && readyOf(document) === 'complete') report('idle', state());
  }, 0);
  // The load is reported once the page's own load listeners ran (they may start requests): from
  // a pageshow listener added during the load, so after the page's own, which Chromium fires in
  // the same task right after the load (a task turn later, as a fallback, if it did not).
  let shown = false;
  const loaded = () => { if (!shown) { shown = true; report('loaded', state()); } };
  listen(window, 'load', () => {
    listen(window, 'pageshow', (event) => { if (event.isTrusted) loaded(); }, {once: true});
    later(loaded, 0);
  });
  // Typing (a trusted input event) is reported once the page's own handlers have run, with the
  // field's value then: the sandbox need not ask the page again. A value the page will not give
  // (it broke the field's getter) is reported unread: the sandbox then reads the field itself.
  listen(window, 'input', (event) => {
    if (!event.isTrusted) return;
    let value = null, unread = false;
    try { const field = target(event); value = 'value' in field ? field.value : null; } catch (e) { unread = true; }
    if (value !== null && typeof value !== 'string') unread = true, value = null;
    report('input', {...state(), value, ...(unread ? {value_unread: true} : {})});
  });
  // Trusted clicks are counted (the state report's clicks): a click whose call outlasted its
  // timeout after it was sent acted if the count rose. A click on a control marked as a
  // state-changing action (the marker on it or around it) is reported as it happens, so a click
  // the sandbox sent is checked even if it acted after its call had failed. A run that blocks
  // state changes checks the marker before it clicks instead.
  listen(window, 'click', (event) => {
    if (!event.isTrusted) return;
    net.clicks++;
    if (BLOCK_STATE_CHANGES) return;
    const path = composedPath(event);
    for (let i = 0; i < path.length && path[i] !== window; i++) {  // the path ends with the window, no node
      const node = path[i];
      const name = nodeType(node) === 1 ? getAttribute(node, 'data-sandbox-state-change') : null;
      if (name !== null) {
        report('marked_click', {name, tag: localName(node), text: slice(trim(textOf(node) || ''), 0, 80)});
        return;
      }
    }
  }, true);
  if (fetch) {
    const reads = ['json', 'text', 'arrayBuffer', 'blob', 'formData', 'bytes'];
    window.fetch = function (...args) {
      begin();
      let ended = false, reading = false;
      const finish = () => { if (!ended) { ended = true; end(); } };
      let answer;
      try { answer = apply(fetch, this, args); } catch (error) { finish(); throw error; }
      return then(answer, (response) => {
        for (let i = 0; i < reads.length; i++) {   // no iterator: the page may have replaced it
          const name = reads[i], read = response[name];
          if (typeof read !== 'function') continue;
          response[name] = function (...a) {
            reading = true;
            let body;
            try { body = apply(read, this, a); } catch (error) { finish(); throw error; }
            try { then(body, finish, finish); } catch (e) { finish(); }   // not a promise: read already
            return body;
          };
        }
        later(() => { if (!reading) finish(); }, 0);   // an answer whose body is never read
        return response;
      }, (error) => { finish(); throw error; });
    };
  }
  // A request counts from send() to its loadend, or to whatever ends it without one, exactly once:
  // send() throwing (not opened, sent already, a synchronous request that failed), open() again
  // or abort() on it. ``sent``: a request the page sent -> whether it is in flight now. A loadend
  // is the request's own only in state DONE: one that comes after the page opened the request
  // again (from its load handler) belongs to the request before, which open() ended already.
  const xhrEnded = (request) => { if (sentNow(sent, request)) { mark(sent, request, false); end(); } };
  const readyState = getter(xhr, 'readyState');
  const loadEnded = (request) => { if (readyState(request) === 4) xhrEnded(request); };
  xhr.send = function (...args) {
    if (sentNow(sent, this) === undefined) { const request = this; listen(this, 'loadend', () => loadEnded(request)); }
    if (sentNow(sent, this)) return apply(send, this, args);   // sent already: it throws, and counts once
    begin(); mark(sent, this, true);
    try { return apply(send, this, args); } catch (error) { xhrEnded(this); throw error; }
  };
  xhr.open = function (...args) { xhrEnded(this); return apply(reopen, this, args); };
  xhr.abort = function (...args) { xhrEnded(this); return apply(abort, this, args); };
  if (window.navigation) {
    const destination = getter(NavigateEvent.prototype, 'destination');
    const download = getter(NavigateEvent.prototype, 'downloadRequest');
    const sameDocument = getter(NavigationDestination.prototype, 'sameDocument');
    const destinationUrl = getter(NavigationDestination.prototype, 'url');
    const cancelable = getter(Event.prototype, 'cancelable');
    const web = pattern('^https?:');
    listen(navigation, 'navigate', (event) => {
      const to = destination(event), url = destinationUrl(to);
      if (url.length > MAX_TEXT && cancelable(event)) {   // history.pushState, location.hash, links ...
        preventDefault(event);
        refused('url_refused', {url: slice(url, 0, 1024), length: url.length});
        return;
      }
      if (download(event) !== null) net.downloads++;
      else if (!sameDocument(to) && test(web, url)) net.navs++;
    });
  }
  // Popups that load an http(s) document (about:blank ones have nothing to wait for).
  const webProtocol = pattern('^https?:$');
  const loads = (url) => {
    try { return test(webProtocol, protocolOf(new Url(url, location.href))); } catch (e) { return false; }
  };
  const text = String;
  // A document opens at most __MAX_POPUPS__ windows (the session's tab cap): beyond it open()
  // returns null at once and is reported, so a page cannot bury the browser in new windows.
  let popups = 0;
  const named = create(null);  // the windows this document opened by name: a link naming one still open opens none
  window.open = function (...args) {
    const url = text(args[0] ?? '');
    if (url.length > MAX_TEXT) {
      refused('url_refused', {url: slice(url, 0, 1024), length: url.length, popup: true});
      return null;
    }
    if (popups >= __MAX_POPUPS__) {
      refused('popup_refused', {url});
      return null;
    }
    popups++;
    if (args[1] !== undefined) args[1] = text(args[1]);  // one string, the one Chromium is given
    const opened = apply(open, this, args);
    if (opened && args[1] !== undefined) named[args[1]] = opened;
    // A new window is its own top; a frame or window the page named already opens no new tab.
    let fresh = false;
    try { fresh = !!opened && opened.top === opened && opened !== window.top; } catch (e) {}
    if (fresh && args[0] && loads(text(args[0]))) net.opens++;
    return opened;
  };
  // window.close() of this top window, counted so the sandbox waits for its tab to close, and
  // reported, so the sandbox records the close as the page's (a tab whose browser died closes
  // unreported). Chromium closes only a window a script opened or one with a single history entry;
  // any other is not counted (a popup opened with noopener that navigated since is closed, not waited for).
  const closeWindow = window.close, opener = getter(window, 'opener'), history_ = window.history;
  const historyLength = getter(History.prototype, 'length');
  window.close = function close() {
    const closable = () => !!opener(window) || historyLength(history_) === 1;
    if (top && (this === undefined || this === window) && closable()) { net.closes++; report('closing', {}); }
    return apply(closeWindow, this === undefined ? window : this, []);
  };
  // A link that opens a new window counts against the same cap: a script clicking one in a loop
  // made a page for each, which Chromium made before the session closed it. Counted as the click
  // begins, given back if the page prevented it by the time the click reaches the window, refused
  // past the cap. A link (a, area, SVG a, in an open shadow root too) opens a new window when its
  // target, or its document's <base target>, is _blank or a name of no frame of the page, no window
  // this document opened and still open under that name, and not this window's own. The count is
  // best-effort: a page can change a link's target as it is clicked, click one with a
  // non-cancelable event, click a detached link or one in a closed shadow root, send a form to a
  // new window; the session's tab cap closes what those open.
  const baseOf = getter(Node.prototype, 'baseURI'), matches = method(Element.prototype, 'matches');
  const LINK = 'a[href], area[href], a[*|href]';
  const linkOf = (event) => {
    const path = composedPath(event);
    for (let i = 0; i < path.length && path[i] !== window; i++) {  // the path ends with the window, no node
      const node = path[i];
      if (nodeType(node) === 1 && matches(node, LINK)) return node;
    }
    return null;
  };
  const hrefOf = (link) => {
    const raw = getAttribute(link, 'href') ?? getAttribute(link, 'xlink:href') ?? '';
    try { return text(new Url(raw, baseOf(link))); } catch (e) { return ''; }
  };
  // A frame of the page named so: this document's frame elements (a cross-origin one too), then
  // the top window and its frames and theirs, each name read on its own (a cross-origin window's
  // cannot be read: its frames can still be searched).
  const frameElementNamed = (name) => {
    const frames = queryAll(document, 'iframe[name], frame[name]');
    for (let i = 0; i < nodesIn(frames); i++) if (getAttribute(frames[i], 'name') === name) return true;
    return false;
  };
  const windowNamed = (name, win, depth) => {
    try { if (win.name === name) return true; } catch (e) {}
    let count = 0;
    try { count = win.length; } catch (e) { return false; }
    for (let i = 0; i < count && i < 100; i++) {
      try { if (depth < 5 && windowNamed(name, win[i], depth + 1)) return true; } catch (e) {}
    }
    return false;
  };
  const targetOf = (link) => {
    const base = query(document, 'base[target]');
    return getAttribute(link, 'target') ?? (base ? getAttribute(base, 'target') : '') ?? '';
  };
  const opensWindow = (link) => {
    const where = targetOf(link), special = lower(where);
    if (special === '_blank') return true;
    if (special === '' || special === '_self' || special === '_parent' || special === '_top') return false;
    const mine = named[where];
    if (mine) {
      try { if (!mine.closed && mine.name === where) return false; } catch (e) { return false; }  // cross-origin now: still its
    }
    return !(frameElementNamed(where) || windowNamed(where, window.top, 0));
  };
  const counted = new WeakMap();
  const giveBack = (event) => {  // the page kept the link from opening: its count is given back, once
    if (!sentNow(counted, event)) return;  // not a counted click (nor, called on anything, an event)
    if (prevented(event)) popups--;
    mark(counted, event, false);
  };
  // A handler that prevents the click then stops it (jQuery's return false) keeps it from the window:
  // given back as it stops it. One that stops it first and prevents it later keeps its count spent.
  for (const name of ['stopPropagation', 'stopImmediatePropagation']) {
    const stop = Event.prototype[name];
    define(Event.prototype, name, {value: {[name](...args) { giveBack(this); return apply(stop, this, args); }}[name],
      writable: true, configurable: true});
  }
  listen(window, 'click', (event) => {
    const link = linkOf(event);
    if (!link || !opensWindow(link)) return;
    if (popups >= __MAX_POPUPS__) {
      preventDefault(event);
      refused('popup_refused', {url: slice(hrefOf(link), 0, 1024)});
      return;
    }
    popups++;
    mark(counted, event, true);
  }, true);
  listen(window, 'click', (event) => {
    giveBack(event);
    const link = linkOf(event);
    if (!link || prevented(event) || !opensWindow(link)) return;
    if (loads(hrefOf(link))) net.opens++;
  });
  // WebRTC could send UDP past the router and the proxy (Chromium also runs with non-proxied UDP
  // disabled): the API is removed, and each attempt is recorded as a blocked request.
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection']) {
    if (!window[name]) continue;
    const refuse = function (config) {
      let urls = [];
      try {
        urls = ((config && config.iceServers) || []).flatMap((s) => [].concat(s.urls || s.url || []))
          .slice(0, 20).map((u) => cut(String(u)));
      } catch (e) {}   // what the page passed could not be read: the attempt is reported all the same
      refused('webrtc', {urls});
      throw new Exception('WebRTC is blocked in the offline sandbox', 'NotAllowedError');
    };
    try { define(window, name, {value: refuse, configurable: false, writable: false}); } catch (e) {}
  }
  // What a page passed, as text for a report ("" if it will not say: its toString threw).
  const said = (value) => { try { return cut(text(value)); } catch (e) { return ''; } };
  // WebTransport runs over HTTP/3, which Chromium cannot send through the backstop proxy (it fails
  // the try there, unrecorded): the API is removed like WebRTC's, and each attempt is recorded.
  if (window.WebTransport) {
    const refuse = function WebTransport(url) {
      refused('webtransport', {url: said(url)});
      throw new Exception('WebTransport is blocked in the offline sandbox', 'NotAllowedError');
    };
    try { define(window, 'WebTransport', {value: refuse, configurable: false, writable: false}); } catch (e) {}
  }
  // WebSockets are refused in the page, each try recorded (the first 20 a document, then counts):
  // Playwright's WebSocket routing put a stand-in here that crossed the driver every run shares
  // several times for each socket, and a page opening thousands a second held it. One that gets
  // past (a worker's, a new frame's) reaches the backstop, which refuses and records it.
  if (window.WebSocket) {
    const refuse = function WebSocket(url) {
      refused('websocket', {url: said(url)});
      throw new Exception('WebSocket is blocked in the offline sandbox', 'SecurityError');
    };
    try { define(window, 'WebSocket', {value: refuse, configurable: false, writable: false}); } catch (e) {}
  }
  // Service workers are blocked; each registration attempt is recorded and rejected. On the
  // prototype, where Playwright's blocking put a register that resolves to undefined: every way
  // of calling it (navigator.serviceWorker.register, the prototype's, another frame's) comes here.
  if (window.ServiceWorkerContainer) {
    const register = function register(url) {
      refused('service_worker', {url: said(url)});
      return reject(new Exception('service workers are blocked in the offline sandbox', 'SecurityError'));
    };
    try {
      define(ServiceWorkerContainer.prototype, 'register', {value: register, configurable: false, writable: false});
    } catch (e) {}
  }
})();
