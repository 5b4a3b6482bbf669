"""``python -m buildwire``: the ``buildwire`` command, the same as the installed script."""

from buildwire._cli import main

if __name__ == "__main__":
    main()
