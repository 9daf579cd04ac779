"""Allow `python -m rcs_tui`."""

from rcs_tui.cli import main

if __name__ == "__main__":
    main()
