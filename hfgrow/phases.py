"""Where a growth's time goes: seconds per phase (planning, reading, arithmetic, writing), added up by the threads that
spend them. Reading, arithmetic and writing overlap (one thread writes while the next tensor grows), so their sum can
exceed the wall time of the writing stage; the report gives both."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Callable, Iterator

PHASES = ("planning", "reading", "arithmetic", "writing", "waiting")  # waiting: the growing thread, on the writer


class Phases:
    """Seconds per phase, safe to add to from several threads."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._lock = threading.Lock()

    def add(self, phase: str, seconds: float) -> None:
        with self._lock:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds

    @contextlib.contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(phase, time.perf_counter() - start)

    def timed(self, phase: str, f: Callable[..., Any]) -> Callable[..., Any]:
        """``f``, its calls counted in ``phase`` (for work handed to another thread)."""
        def call(*args: Any, **kwargs: Any) -> Any:
            with self(phase):
                return f(*args, **kwargs)
        return call

    def rounded(self) -> dict[str, float]:
        return {p: round(self.seconds[p], 3) for p in PHASES if p in self.seconds}

