"""`python -m pushforward.codegen [--check]`: regenerate `ops/generated.py` from derivatives.yaml.

Also runs as `python src/pushforward/codegen` (without importing the package), which
is how to recover when the generated module itself is broken.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run by path: import the generator modules directly
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from emit import emit  # type: ignore
    from load import SpecError, helper_names, load  # type: ignore
else:
    from .emit import emit
    from .load import SpecError, helper_names, load

OUT = Path(__file__).resolve().parent.parent / "ops" / "generated.py"


def generate() -> str:
    """The text the generated module must have (compiled once to catch emitter bugs)."""
    text = emit(load(), helper_names())
    compile(text, str(OUT), "exec")
    return text


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        text = generate()
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if "--check" in argv:
        same = OUT.exists() and OUT.read_text() == text
        print("generated code is up to date" if same else f"{OUT} is stale: run python -m pushforward.codegen")
        return 0 if same else 1
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
