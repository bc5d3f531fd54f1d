"""Greet someone by name, from Python or the command line."""

import argparse
import sys


def greet(name: str, shout: bool = False) -> str:
    name = name.strip()
    if not name:
        raise ValueError("name must not be empty")
    message = f"Hello, {name}!"
    return message.upper() if shout else message


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Print a greeting.")
    parser.add_argument("name")
    parser.add_argument("--shout", action="store_true", help="upper-case the greeting")
    args = parser.parse_args(argv)
    try:
        print(greet(args.name, shout=args.shout))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
