"""Pure decision logic: no I/O, no Textual, no Rich. Everything that decides lives here."""
