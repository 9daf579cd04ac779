"""Textual stylesheets (.tcss), shipped as package data."""
