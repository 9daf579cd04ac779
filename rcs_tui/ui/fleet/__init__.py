"""The fleet TUI: every project in one table, an alerts list, and a per-project view with its actions."""
