"""rp1 workflow events: a read-only SQLite event source, run projection and live tail.

Entry points: `source.Rp1Source` (feed, current run, timeline), `tail.Tail` (live events),
`machines.discover_machines`. Import them from their modules: the package itself imports nothing, so
the `hud --once` path loads only what it uses. Nothing here imports Textual or Rich, and nothing here
writes the database (`fixtures` is the only writer, for tests and the demo).
"""
