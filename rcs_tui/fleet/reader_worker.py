"""A helper process of `fleet --once`: reads the local projects named on stdin, one at a time.

Each input line is a JSON string (a project root); each output line is a JSON object: `{"doc": …}` (the
project's document, cut to what `fleet --once` reports), `{"unreadable": reason}` or `{"error": reason}`.
The fleet runs a bounded number of these next to its own reads (a second core reads projects too) and
kills one whose project runs past its time; it ends when stdin closes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    from rcs_tui.files.collector import one_shot
    from rcs_tui.fleet.once import once_doc, read_local
    from rcs_tui.fleet.source import Unreadable

    one_shot()
    for line in sys.stdin:
        out: dict[str, object]
        try:
            root = json.loads(line)
            out = {"doc": once_doc(read_local(Path(root)))}
        except Unreadable as exc:
            out = {"unreadable": str(exc)}
        except Exception as exc:  # noqa: BLE001 - one project's failure is that project's row
            out = {"error": f"read error: {type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
