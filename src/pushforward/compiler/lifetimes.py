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

from .recording import Var

__all__ = ["Lifetimes"]


class Lifetimes:
    """Per program: the statements reading each Var (`readers`: id -> statement indices, in order),
    each Var's last use (`last`, writes through it included), and the read and write positions of each root."""

    def __init__(self, stmts: list) -> None:
        self.readers: dict = {}
        self.last: dict = {}
        self._writes: dict = {}
        self._root_reads: dict = {}
        for i, s in enumerate(stmts):
            for v in s.reads:
                r = self.readers.setdefault(id(v), [])
                if not r or r[-1] != i:
                    r.append(i)
                self.last[id(v)] = i
                pos = self._root_reads.setdefault(v.root, [])
                if not pos or pos[-1] != i:
                    pos.append(i)
            for w in s.writes:
                if type(w) is Var:
                    self.last[id(w)] = i
                    pos = self._writes.setdefault(w.root, [])
                    if not pos or pos[-1] != i:
                        pos.append(i)

    def written(self, root, i: int, j: int) -> bool:
        """A statement k with i < k <= j writes into buffer `root`."""
        pos = self._writes.get(root)
        if not pos:
            return False
        k = bisect.bisect_right(pos, i)
        return k < len(pos) and pos[k] <= j

    def read(self, root, i: int, j: int) -> bool:
        """A statement k with i < k <= j reads buffer `root` (through any variable on it)."""
        pos = self._root_reads.get(root)
        if not pos:
            return False
        k = bisect.bisect_right(pos, i)
        return k < len(pos) and pos[k] <= j

    def ever_written(self, root) -> bool:
        return root in self._writes
