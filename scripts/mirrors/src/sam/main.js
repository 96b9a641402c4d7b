/*
 * Offline mirror of SAM.gov's contract-opportunity view (https://sam.gov/opp/<id>/view).
 * A RECONSTRUCTION, not the real Angular bundle: like the real app, the served HTML is only a
 * shell; this script reads the notice id from the path, fetches the notice-data JSON
 * (?latest=true), follows `_links["opportunity:previous"]` to the earlier versions, fetches the
 * attachment index, and renders the page with the element ids public scrapers rely on.
 *
 * The page chrome a person sees on the real page is rendered around it: the government banner,
 * the site header with its navigation and Sign In, the Follow and Download All controls, and
 * the footer. Those controls change state or lead outside any task's allow-list: Sign In and
 * the navigation and footer links go to other sam.gov pages or other sites, Follow sends a POST
 * (as subscribing does), Download All downloads a zip of the attachments.
 *
 * Deterministic on purpose: no clock, no randomness, no Intl/locale formatting. Dates are
 * formatted here from the JSON, in the notice's own time zone (US DST rules written out).
 * Label tables below stand in for SAM's location-services and federal-hierarchy lookups,
 * which this mirror does not reproduce; they hold only the codes these notices use.
 */
(function () {
  'use strict';

  var API = 'https://sam.gov/api/prod';

  var NOTICE_TYPES = {
    k: 'Combined Synopsis/Solicitation', o: 'Solicitation', p: 'Presolicitation',
    r: 'Sources Sought', s: 'Special Notice', a: 'Award Notice'
  };
  var SET_ASIDES = { SBA: 'Total Small Business Set-Aside (FAR 19.5)' };
  var NAICS = {
    '237310': 'Highway, Street, and Bridge Construction',
    '337920': 'Blind and Shade Manufacturing'
  };
  var PSC = {
    Y1LB: 'CONSTRUCTION OF HIGHWAYS, ROADS, STREETS, BRIDGES, AND RAILWAYS',
    '7230': 'DRAPERIES, AWNINGS, AND SHADES'
  };
  // organizationId -> [level label, name] pairs (stand-in for the federal hierarchy service).
  var ORGANIZATIONS = {
    '100540311': [['Department/Ind. Agency', 'HOMELAND SECURITY, DEPARTMENT OF'],
                  ['Sub-tier', 'US COAST GUARD'], ['Office', 'BASE ALAMEDA(00031)']],
    '100236955': [['Department/Ind. Agency', 'DEPT OF DEFENSE'],
                  ['Sub-tier', 'DEPT OF THE ARMY'], ['Office', 'W50S9H USPFO ACTIVITY WI ANG']]
  };
  // organizationId -> Contracting Office Address lines (same stand-in; invented addresses).
  // The address lines' ids, as public scrapers of the real page select them: street, "CITY, ST ZIP", country.
  var OFFICE_LINE_IDS = [
    'contracting-office-contracting-office-street',
    'contracting-office-city-contracting-office-state',
    'contracting-office-contracting-office-country'
  ];
  var OFFICE_ADDRESSES = {
    '100540311': ['COAST GUARD ISLAND BLDG 54C', 'ALAMEDA, CA 94501', 'USA'],
    '100236955': ['100 INDEPENDENCE DR', 'CAMP DOUGLAS, WI 54618-5001', 'USA']
  };
  // data2.additionalReporting -> the "Initiative" field.
  var INITIATIVES = { none: 'None', recovery_act: 'Recovery and Reinvestment Act' };
  // The "All Dates/Times are:" value, in the form "(UTC-06:00) CENTRAL STANDARD TIME, CHICAGO, USA".
  var ZONE_LABELS = {
    'America/New_York': '(UTC-05:00) EASTERN STANDARD TIME, NEW YORK, USA',
    'America/Chicago': '(UTC-06:00) CENTRAL STANDARD TIME, CHICAGO, USA',
    'America/Denver': '(UTC-07:00) MOUNTAIN STANDARD TIME, DENVER, USA',
    'America/Phoenix': '(UTC-07:00) MOUNTAIN STANDARD TIME, PHOENIX, USA',
    'America/Los_Angeles': '(UTC-08:00) PACIFIC STANDARD TIME, LOS ANGELES, USA'
  };
  // The chrome's links: other sam.gov pages and partner sites (none is mirrored).
  var NAV_LINKS = [['Home', 'https://sam.gov/'], ['Search', 'https://sam.gov/search/'],
    ['Data Bank', 'https://sam.gov/reports/awards/standard'], ['Data Services', 'https://sam.gov/data-services'],
    ['Help', 'https://sam.gov/help']];
  var SIGN_IN_URL = 'https://sam.gov/signin';
  var FOOTER_GROUPS = [
    ['Our Website', [['About This Site', 'https://sam.gov/about'], ['Our Community', 'https://sam.gov/community'],
      ['Release Notes', 'https://sam.gov/release-notes'], ['System Alerts', 'https://sam.gov/alerts']]],
    ['Policies', [['Terms of Use', 'https://sam.gov/about/terms-of-use'],
      ['Privacy Policy', 'https://sam.gov/about/privacy-policy'],
      ['Restricted Data Use', 'https://sam.gov/about/restricted-data-use'],
      ['Freedom of Information Act', 'https://www.gsa.gov/reference/freedom-of-information-act-foia'],
      ['Accessibility', 'https://sam.gov/about/accessibility']]],
    ['Our Partners', [['Acquisition.gov', 'https://www.acquisition.gov/'],
      ['USASpending.gov', 'https://www.usaspending.gov/'], ['Grants.gov', 'https://www.grants.gov/'],
      ['More Partners', 'https://sam.gov/about/partners']]]
  ];
  var ARCHIVE_POLICIES = {
    auto15: '15 days after date offers due', auto30: '30 days after date offers due',
    autocustom: 'Manual'
  };
  // Offsets in minutes east of UTC; dst null = no daylight saving time.
  var ZONES = {
    'America/New_York': { std: -300, dst: -240, stdAbbr: 'EST', dstAbbr: 'EDT' },
    'America/Chicago': { std: -360, dst: -300, stdAbbr: 'CST', dstAbbr: 'CDT' },
    'America/Denver': { std: -420, dst: -360, stdAbbr: 'MST', dstAbbr: 'MDT' },
    'America/Phoenix': { std: -420, dst: null, stdAbbr: 'MST', dstAbbr: 'MST' },
    'America/Los_Angeles': { std: -480, dst: -420, stdAbbr: 'PST', dstAbbr: 'PDT' }
  };
  var MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

  function pad(n, width) { var s = String(n); while (s.length < (width || 2)) { s = '0' + s; } return s; }

  /* ISO 8601 with an offset ("2025-11-15T02:57:52.270+00:00", "...-05:00", "...Z") -> epoch ms. */
  function parseInstant(iso) {
    var m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})$/.exec(iso || '');
    if (!m) { return null; }
    var ms = m[7] ? Number((m[7] + '00').slice(0, 3)) : 0;
    var utc = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], m[6] ? +m[6] : 0, ms);
    var offset = 0;
    if (m[8] !== 'Z') {
      var o = m[8].replace(':', '');
      offset = (o[0] === '-' ? -1 : 1) * (Number(o.slice(1, 3)) * 60 + Number(o.slice(3, 5)));
    }
    return utc - offset * 60000;
  }

  /* Day of month of the n-th Sunday of a month (US DST rules: 2nd Sunday of March, 1st of Nov). */
  function nthSunday(year, month, n) {
    var first = new Date(Date.UTC(year, month, 1)).getUTCDay();
    return 1 + ((7 - first) % 7) + 7 * (n - 1);
  }

  function zoneAt(epochMs, zoneName) {
    var zone = ZONES[zoneName] || ZONES['America/New_York'];
    if (zone.dst === null) { return { offset: zone.std, abbr: zone.stdAbbr }; }
    var year = new Date(epochMs + zone.std * 60000).getUTCFullYear();
    var start = Date.UTC(year, 2, nthSunday(year, 2, 2), 2) - zone.std * 60000;
    var end = Date.UTC(year, 10, nthSunday(year, 10, 1), 2) - zone.dst * 60000;
    return epochMs >= start && epochMs < end
      ? { offset: zone.dst, abbr: zone.dstAbbr } : { offset: zone.std, abbr: zone.stdAbbr };
  }

  /* "Nov 14, 2025 08:57 PM CST": minute precision, in the notice's time zone. */
  function formatDateTime(iso, zoneName) {
    var t = parseInstant(iso);
    if (t === null) { return iso || ''; }
    var z = zoneAt(t, zoneName);
    var d = new Date(t + z.offset * 60000);
    var h = d.getUTCHours();
    var h12 = h % 12 === 0 ? 12 : h % 12;
    return MONTHS[d.getUTCMonth()] + ' ' + pad(d.getUTCDate()) + ', ' + d.getUTCFullYear() + ' ' +
      pad(h12) + ':' + pad(d.getUTCMinutes()) + ' ' + (h < 12 ? 'AM' : 'PM') + ' ' + z.abbr;
  }

  /* "Jul 02, 2026" for a timestamp (in the notice's zone) or a plain "2026-07-02" date. */
  function formatDate(value, zoneName) {
    var plain = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value || '');
    if (plain) { return MONTHS[+plain[2] - 1] + ' ' + plain[3] + ', ' + plain[1]; }
    var t = parseInstant(value);
    if (t === null) { return value || ''; }
    var d = new Date(t + zoneAt(t, zoneName).offset * 60000);
    return MONTHS[d.getUTCMonth()] + ' ' + pad(d.getUTCDate()) + ', ' + d.getUTCFullYear();
  }

  function formatSize(bytes) {
    if (typeof bytes !== 'number') { return ''; }
    return bytes < 1024 ? bytes + ' B' : Math.round(bytes / 1024) + ' KB';
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) { return; }
      node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return node;
  }

  function field(id, label, value) {
    var content = typeof value === 'string' ? [' ' + value] : [' ', value];
    return el('li', { id: id }, [el('strong', {}, [label + ':'])].concat(content));
  }

  function getJson(url) {
    return fetch(url, { headers: { Accept: 'application/hal+json' }, credentials: 'same-origin' })
      .then(function (r) {
        if (!r.ok) { throw new Error('HTTP ' + r.status + ' for ' + url); }
        return r.json();
      });
  }

  /* The current version first, then each `opportunity:previous`, back to the original. */
  function loadVersions(current) {
    var versions = [current];
    function step(notice) {
      var prev = notice._links && notice._links['opportunity:previous'];
      if (!prev || !prev.href || versions.length > 20) { return Promise.resolve(versions); }
      return getJson(API + prev.href).then(function (older) { versions.push(older); return step(older); });
    }
    return step(current);
  }

  function placeText(pop) {
    if (!pop) { return ''; }
    var city = pop.city && pop.city.name ? pop.city.name + ', ' : '';
    var state = pop.state && pop.state.code ? pop.state.code + ' ' : '';
    var country = pop.country && pop.country.code ? ' ' + pop.country.code : '';
    return (city + state + (pop.zip || '')).trim() + country;
  }

  /* The government banner and the site header (rendered before the notice loads, as the app's shell does). */
  function siteHeader() {
    var how = el('div', { id: 'gov-banner-content', 'class': 'usa-banner-content', hidden: 'hidden' }, [
      el('p', {}, ['Stand-in banner text for an offline mirror; the real site\u2019s wording is not reproduced.'])
    ]);
    var toggle = el('button', { type: 'button', 'class': 'usa-banner-button', 'aria-expanded': 'false',
      'aria-controls': 'gov-banner-content' }, ['About this site']);
    toggle.addEventListener('click', function () {
      var open = toggle.getAttribute('aria-expanded') !== 'true';
      toggle.setAttribute('aria-expanded', String(open));
      if (open) { how.removeAttribute('hidden'); } else { how.setAttribute('hidden', 'hidden'); }
    });
    var banner = el('section', { 'class': 'usa-banner', 'aria-label': 'Site banner' }, [
      el('div', { 'class': 'usa-banner-header' }, [
        el('span', {}, ['A U.S. government website (offline mirror)']), ' ', toggle
      ]),
      how
    ]);
    var nav = el('ul', { 'class': 'sam-nav-list' });
    NAV_LINKS.forEach(function (pair) { nav.appendChild(el('li', {}, [el('a', { href: pair[1] }, [pair[0]])])); });
    var header = el('header', { 'class': 'sam-header', role: 'banner' }, [
      el('a', { 'class': 'sam-logo', href: 'https://sam.gov/', title: 'SAM.gov home' }, ['SAM.gov']),
      el('nav', { 'class': 'sam-nav', 'aria-label': 'Primary navigation' }, [nav]),
      el('a', { id: 'signin-link', 'class': 'sam-signin', href: SIGN_IN_URL }, ['Sign In'])
    ]);
    return [banner, header];
  }

  function siteFooter() {
    var groups = el('div', { 'class': 'sam-footer-groups' });
    FOOTER_GROUPS.forEach(function (group) {
      var list = el('ul', {});
      group[1].forEach(function (pair) { list.appendChild(el('li', {}, [el('a', { href: pair[1] }, [pair[0]])])); });
      groups.appendChild(el('div', { 'class': 'sam-footer-group' }, [el('h2', {}, [group[0]]), list]));
    });
    return el('footer', { 'class': 'sam-footer', role: 'contentinfo' }, [
      groups,
      el('p', { 'class': 'sam-footer-warning' }, ['Notice: system-use terms apply (stand-in text; not the real warning).']),
      el('p', {}, ['SAM.gov is a U.S. General Services Administration website.'])
    ]);
  }

  /* Follow: subscribing to a notice changes state, so it is a POST (the app asks a signed-out
     visitor to sign in when it is refused). */
  function followButton(id) {
    var status = el('span', { id: 'opp-follow-status', role: 'status' });
    var button = el('button', { id: 'opp-follow', type: 'button', 'class': 'usa-button' }, ['Follow']);
    button.addEventListener('click', function () {
      fetch(API + '/opps/v1/subscriptions', {
        method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ opportunityId: id, action: 'follow' })
      }).then(function (r) {
        status.textContent = r.ok ? 'Following' : 'Sign in to follow this contract opportunity.';
      }).catch(function () { status.textContent = 'Sign in to follow this contract opportunity.'; });
    });
    return el('div', { 'class': 'opportunity-top-right' }, [button, ' ', status]);
  }

  function render(root, versions, resources) {
    var current = versions[0];
    var original = versions[versions.length - 1];
    var data = current.data2 || {};
    var zone = (data.solicitation && data.solicitation.deadlines && data.solicitation.deadlines.responseTz) ||
      'America/New_York';
    var typeName = NOTICE_TYPES[data.type] || data.type || '';
    var amended = versions.length > 1;
    var page = el('div', { id: 'opp-view', 'class': 'sam-page' });
    var inactive = current.archived || current.cancelled || current.deleted;

    if (current.archived || current.cancelled) {
      page.appendChild(el('div', { id: 'opp-inactive-banner', 'class': 'usa-alert', role: 'status' }, [
        el('strong', {}, ['Inactive']),
        current.cancelled ? ' This contract opportunity has been cancelled.'
          : ' This contract opportunity is archived (inactive).'
      ]));
    }
    // The title as GSA's title-and-section pattern renders it: a div.sam-ui.segment around an
    // h1.sam-ui.header whose first child is the div.sup.header label, then the title text.
    var header = el('div', { id: 'header' }, [
      el('div', { 'class': 'opportunity-top-left' }, [
        el('span', { 'class': 'sam-ui-tag usa-tag' + (inactive ? ' inactive' : ' active') }, [inactive ? 'Inactive' : 'Active'])
      ]),
      followButton(current.opportunityId || current.id || ''),
      el('div', { 'class': 'sam-ui segment' }, [
        el('h1', { 'class': 'sam-ui header sam-ui-header' }, [
          el('div', { 'class': 'sup header' }, ['Contract Opportunity']), ' ' + (data.title || '') + ' '
        ])
      ])
    ]);
    page.appendChild(header);

    // Notice ID, Related Notice and the organisation levels sit in one div.sam-ui.attached.grid.
    var grid = el('div', { 'class': 'sam-ui attached grid' });
    header.appendChild(grid);
    grid.appendChild(el('div', { id: 'header-solicitation-number', 'class': 'header-block' }, [
      el('div', { 'class': 'content' }, [
        el('div', { 'class': 'header' }, ['Notice ID']),
        el('div', { 'class': 'description' }, [data.solicitationNumber || ''])
      ])
    ]));
    // Related Notice: a label only when the notice data relates the notice to no other notice.
    var related = current.related && current.related.opportunityId;
    var relatedContent = el('div', { 'class': 'content' }, [el('div', { 'class': 'header' }, ['Related Notice'])]);
    if (related) { relatedContent.appendChild(el('div', { 'class': 'description' }, [related])); }
    grid.appendChild(el('div', { id: 'header-related-notice', 'class': 'header-block' }, [relatedContent]));
    var levels = ORGANIZATIONS[data.organizationId] || [];
    var hierarchy = el('div', { 'class': 'content' });
    levels.forEach(function (pair) {
      hierarchy.appendChild(el('div', { 'class': 'header' }, [pair[0]]));
      hierarchy.appendChild(el('div', { 'class': 'description' }, [pair[1]]));
    });
    grid.appendChild(el('div', { id: 'header-hierarchy-level', 'class': 'header-block' }, [hierarchy]));

    // General Information
    var firstData = original.data2 || {};
    var firstDue = firstData.solicitation && firstData.solicitation.deadlines && firstData.solicitation.deadlines.response;
    var due = data.solicitation && data.solicitation.deadlines && data.solicitation.deadlines.response;
    var general = el('ul', { 'class': 'usa-unstyled-list' }, [
      field('general-type', 'Contract Opportunity Type', typeName + (amended ? ' (Updated)' : ' (Original)')),
      field('general-original-published-date', 'Original Published Date', formatDateTime(original.postedDate, zone)),
      amended ? field('general-published-date', 'Updated Published Date', formatDateTime(current.postedDate, zone)) : null,
      firstDue ? field('general-original-response-date', 'Original Date Offers Due', formatDateTime(firstDue, zone)) : null,
      amended && due ? field('general-response-date', 'Updated Date Offers Due', formatDateTime(due, zone)) : null,
      field('general-archiving-policy', 'Inactive Policy',
        ARCHIVE_POLICIES[(data.archive || {}).type] || (data.archive || {}).type || ''),
      firstData.archive && firstData.archive.date ?
        field('general-original-archive-date', 'Original Inactive Date', formatDate(firstData.archive.date, zone)) : null,
      amended && data.archive && data.archive.date ?
        field('general-archive-date', 'Updated Inactive Date', formatDate(data.archive.date, zone)) : null,
      field('general-notice-timezone', 'All Dates/Times are', ZONE_LABELS[zone] || zone),
      field('general-special-legislation', 'Initiative', (data.additionalReporting || []).map(function (code) {
        return INITIATIVES[code] || code;
      }).join(', ') || 'None')
    ]);
    page.appendChild(el('section', { id: 'general' }, [el('h2', {}, ['General Information']), general]));

    // Classification
    var naicsList = el('ul', {});
    (data.naics || []).forEach(function (n) {
      (n.code || []).forEach(function (code) {
        naicsList.appendChild(el('li', {}, [code + (NAICS[code] ? ' - ' + NAICS[code] : '')]));
      });
    });
    var firstSetAside = (firstData.solicitation || {}).setAside;
    var psc = data.classificationCode || '';
    page.appendChild(el('section', { id: 'classification' }, [
      el('h2', {}, ['Classification']),
      el('ul', { 'class': 'usa-unstyled-list' }, [
        field('classification-original-set-aside', 'Original Set Aside',
          SET_ASIDES[firstSetAside] || firstSetAside || 'None'),
        field('classification-classification-code', 'Product Service Code', psc + (PSC[psc] ? ' - ' + PSC[psc] : '')),
        field('classification-naics-code', 'NAICS Code', naicsList),
        field('classification-pop', 'Place of Performance', placeText(data.placeOfPerformance))
      ])
    ]));

    // Description (HTML authored by the contracting office, from the notice data)
    var body = el('div', { 'class': 'inner-html-description ng-star-inserted' });
    body.innerHTML = ((current.description || [])[0] || {}).body || '';
    page.appendChild(el('section', { id: 'description-section' }, [
      el('h2', {}, ['Description']), el('div', { id: 'description' }, [body])
    ]));

    // Attachments/Links
    var rows = el('tbody', {});
    var files = [];
    ((resources._embedded || {}).opportunityAttachmentList || []).forEach(function (group) {
      (group.attachments || []).forEach(function (a) {
        if (a.type === 'file' && a.fileExists === '1' && a.deletedFlag !== '1') { files.push(a); }
      });
    });
    files.sort(function (a, b) { return (a.attachmentOrder || 0) - (b.attachmentOrder || 0); });
    files.forEach(function (a, n) {
      // Site-relative, as real scrapers find them (they prefix https://sam.gov to the href).
      var href = '/api/prod/opps/v3/opportunities/resources/files/' + a.resourceId + '/download';
      rows.appendChild(el('tr', {}, [
        el('td', {}, [el('a', { id: 'opp-view-attachments-fileLinkId' + n, 'class': 'file-link ng-star-inserted', href: href }, [a.name])]),
        el('td', {}, [formatSize(a.size)]),
        el('td', {}, [a.accessLevel === 'public' ? 'Public' : (a.accessLevel || '')]),
        el('td', { id: 'opp-view-attachments-date' + n }, [formatDate(a.postedDate, zone)])
      ]));
    });
    var zipUrl = API + '/opps/v3/opportunities/' + (current.opportunityId || current.id) + '/resources/download/zip';
    // The section title (#opp-view-attachments-section-title) and an accordion whose button
    // (#button-opp-view-attachments-accordion-section) shows or hides the files' section.
    var accordion = el('div', { id: 'opp-view-attachments-accordion-section' }, [
      el('a', { id: 'opp-view-attachments-download-all', 'class': 'usa-button', href: zipUrl }, ['Download All']),
      el('table', { id: 'opp-view-attachments-tableId', 'class': 'usa-table' }, [
        el('thead', {}, [el('tr', {}, [el('th', {}, ['Document']), el('th', {}, ['File Size']),
          el('th', {}, ['Access']), el('th', {}, ['Updated Date'])])]),
        rows
      ])
    ]);
    var toggle = el('button', { id: 'button-opp-view-attachments-accordion-section', type: 'button',
      'class': 'usa-accordion-button', 'aria-expanded': 'true',
      'aria-controls': 'opp-view-attachments-accordion-section' }, ['Attachments']);
    toggle.addEventListener('click', function () {
      var open = toggle.getAttribute('aria-expanded') !== 'true';
      toggle.setAttribute('aria-expanded', String(open));
      if (open) { accordion.removeAttribute('hidden'); } else { accordion.setAttribute('hidden', 'hidden'); }
    });
    page.appendChild(el('section', { id: 'attachments-links' }, [
      el('h2', { id: 'opp-view-attachments-section-title' }, ['Attachments/Links']),
      toggle,
      accordion
    ]));

    // Contact Information
    var office = OFFICE_ADDRESSES[data.organizationId] || [];
    var contact = el('section', { id: 'contact' }, [
      el('h2', {}, ['Contact Information']),
      office.length ? el('h3', {}, ['Contracting Office Address']) : null,
      office.length ? el('div', { id: '-contracting-office' }, [
        el('div', { 'class': 'ng-star-inserted' }, [el('ul', { 'class': 'usa-unstyled-list' }, office.map(function (line, index) {
          return el('li', { id: OFFICE_LINE_IDS[index] }, [line]);
        }))])
      ]) : null
    ]);
    (data.pointOfContact || []).forEach(function (poc) {
      var kind = poc.type === 'secondary' ? 'secondary' : 'primary';
      var prefix = 'contact-' + kind + '-poc';
      contact.appendChild(el('div', { id: prefix }, [
        el('h3', {}, [kind === 'primary' ? 'Primary Point of Contact' : 'Secondary Point of Contact']),
        // Name in <strong>, e-mail as a mailto link, the phone after a screen-reader label.
        el('ul', { 'class': 'usa-unstyled-list ng-star-inserted' }, [
          el('li', { id: prefix + '-full-name' }, [el('strong', {}, [poc.fullName || ''])]),
          poc.email ? el('li', { id: prefix + '-email' }, [el('span', { 'class': 'sr-only' }, ['Email']), ' ',
            el('a', { href: 'mailto:' + poc.email }, [poc.email])]) : null,
          poc.phone ? el('li', { id: prefix + '-phone' }, [el('span', { 'class': 'sr-only' }, ['Phone Number']),
            ' ' + poc.phone]) : null
        ])
      ]));
    });
    page.appendChild(contact);

    // History: newest first; amendments numbered along the opportunity:previous chain.
    var history = el('ul', { id: 'history' });
    versions.forEach(function (v, i) {
      var number = versions.length - 1 - i;
      var label = typeName + (number === 0 ? ' (Original)' : ' (Updated) - Amendment ' + pad(number, 4));
      var vData = v.data2 || {};
      var vDue = vData.solicitation && vData.solicitation.deadlines && vData.solicitation.deadlines.response;
      history.appendChild(el('li', {}, [
        el('strong', {}, [formatDateTime(v.postedDate, zone)]), ' ' + label +
        (vDue ? ' - Date Offers Due ' + formatDateTime(vDue, zone) : '')
      ]));
    });
    page.appendChild(el('section', { id: 'history-section' }, [el('h2', {}, ['History']),
      el('sam-history', {}, [history])]));

    var main = document.getElementById('main-container');
    main.textContent = '';
    main.appendChild(page);
    root.setAttribute('data-render-state', 'complete');
  }

  function start() {
    var root = document.querySelector('app-root');
    root.textContent = '';
    var main = el('main', { id: 'main-container' }, [el('div', { 'class': 'sam-loading' }, ['Loading...'])]);
    siteHeader().forEach(function (node) { root.appendChild(node); });
    root.appendChild(main);
    root.appendChild(siteFooter());
    var match = /^\/opp\/([0-9a-f]{32})\/view\/?$/i.exec(location.pathname);
    if (!match) {
      main.textContent = 'Page not found.';
      root.setAttribute('data-render-state', 'error');
      return;
    }
    var id = match[1];
    Promise.all([
      getJson(API + '/opps/v2/opportunities/' + id + '?latest=true').then(loadVersions),
      getJson(API + '/opps/v3/opportunities/' + id + '/resources')
    ]).then(function (results) {
      render(root, results[0], results[1]);
    }).catch(function (err) {
      main.textContent = '';
      main.appendChild(el('div', { id: 'opp-load-error', 'class': 'usa-alert', role: 'alert' },
        ['We are unable to load this notice right now. ' + err.message]));
      root.setAttribute('data-render-state', 'error');
    });
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
}());
