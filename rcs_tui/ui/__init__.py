"""Textual front ends: the live HUD (`hud_app`), its widgets, and the watcher the console reuses."""
