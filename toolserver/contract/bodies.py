"""Mirror bodies kept in memory (``MirrorStore``): a page loaded again is answered without a disk
read or a thread. Bounded in bytes, the least recently served dropped first; a body larger than
``max_body`` (a big PDF) is never kept. Safe to use from worker threads."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

BODY_CACHE_BYTES = 64 * 1024 * 1024
BODY_CACHE_MAX_BODY = 4 * 1024 * 1024


class BodyCache:
    def __init__(self, max_bytes: int = BODY_CACHE_BYTES, max_body: int = BODY_CACHE_MAX_BODY) -> None:
        self.max_bytes, self.max_body = max_bytes, max_body
        self._bodies: OrderedDict[Hashable, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            body = self._bodies.get(key)
            if body is not None:
                self._bodies.move_to_end(key)
            return body

    def keep(self, key: Hashable, body: bytes) -> None:
        if len(body) > self.max_body:
            return
        with self._lock:
            if key in self._bodies:
                return
            self._bodies[key] = body
            self._size += len(body)
            while self._size > self.max_bytes:
                self._size -= len(self._bodies.popitem(last=False)[1])
