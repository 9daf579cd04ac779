"""The operator recovery console: shows RCS state and runs every repair through the core."""

from rcs_tui.ui.console.app import ConsoleApp

__all__ = ["ConsoleApp"]
