"""The file layer: every read, write, confinement check and size bound on disk, in one place."""
