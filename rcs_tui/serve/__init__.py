"""`rcs-tui serve`: the fleet, console or HUD in a browser, through textual-serve, locked to its owner.

Each browser tab gets its own app process (the same code the terminal runs); every request must carry
the secret token; the apps are read-only unless the owner asks otherwise.
"""
