"""A pickle read as data: the opcodes walked one by one into plain values and records, nothing imported, nothing
instantiated, nothing hashed (torch distributed checkpoints keep their ``.metadata`` as a pickle, which torch itself
loads with ``pickle.load``).

What the opcodes would do becomes a record: a global (GLOBAL, STACK_GLOBAL, INST) is :class:`Global` (its module and
name, as text), a call (REDUCE, NEWOBJ, NEWOBJ_EX, OBJ, INST) is :class:`Call`, whose BUILD state and dict items
(SETITEMS on it) are kept in the record. A dict is :class:`Pairs` (its (key, value) pairs in order: keys are never
hashed, so a key may be a record), a set or frozenset a list. Every size is bounded before anything is allocated:
the lengths of strings and bytes against the bytes left, integers, containers, the memo, nesting, and the size of the
value as a tree (a value the memo shares counts each time it is used, so that no DAG of shared tuples can stand for
an exponential tree). An object is never changed once it is part of another (real pickles never do), so that no
value holds itself and those sizes stay exact. Anything else is :class:`PickleRefused`, one line.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

MAX_TEXT = 1 << 20  # a string's or bytes' length, a protocol-0 line's
MAX_INT_BYTES = 16  # LONG1/LONG4: up to 2**127
MAX_ITEMS = 1 << 22  # items of one container
MAX_MEMO = 1 << 24  # memo entries
MAX_DEPTH = 32  # nesting of containers and records (DCP's metadata nests about 10 deep)
MAX_MARKS = 64  # open MARKs at once


class PickleRefused(ValueError):
    """A pickle this reader does not decode: why, in one line."""


@dataclass(frozen=True)
class Global:
    """A global a pickle names: its module and name, as text (never imported)."""

    module: str
    name: str

    def __str__(self) -> str:  # for messages: one line, bounded
        return "".join(c if c.isprintable() else "?" for c in f"{self.module[:80]}.{self.name[:80]}")


@dataclass(eq=False, repr=False)
class Pairs:
    """A pickled dict: its (key, value) pairs in the order stored, none hashed."""

    items: list[tuple[Any, Any]] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Pairs({len(self.items)} items)"


@dataclass(eq=False, repr=False)
class Call:
    """What a pickle would call: ``func`` on ``args`` (``how``: reduce, newobj or obj), then BUILD's ``state`` and
    SETITEMS' ``items`` on the result. Nothing is called."""

    func: Global
    args: tuple
    how: str
    kwargs: Pairs | None = None
    state: Any = None
    items: Pairs = field(default_factory=Pairs)

    def __repr__(self) -> str:
        return f"Call({self.func}, {len(self.args)} args)"


_LEAVES = (str, bytes, int, float, bool, type(None), Global)


class _Reader:
    """The opcode walk; one per pickle."""

    def __init__(self, data: bytes, max_tree: int):
        self.data, self.pos, self.max_tree = data, 0, max_tree
        self.stack: list[Any] = []
        self.marks: list[int] = []
        self.memo: dict[int, Any] = {}
        self.info: dict[int, list] = {}  # id → [depth, tree size, sealed] of each container and record
        self.alive: list[Any] = []  # every container and record made: their ids stay theirs

    # -- bytes -------------------------------------------------------------------------------------

    def take(self, n: int) -> bytes:
        if n < 0 or n > len(self.data) - self.pos:
            raise PickleRefused(f"it claims {n} bytes at byte {self.pos}, and {len(self.data) - self.pos} are left")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def unsigned(self, n: int) -> int:
        return int.from_bytes(self.take(n), "little")

    def sized(self, n: int, limit: int = MAX_TEXT) -> bytes:
        """``n`` bytes of a length prefix, then that many bytes (the length checked before anything is read)."""
        length = self.unsigned(n)
        if length > limit:
            raise PickleRefused(f"it holds a string or integer of {length} bytes at byte {self.pos}, more than {limit}")
        return self.take(length)

    def line(self) -> bytes:
        end = self.data.find(b"\n", self.pos, self.pos + MAX_TEXT + 1)
        if end < 0:
            raise PickleRefused(f"a text line at byte {self.pos} has no end within {MAX_TEXT} bytes")
        text = self.data[self.pos:end]
        self.pos = end + 1
        return text

    # -- values ------------------------------------------------------------------------------------

    def made(self, value: Any, parts: Any = ()) -> Any:
        """A new container or record holding ``parts``, each sealed."""
        self.info[id(value)] = [0, 1, False]
        self.alive.append(value)
        self.add(value, parts)
        return value

    def add(self, holder: Any, parts: Any) -> None:
        """``parts`` become part of ``holder`` (not yet part of anything else): its depth and tree size grow."""
        record = self.info[id(holder)]
        depth, size = record[0], record[1]
        for part in parts:
            if isinstance(part, _LEAVES):
                depth, size = max(depth, 1), size + 1
                continue
            if part is holder:
                raise PickleRefused(f"it puts {type(holder).__name__} inside itself")
            inner = self.info[id(part)]
            inner[2] = True  # sealed: never changed again
            depth, size = max(depth, inner[0] + 1), size + inner[1]
        record[0], record[1] = depth, size
        if depth > MAX_DEPTH:
            raise PickleRefused(f"it nests more than {MAX_DEPTH} deep")
        if size > self.max_tree:
            raise PickleRefused(f"it stands for more than {self.max_tree} values (a structure the memo repeats)")

    def changed(self, target: Any, what: str) -> list:
        record = self.info.get(id(target))
        if record is None:
            raise PickleRefused(f"it applies {what} to {type(target).__name__}")
        if record[2]:
            raise PickleRefused(f"it changes an object with {what} after another object holds it")
        return record

    def push(self, value: Any) -> None:
        self.stack.append(value)

    def pop(self) -> Any:
        if len(self.stack) <= (self.marks[-1] if self.marks else 0):
            raise PickleRefused(f"its stack underflows at byte {self.pos}")
        return self.stack.pop()

    def pop_mark(self) -> list[Any]:
        if not self.marks:
            raise PickleRefused(f"it ends a MARK that was never set, at byte {self.pos}")
        start = self.marks.pop()
        items = self.stack[start:]
        del self.stack[start:]
        if len(items) > MAX_ITEMS:
            raise PickleRefused(f"a container holds more than {MAX_ITEMS} items")
        return items

    def length(self, holder: Any, more: int) -> None:
        n = len(holder.items.items) if isinstance(holder, Call) else len(holder.items) if isinstance(holder, Pairs) else len(holder)
        if n + more > MAX_ITEMS:
            raise PickleRefused(f"a container holds more than {MAX_ITEMS} items")

    # -- opcodes -----------------------------------------------------------------------------------

    def number(self, text: bytes) -> int:
        digits = text[:-1] if text.endswith(b"L") else text
        if len(digits) > 40 or not digits.lstrip(b"-").isdigit():
            raise PickleRefused(f"it holds an integer {text[:40]!r} it cannot read, at byte {self.pos}")
        return int(digits)

    def op_int(self) -> None:
        text = self.line()
        self.push({b"00": False, b"01": True}.get(text) if text in (b"00", b"01") else self.number(text))

    def op_float(self) -> None:
        text = self.line()
        try:
            self.push(float(text[:64]))
        except ValueError:
            raise PickleRefused(f"it holds a number {text[:40]!r} it cannot read") from None

    def text(self, data: bytes, escape: bool = False) -> str:
        try:
            return data.decode("raw_unicode_escape" if escape else "utf-8", "strict" if escape else "surrogatepass")
        except UnicodeDecodeError:
            raise PickleRefused(f"it holds text that is not UTF-8, at byte {self.pos}") from None

    def op_mark(self) -> None:
        if len(self.marks) >= MAX_MARKS:
            raise PickleRefused(f"it opens more than {MAX_MARKS} MARKs at once")
        self.marks.append(len(self.stack))

    def op_pop(self) -> None:
        if self.marks and len(self.stack) == self.marks[-1]:
            self.marks.pop()
        else:
            self.pop()

    def top(self) -> Any:
        if len(self.stack) <= (self.marks[-1] if self.marks else 0):
            raise PickleRefused(f"its stack underflows at byte {self.pos}")
        return self.stack[-1]

    def op_tuple(self, items: list) -> None:
        self.push(self.made(tuple(items), items))

    def pairs(self, items: list) -> list[tuple[Any, Any]]:
        if len(items) % 2:
            raise PickleRefused("it sets a dict's items from an odd number of values")
        return list(zip(items[::2], items[1::2]))

    def op_dict(self) -> None:
        items = self.pop_mark()
        self.push(self.made(Pairs(self.pairs(items)), items))

    def append(self, items: list) -> None:
        target = self.top()
        if not isinstance(target, list):
            raise PickleRefused(f"it appends to {type(target).__name__}, not a list")
        self.changed(target, "APPEND")
        self.length(target, len(items))
        target.extend(items)
        self.add(target, items)

    def setitems(self, items: list) -> None:
        target = self.top()
        if not isinstance(target, (Pairs, Call)):
            raise PickleRefused(f"it sets items of {type(target).__name__}, not a dict")
        self.changed(target, "SETITEMS")
        self.length(target, len(items) // 2)
        holder = target if isinstance(target, Pairs) else target.items
        holder.items.extend(self.pairs(items))
        self.add(target, items)

    def get(self, index: int) -> None:
        if index not in self.memo:
            raise PickleRefused(f"it reads the memo entry {index}, which it never stored")
        self.push(self.memo[index])

    def put(self, index: int) -> None:
        if index not in self.memo and len(self.memo) >= MAX_MEMO:
            raise PickleRefused(f"its memo holds more than {MAX_MEMO} entries")
        self.memo[index] = self.top()

    def glob(self, module: Any, name: Any) -> Global:
        if not isinstance(module, str) or not isinstance(name, str):
            raise PickleRefused("it names a global by something that is not text")
        return Global(module, name)

    def call(self, func: Any, args: Any, how: str, kwargs: Any = None) -> None:
        if not isinstance(func, Global):
            raise PickleRefused(f"it calls {type(func).__name__}, not a global")
        if not isinstance(args, tuple) or (kwargs is not None and not isinstance(kwargs, Pairs)):
            raise PickleRefused(f"it calls {func} with arguments that are not a tuple")
        parts = [args] if kwargs is None else [args, kwargs]
        self.push(self.made(Call(func, args, how, kwargs), parts))

    def op_obj(self) -> None:
        items = self.pop_mark()
        if not items:
            raise PickleRefused("it builds an object (OBJ) of no class")
        self.call(items[0], self.made(tuple(items[1:]), items[1:]), "obj")

    def op_inst(self) -> None:
        func = self.glob(self.text(self.line()), self.text(self.line()))
        items = self.pop_mark()
        self.call(func, self.made(tuple(items), items), "inst")

    def op_build(self) -> None:
        state = self.pop()
        target = self.top()
        if not isinstance(target, Call):
            raise PickleRefused(f"it sets the state of {target}, which is no object it made")
        self.changed(target, "BUILD")
        if target.state is not None:
            raise PickleRefused(f"it sets the state of {target.func} twice")
        target.state = state
        self.add(target, [state])

    def op_newobj_ex(self) -> None:
        kwargs, args, cls = self.pop(), self.pop(), self.pop()
        self.call(cls, args, "newobj", kwargs)

    def op_proto(self) -> None:
        if self.unsigned(1) > 5:
            raise PickleRefused("it is a pickle of a protocol above 5")

    def op_frame(self) -> None:
        size = self.unsigned(8)
        if size > len(self.data) - self.pos:
            raise PickleRefused(f"it frames {size} bytes, and {len(self.data) - self.pos} are left")


def _ops(r: _Reader) -> dict[int, Any]:
    """Each opcode this reader decodes, by its byte: what it does to the reader."""
    signed = lambda n: lambda: r.push(int.from_bytes(r.sized(n, MAX_INT_BYTES), "little", signed=True))  # noqa: E731
    text = lambda n: lambda: r.push(r.text(r.sized(n)))  # noqa: E731
    raw = lambda n: lambda: r.push(bytes(r.sized(n)))  # noqa: E731
    tuple_of = lambda n: lambda: r.op_tuple([r.pop() for _ in range(n)][::-1])  # noqa: E731
    ops = {
        b"N": lambda: r.push(None), b"\x88": lambda: r.push(True), b"\x89": lambda: r.push(False),
        b"I": r.op_int, b"J": lambda: r.push(struct.unpack("<i", r.take(4))[0]), b"K": lambda: r.push(r.unsigned(1)),
        b"M": lambda: r.push(r.unsigned(2)), b"L": lambda: r.push(r.number(r.line())), b"\x8a": signed(1),
        b"\x8b": signed(4), b"F": r.op_float, b"G": lambda: r.push(struct.unpack(">d", r.take(8))[0]),
        b"V": lambda: r.push(r.text(r.line(), escape=True)), b"X": text(4), b"\x8c": text(1), b"\x8d": text(8),
        b"B": raw(4), b"C": raw(1), b"\x8e": raw(8), b"\x96": raw(8),
        b"]": lambda: r.push(r.made([])), b")": lambda: r.push(r.made(())), b"}": lambda: r.push(r.made(Pairs())),
        b"\x8f": lambda: r.push(r.made([])), b"(": r.op_mark, b"l": lambda: r.push(r.made(*[r.pop_mark()] * 2)),
        b"t": lambda: r.op_tuple(r.pop_mark()), b"d": r.op_dict, b"\x91": lambda: r.push(r.made(*[r.pop_mark()] * 2)),
        b"\x85": tuple_of(1), b"\x86": tuple_of(2), b"\x87": tuple_of(3),
        b"a": lambda: r.append([r.pop()]), b"e": lambda: r.append(r.pop_mark()), b"\x90": lambda: r.append(r.pop_mark()),
        b"s": lambda: r.setitems([*reversed([r.pop(), r.pop()])]), b"u": lambda: r.setitems(r.pop_mark()),
        b"0": r.op_pop, b"1": r.pop_mark, b"2": lambda: r.push(r.top()),
        b"g": lambda: r.get(r.number(r.line())), b"h": lambda: r.get(r.unsigned(1)), b"j": lambda: r.get(r.unsigned(4)),
        b"p": lambda: r.put(r.number(r.line())), b"q": lambda: r.put(r.unsigned(1)), b"r": lambda: r.put(r.unsigned(4)),
        b"\x94": lambda: r.put(len(r.memo)),
        b"c": lambda: r.push(r.glob(r.text(r.line()), r.text(r.line()))),
        b"\x93": lambda: r.push(r.glob(*reversed([r.pop(), r.pop()]))),
        b"R": lambda: r.call(*reversed([r.pop(), r.pop()]), "reduce"),
        b"\x81": lambda: r.call(*reversed([r.pop(), r.pop()]), "newobj"),
        b"\x92": r.op_newobj_ex,
        b"o": r.op_obj, b"i": r.op_inst, b"b": r.op_build, b"\x80": r.op_proto, b"\x95": r.op_frame,
    }
    return {k[0]: v for k, v in ops.items()}


def decode(data: bytes, max_tree: int | None = None) -> Any:
    """The value a pickle holds, as data (plain values, :class:`Global`, :class:`Call`, :class:`Pairs`); ``max_tree``:
    the most values it may stand for, counted as a tree (by default 8 per byte, and 10,000 more)."""
    r = _Reader(bytes(data), 8 * len(data) + 10_000 if max_tree is None else max_tree)
    ops, data = _ops(r), r.data
    while r.pos < len(data):
        code = data[r.pos]
        r.pos += 1
        if code == 0x2E:  # STOP
            value = r.pop()
            if r.stack or r.marks:
                raise PickleRefused(f"it stops with {len(r.stack)} values and {len(r.marks)} MARKs left over")
            return value
        op = ops.get(code)
        if op is None:
            raise PickleRefused(f"it holds the opcode {bytes([code])!r} at byte {r.pos - 1}, which this reader does not "
                                f"decode")
        op()
    raise PickleRefused("it ends before its STOP opcode")
