"""A pool of daemon threads for speculative fetches.

concurrent.futures' pool joins its threads at interpreter exit, so a prefetch nobody needs any
more (a slow 404 from a mirror) would hold the process open. These threads are daemons: work
still queued or running when lockguard exits is abandoned. That is safe because every cache write
is an atomic rename.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future


def import_worker_modules() -> None:
    """What the workers would import on their first page, metadata or lazy wheel read, imported
    now by the calling (main) thread: io/index/early.py says why a thread must not be the first."""
    import email.iterators  # noqa: F401  (metadata: email.message imports it on first use)
    import email.message  # noqa: F401
    import encodings.cp437  # noqa: F401  (zipfile decodes the names in a wheel's directory with it)
    import encodings.idna  # noqa: F401  (the socket layer encodes host names with it)

    import lockguard.io.msgspec_adapter  # noqa: F401  (JSON pages: msgspec)


class DaemonPool:
    def __init__(self, max_workers: int, name: str) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._max = max_workers
        self._name = name
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        with self._lock:
            if self._closed:
                future.cancel()
                return future
            self._queue.put((future, fn, args, kwargs))
            if self._idle == 0 and len(self._threads) < self._max:
                thread = threading.Thread(
                    target=self._work, name=f"{self._name}-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
            else:
                self._idle -= 1 if self._idle else 0
        return future

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, fn, args, kwargs = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # handed to whoever waits on the future
                    future.set_exception(exc)
            with self._lock:
                self._idle += 1

    def shutdown(self) -> None:
        """Cancel what has not started; running work finishes (or is abandoned at exit)."""
        with self._lock:
            self._closed = True
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].cancel()
        for _ in self._threads:
            self._queue.put(None)
