"""What reaches a session past its router: requests that escaped interception to the session's
backstop (``escaped``, ``idle_tunnel``), and downloads Chromium fetches itself
(``download_refused``: a link's ``download`` attribute), whose URL the router never sees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolserver.browser.owner import Owner
    from toolserver.browser.tab import Tab
    from toolserver.contract.mirrors import MirrorStore
    from toolserver.contract.policy import Policy


class Unrouted:
    """Records, for one session, what its router did not answer."""

    def __init__(self, owner: Owner, store: MirrorStore, policy: Policy) -> None:
        self.owner = owner
        self.store = store
        self.policy = policy

    def escaped(self, method: str, url: str) -> None:
        """A request that escaped the router (a worker's, a page's as it unloads, a speculative
        prefetch) reached the backstop, which refused it; one that is not GET, HEAD or OPTIONS is a
        state change too, refused."""
        data = {"url": url, "method": method, "resource_type": "unrouted", "reason": "escaped_interception"}
        self.owner.record_event("blocked_request", data)
        if method not in ("GET", "HEAD", "OPTIONS", "CONNECT", "?"):
            self.owner.record_state_change("non_get_request", name=f"{method} {url}", blocked=True, detail=data)

    def idle_tunnel(self, target: str) -> None:
        """A connection through the backstop with no request in it (``host:port``): to a mirrored
        host, Chromium's own preconnect for a navigation the router answers (not recorded); else
        a bare CONNECT."""
        if target.rsplit(":", 1)[0] not in self.store.hosts():
            self.escaped("CONNECT", target)

    def download_refused(self, url: str, tab: Tab | None) -> bool:
        """A download the router did not answer (a link's ``download``: Chromium fetches it itself,
        past interception, and the backstop refuses it): off the allow-list, it is the page's policy
        violation (refused when enforced). A ``blob:`` or ``data:`` download holds the page's own
        bytes: no URL is visited."""
        if not url.startswith(("http:", "https:")) or self.policy.url_ok(url):
            return False
        self.owner.record_policy_violation(url, origin="page", method="GET", resource_type="download", tab=tab)
        return self.policy.enforcing
