"""Pure renderers: snapshot (+ width, clock) in, text or JSON out. No Textual here."""
