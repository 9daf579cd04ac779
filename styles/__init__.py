"""Textual stylesheets (.tcss), installed as the package rcs_tui.styles."""
