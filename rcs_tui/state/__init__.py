"""The `.rcs` tree on disk: layout, snapshot reader, safe writes, journal and operations."""
