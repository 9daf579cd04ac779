"""rcs-tui: live HUD and operator recovery console for RCS workflow state."""

__version__ = "0.1.0"
