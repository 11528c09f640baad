"""`referee` and `python -m referee`: SIGTERM and SIGINT are taken as a stop request from the
first line the referee runs (see stopping.py), before the command line's own imports."""

from referee.live.stopping import stop_request

stop_request.install()


def main() -> int:
    from referee.cli.main import main as cli_main  # after the stop handler is installed (see the docstring)

    return cli_main()


if __name__ == "__main__":
    import sys

    sys.exit(main())
