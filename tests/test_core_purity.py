"""`rcs_tui.core` must stay free of Textual and Rich (it is shared by the CLI, HUD line and TUI)."""

import subprocess
import sys


def test_core_imports_neither_textual_nor_rich():
    code = (
        "import sys, pkgutil, importlib, rcs_tui.core as c\n"
        "for m in pkgutil.iter_modules(c.__path__): importlib.import_module('rcs_tui.core.' + m.name)\n"
        "import rcs_tui.state.reader, rcs_tui.state.ops\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
