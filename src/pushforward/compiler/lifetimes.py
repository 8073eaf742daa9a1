"""Where each variable of a program is read and where each buffer is written, for the rewrites
that replace a copy by what it copies (peephole.py) or a 0-d array by a NumPy scalar (scalars.py).

Both rewrites hold only while the memory they read is not written: `written(root, i, j)` answers
"does a statement in i < k <= j write into buffer `root`" in log time, from the sorted positions
of each buffer's writes, so a pass over the whole program stays linear in it.

>>> import numpy as np
>>> from pushforward.compiler.recording import Stmt, Var
>>> a = Var("a", np.zeros(2), root=1)
>>> s = Stmt("call", np.copyto, (a, 1.0), {}, "copyto")
>>> s.writes.append(a)
>>> lt = Lifetimes([s])
>>> lt.written(1, -1, 0), lt.written(1, 0, 5)
(True, False)
"""

from __future__ import annotations

import bisect
import collections
import itertools

from .recording import Var

__all__ = ["Lifetimes", "read_counts"]


class Lifetimes:
    """Per program: the statements reading each Var (`readers`: id -> statement indices, in order),
    each Var's last use (`last`, writes through it included), and the read and write positions of each root.

    The write positions are found at once (most statements write nothing); the reads, which every
    statement has, only when a pass asks for them (half the passes only ask about writes)."""

    def __init__(self, stmts: list) -> None:
        self._stmts = stmts
        self._readers: dict | None = None
        self._last: dict | None = None
        self._root_reads: dict | None = None
        writes: dict = {}
        for i, s in enumerate(stmts):
            if s.writes:
                for w in s.writes:
                    if type(w) is Var:
                        pos = writes.get(w.root)
                        if pos is None:
                            writes[w.root] = [i]
                        elif pos[-1] != i:
                            pos.append(i)
        self._writes = writes

    @property
    def readers(self) -> dict:
        if self._readers is None:
            self._scan_reads()
        return self._readers

    @property
    def last(self) -> dict:
        if self._last is None:
            self._scan_reads()
        return self._last

    def _scan_reads(self) -> None:
        readers: dict = {}
        last: dict = {}
        root_reads: dict = {}
        for i, s in enumerate(self._stmts):
            for v in s.reads:
                k = id(v)
                r = readers.get(k)
                if r is None:
                    readers[k] = [i]
                elif r[-1] != i:
                    r.append(i)
                last[k] = i
                pos = root_reads.get(v.root)
                if pos is None:
                    root_reads[v.root] = [i]
                elif pos[-1] != i:
                    pos.append(i)
            if s.writes:
                for w in s.writes:
                    if type(w) is Var:
                        last[id(w)] = i
        self._readers, self._last, self._root_reads = readers, last, root_reads

    def written(self, root, i: int, j: int) -> bool:
        """A statement k with i < k <= j writes into buffer `root`."""
        pos = self._writes.get(root)
        if not pos:
            return False
        k = bisect.bisect_right(pos, i)
        return k < len(pos) and pos[k] <= j

    def read(self, root, i: int, j: int) -> bool:
        """A statement k with i < k <= j reads buffer `root` (through any variable on it)."""
        if self._root_reads is None:
            self._scan_reads()
        pos = self._root_reads.get(root)
        if not pos:
            return False
        k = bisect.bisect_right(pos, i)
        return k < len(pos) and pos[k] <= j

    def writes_in(self, root, i: int, j: int, limit: int):
        """The positions k with i < k <= j of the statements writing into buffer `root`, or None
        when there are more than `limit` (a pass looking at each stays linear in the program)."""
        pos = self._writes.get(root)
        if not pos:
            return []
        k = bisect.bisect_right(pos, i)
        end = bisect.bisect_right(pos, j, k)
        return pos[k:end] if end - k <= limit else None

    def ever_written(self, root) -> bool:
        return root in self._writes


def read_counts(stmts: list) -> collections.Counter:
    """How many times each Var is read (a Counter keyed by the Vars: they hash by identity)."""
    return collections.Counter(itertools.chain.from_iterable([s.reads for s in stmts]))
