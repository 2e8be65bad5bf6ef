"""Bounded blocking channels, the nodes that hold their ends, and deadlock detection.

One ``Network`` per graph run owns one lock; every channel operation takes it, and
each participant (a node, or the caller running the graph's entry function) waits
on its own condition of that lock, so a change wakes only the two holders of the
channel that changed. ``push_many``/``pull_many`` move a batch per lock round (items are still
counted and bounded one by one): the way to move millions of scalar items per second, since
one Python-level channel operation costs about a microsecond and a thread switch more.

Each participant accounts its run (``NodeStats``): time blocked in channel operations, CPU time
of its thread, firings, and for kernel nodes the part spent in C; ``loom.dataflow.model`` turns
these into a predicted rate.

Shutdown rules (EVEREST D4.5 §4.3):
- a participant that ends (returns, breaks, fails) closes every channel end it holds;
- a pull from a channel whose writer closed, once drained, or a push into a channel
  whose reader closed, raises ``Broken``: the node ends quietly (that is how a
  pipeline drains);
- a participant inside a ``dfg.loop`` also watches all its channels: as soon as one
  is broken it stops, before its next round or pull, even while blocked pulling
  another channel (an item it already computed is still pushed if the channel
  takes it: no item is lost to the rule);
- an exception in a node stops the whole graph (``Aborted`` in every other
  participant) and reaches the caller as ``NodeError`` naming the node;
- when every live participant is blocked, nothing can ever change: the wait-for
  graph (a blocked push waits for the channel's reader, a blocked pull for its
  writer) has a cycle, which ``DeadlockError`` reports. No timeouts are involved.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field

from loom.errors import LoomError


class Broken(Exception):
    """A channel end's partner is gone: the holder ends quietly."""


class Aborted(Exception):
    """Another participant failed or the graph deadlocked: stop now."""


class NodeError(LoomError):
    """A node raised; ``node`` names it, ``__cause__`` is the original exception."""

    def __init__(self, node: str, cause: BaseException):
        self.node = node
        where = f"node @{node}"
        filename = line = None
        if isinstance(cause, LoomError) and cause.filename is not None:
            detail = str(cause)
        else:
            filename, line = _user_frame(cause)  # the line of the node's code that raised (or pushed a bad item)
            if isinstance(cause, LoomError):
                # the node's own checks already name it: do not say "node @n: node failed: node @n: ..."
                detail = cause.message if cause.where == where else str(cause)
            else:
                detail = f"{type(cause).__name__}: {cause}"
        super().__init__(f"node failed: {detail}", where=where, filename=filename, line=line)


def _user_frame(error: BaseException) -> tuple[str | None, int | None]:
    """The innermost frame of ``error`` in the user's code: outside loom and outside the Python
    installation (stdlib, site-packages), so a ZeroDivisionError in a node function points at it."""
    import sysconfig
    from pathlib import Path

    skip = [str(Path(__file__).resolve().parents[1])] + [
        str(Path(p).resolve()) for k, p in sysconfig.get_paths().items() if k in ("stdlib", "platstdlib", "purelib",
                                                                                   "platlib")]
    found = (None, None)
    tb = error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not name.startswith("<"):
            path = str(Path(name).resolve())
            if not any(path == s or path.startswith(s + "/") for s in skip):
                found = (name, tb.tb_lineno)
        tb = tb.tb_next
    return found


class DeadlockError(LoomError):
    """Every live participant is blocked; ``cycle`` lists the (node, waits-on) steps."""

    def __init__(self, cycle: list[tuple[str, str]]):
        self.cycle = cycle
        self.nodes = [n for n, _ in cycle]
        steps = "; ".join(f"@{n} {what}" for n, what in cycle)
        super().__init__(f"deadlock: a cycle of blocked nodes ({' -> '.join('@' + n for n in self.nodes)} -> "
                         f"@{self.nodes[0]}): {steps}", where="dataflow graph")


class Participant:
    """A thread of the graph that holds channel ends (a node or the caller)."""

    def __init__(self, network: "Network", name: str):
        self.network = network
        self.name = name
        self.cond = threading.Condition(network.lock)
        self.waiting: tuple[Channel, str] | None = None
        self.watched: list[Channel] = []  # channels of an enclosing dfg.loop
        # inputs already pulled in the current round: draining one's last item must not stop the round that
        # consumed it (the rest of its inputs may be queued), only the next one
        self.pulled: set[Channel] = set()
        self.live = False
        self.ends: list[tuple[Channel, str]] = []  # (channel, "reader" | "writer")
        # accounting for the throughput model: busy = alive - blocked in channel operations
        self.started = 0.0
        self.ended = 0.0
        self.blocked_seconds = 0.0
        self.rounds = 0  # firings of a looping body (Map, kernel, Accelerator); 0 if unknown
        # CPU time of the participant's own thread (time.thread_time: excludes waiting and time
        # preempted by other threads), and the part spent in C calls that release the GIL
        self.cpu_start: float | None = None
        self.cpu_seconds = 0.0
        self.native_seconds = 0.0  # over ``native_samples`` of the ``rounds`` calls
        self.native_samples = 0
        self.native = False  # its work is a C kernel or an accelerator driver

    def begin(self) -> None:
        """Called first thing on the participant's own thread."""
        self.cpu_start = time.thread_time()

    def stats(self) -> "NodeStats":
        alive = max((self.ended or time.perf_counter()) - self.started, 0.0)
        moved = [ch.pulls if role == "reader" else ch.pushes for ch, role in self.ends]
        firings = self.rounds or max(moved, default=0)
        native = self.native_seconds * self.rounds / self.native_samples if self.native_samples else 0.0
        return NodeStats(self.name, alive, min(self.blocked_seconds, alive), firings, self.cpu_seconds,
                         min(native, self.cpu_seconds))

    def __repr__(self) -> str:
        return f"<participant @{self.name}>"

    def new_round(self) -> None:
        self.pulled.clear()

    def broken_watch(self) -> Channel | None:
        for ch in self.watched:
            if ch not in self.pulled and ch.broken_for(self):
                return ch
        return None


@dataclass
class NodeStats:
    """How one participant spent its run: ``busy`` = alive - blocked; ``firings`` = rounds of its
    loop (or the most items it moved through one of its channels)."""

    name: str
    alive: float
    blocked: float
    firings: int
    cpu: float = 0.0     # CPU seconds of its thread
    native: float = 0.0  # of which inside kernel or accelerator-driver calls (ctypes: the GIL is released)

    @property
    def gil(self) -> float:
        """CPU seconds that held the GIL (Python work: channel operations, interpreting, glue)."""
        return max(self.cpu - self.native, 0.0)

    @property
    def busy(self) -> float:
        return self.alive - self.blocked

    @property
    def service_seconds(self) -> float | None:
        """Busy time per firing: the node's cost per item, the input of the throughput model."""
        return self.busy / self.firings if self.firings else None


@dataclass
class ChannelStats:
    name: str
    depth: int
    pushes: int
    pulls: int
    left: int  # items still queued when the graph ended (dropped at shutdown)


class Channel:
    def __init__(self, network: "Network", name: str, depth: int, check=None, check_many=None):
        if depth < 1:
            raise LoomError(f"channel depth must be >= 1, got {depth}", where=f"channel %{name}")
        self.network = network
        self.name = name
        self.depth = depth
        self.check = check  # item -> item (type check/normalise), raises LoomError
        self.check_many = check_many  # sequence/array -> list of checked items (vectorised where it can be)
        self.items: deque = deque()
        self.reader: Participant | None = None
        self.writer: Participant | None = None
        self.reader_closed = False
        self.writer_closed = False
        self.pushes = 0
        self.pulls = 0

    def __repr__(self) -> str:
        return f"<channel %{self.name} depth {self.depth}>"

    def broken_for(self, p: Participant) -> bool:
        if p is self.reader:
            return self.writer_closed and not self.items
        if p is self.writer:
            return self.reader_closed
        return False

    # -------------------------------------------------------------- operations
    def push(self, p: Participant, item) -> None:
        if self.check is not None:
            item = self.check(item)
        net = self.network
        with net.lock:
            while True:
                net.raise_if_stopped(p, watch=False)  # an item already computed is delivered if it can be
                if self.reader_closed:
                    raise Broken(self)
                if len(self.items) < self.depth:
                    self.items.append(item)
                    self.pushes += 1
                    net.wake(self.reader)
                    return
                net.wait(p, self, "push")

    def pull(self, p: Participant):
        net = self.network
        with net.lock:
            while True:
                net.raise_if_stopped(p)
                if self.items:
                    item = self.items.popleft()
                    self.pulls += 1
                    p.pulled.add(self)
                    net.wake(self.writer)
                    return item
                if self.writer_closed:
                    raise Broken(self)
                net.wait(p, self, "pull")

    def push_many(self, p: Participant, items) -> None:
        """Push every item in order under one lock acquisition per fill: items enter as room frees up
        (the depth still bounds the queue, counted in items)."""
        items = self.check_many(items) if self.check_many is not None else list(items)
        net = self.network
        k, n = 0, len(items)
        with net.lock:
            while k < n:
                net.raise_if_stopped(p, watch=False)
                if self.reader_closed:
                    raise Broken(self)
                room = self.depth - len(self.items)
                if room > 0:
                    take = items[k:k + room] if k or room < n else items
                    self.items.extend(take)
                    k += len(take)
                    self.pushes += len(take)
                    net.wake(self.reader)
                    continue
                net.wait(p, self, "push")

    def pull_many(self, p: Participant, limit: int) -> list:
        """Between 1 and ``limit`` items: waits only while the channel is empty, then takes what is
        queued (like ``read``); ``Broken`` once the writer closed and nothing is left."""
        if limit < 1:
            raise LoomError(f"pull_many needs a limit >= 1, got {limit}", where=f"channel %{self.name}")
        net = self.network
        with net.lock:
            while True:
                net.raise_if_stopped(p)
                q = self.items
                if q:
                    if len(q) <= limit:
                        out = list(q)
                        q.clear()
                    else:
                        pop = q.popleft
                        out = [pop() for _ in range(limit)]
                    self.pulls += len(out)
                    p.pulled.add(self)
                    net.wake(self.writer)
                    return out
                if self.writer_closed:
                    raise Broken(self)
                net.wait(p, self, "pull")

    def stats(self) -> ChannelStats:
        return ChannelStats(self.name, self.depth, self.pushes, self.pulls, len(self.items))


@dataclass
class Network:
    """Shared state of one graph run."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    participants: list[Participant] = field(default_factory=list)
    channels: list[Channel] = field(default_factory=list)
    error: LoomError | None = None
    blocked: int = 0
    live: int = 0
    done: threading.Condition | None = None

    def __post_init__(self):
        self.done = threading.Condition(self.lock)

    def participant(self, name: str) -> Participant:
        p = Participant(self, name)
        self.participants.append(p)
        return p

    def channel(self, name: str, depth: int, check=None, check_many=None) -> Channel:
        ch = Channel(self, name, depth, check, check_many)
        self.channels.append(ch)
        return ch

    # -------------------------------------------------------------- ownership
    def hold(self, p: Participant, ch: Channel, role: str) -> None:
        """``p`` now holds the ``role`` end of ``ch`` (moves it from its former holder)."""
        with self.lock:
            old = ch.reader if role == "reader" else ch.writer
            if old is not None:
                old.ends = [(c, r) for c, r in old.ends if not (c is ch and r == role)]
            if role == "reader":
                ch.reader = p
            else:
                ch.writer = p
            p.ends.append((ch, role))

    def start(self, p: Participant) -> None:
        with self.lock:
            p.live = True
            p.started = time.perf_counter()
            self.live += 1

    def finish(self, p: Participant) -> None:
        """``p`` ended: close its ends, wake its partners, re-check for a deadlock."""
        with self.lock:
            for ch, role in p.ends:
                if role == "reader":
                    ch.reader_closed = True
                    partner = ch.writer
                else:
                    ch.writer_closed = True
                    partner = ch.reader
                self.wake(partner)  # also re-checks a looping partner that watches this channel
            if p.cpu_start is not None:  # finish runs on the participant's own thread
                p.cpu_seconds = time.thread_time() - p.cpu_start
            if p.live:
                p.live = False
                p.ended = time.perf_counter()
                self.live -= 1
            self._check_deadlock()
            self.done.notify_all()

    def fail(self, error: LoomError) -> None:
        with self.lock:
            self._stop(error)

    def _stop(self, error: LoomError) -> None:
        if self.error is None:
            self.error = error
        for q in self.participants:
            self.wake(q)
        self.done.notify_all()

    # -------------------------------------------------------------- blocking
    def raise_if_stopped(self, p: Participant, watch: bool = True) -> None:
        """Called with the lock held before every (re)try of a channel operation.

        ``watch``: also stop a looping participant when one of its channels is broken
        (checked before pulls and between loop rounds: a loop processes no further input).
        """
        if self.error is not None:
            raise Aborted()
        if watch and p.watched:
            ch = p.broken_watch()
            if ch is not None:
                raise Broken(ch)

    def wake(self, q: Participant | None) -> None:
        """Wake ``q`` if it waits; it stops counting as blocked now, not when it gets the lock back
        (else a second waiter could see a stale "everyone is blocked" and report a false deadlock)."""
        if q is not None and q.waiting is not None:
            q.waiting = None
            self.blocked -= 1
            q.cond.notify()

    def wait(self, p: Participant, ch: Channel, kind: str) -> None:
        p.waiting = (ch, kind)
        self.blocked += 1
        self._check_deadlock()
        if p.waiting is not None and self.error is None:
            t = time.perf_counter()
            p.cond.wait()
            p.blocked_seconds += time.perf_counter() - t
        if p.waiting is not None:  # a spurious wake-up: nobody un-counted us
            p.waiting = None
            self.blocked -= 1

    def _check_deadlock(self) -> None:
        if self.error is not None or self.live == 0 or self.blocked < self.live:
            return
        waiting = [q for q in self.participants if q.live and q.waiting is not None]
        if len(waiting) < self.live:
            return
        # every blocked participant waits for one other live participant: follow the edges to a cycle
        def target(q: Participant) -> Participant | None:
            ch, kind = q.waiting  # type: ignore[misc]
            return ch.reader if kind == "push" else ch.writer

        seen: dict[Participant, int] = {}
        path: list[Participant] = []
        q: Participant | None = waiting[0]
        while q is not None and q not in seen:
            seen[q] = len(path)
            path.append(q)
            q = target(q) if q.waiting is not None else None
        if q is None:
            return  # cannot happen while everyone is blocked; stay safe
        cycle = path[seen[q]:]
        steps = []
        for node in cycle:
            ch, kind = node.waiting  # type: ignore[misc]
            if kind == "push":
                steps.append((node.name, f"waits to push into full channel %{ch.name} (depth {ch.depth})"))
            else:
                steps.append((node.name, f"waits to pull from empty channel %{ch.name}"))
        self._stop(DeadlockError(steps))

    def join(self, timeout: float | None = None) -> None:
        """Wait until every participant ended; a timeout is a LoomError naming who still runs."""
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        with self.lock:
            # after an error too: blocked participants leave at once (Aborted), busy ones at their next
            # channel operation
            while self.live > 0:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    running = sorted(q.name for q in self.participants if q.live)
                    self._stop(LoomError(f"the graph did not finish within {timeout} s; still running: "
                                         + ", ".join("@" + n for n in running), where="dataflow graph"))
                    return
                self.done.wait(remaining)


class Port:
    """A node's handle on one channel end: ``pull()`` on inputs, ``push(item)`` on outputs.

    Iterating an input port pulls until the channel is broken (then the loop just ends).
    """

    def __init__(self, channel: Channel, holder: Participant, role: str):
        self.channel = channel
        self.holder = holder
        self.role = role

    def __repr__(self) -> str:
        return f"<{'input' if self.role == 'reader' else 'output'} port of %{self.channel.name}>"

    def pull(self):
        if self.role != "reader":
            raise LoomError(f"cannot pull from the output end of %{self.channel.name}", where=f"node @{self.holder.name}")
        return self.channel.pull(self.holder)

    def push(self, item) -> None:
        if self.role != "writer":
            raise LoomError(f"cannot push into the input end of %{self.channel.name}", where=f"node @{self.holder.name}")
        self.channel.push(self.holder, item)

    def push_many(self, items) -> None:
        """Push a sequence of items (a numpy array of scalars for a scalar channel is checked at once)."""
        if self.role != "writer":
            raise LoomError(f"cannot push into the input end of %{self.channel.name}", where=f"node @{self.holder.name}")
        self.channel.push_many(self.holder, items)

    def pull_many(self, limit: int) -> list:
        """Up to ``limit`` queued items (at least one; waits while the channel is empty)."""
        if self.role != "reader":
            raise LoomError(f"cannot pull from the output end of %{self.channel.name}", where=f"node @{self.holder.name}")
        return self.channel.pull_many(self.holder, limit)

    def __iter__(self):
        while True:
            try:
                yield self.pull()
            except Broken:
                return

    def chunks(self, limit: int):
        """Iterate over batches of up to ``limit`` items until the channel is broken."""
        while True:
            try:
                yield self.pull_many(limit)
            except Broken:
                return
