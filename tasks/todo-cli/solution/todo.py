"""A small command-line todo manager with storage in a JSON file."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile

PRIORITIES = ("high", "medium", "low")


def load_items(path: str) -> list[dict]:
    """Return the stored items, or [] when the file does not exist."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(data, list):
        raise ValueError(f"{path} does not hold a JSON list")
    return data


def save_items(path: str, items: list[dict]) -> None:
    """Write the items atomically: a temporary file in the same folder, then rename."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".todo-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(items, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _check_due(due: str | None) -> str | None:
    if due is None:
        return None
    try:
        dt.date.fromisoformat(due)
    except (TypeError, ValueError):
        raise ValueError(f"due date must be YYYY-MM-DD, got {due!r}") from None
    if len(due) != 10:
        raise ValueError(f"due date must be YYYY-MM-DD, got {due!r}")
    return due


def add_item(items: list[dict], text: str, priority: str = "medium", due: str | None = None) -> dict:
    """Append a new open item and return it."""
    text = (text or "").strip()
    if not text:
        raise ValueError("text must not be empty")
    if priority not in PRIORITIES:
        raise ValueError(f"priority must be one of {', '.join(PRIORITIES)}, got {priority!r}")
    item = {
        "id": max((i["id"] for i in items), default=0) + 1,
        "text": text,
        "done": False,
        "priority": priority,
        "due": _check_due(due),
    }
    items.append(item)
    return item


def _find(items: list[dict], item_id: int) -> dict:
    for item in items:
        if item["id"] == item_id:
            return item
    raise KeyError(item_id)


def complete_item(items: list[dict], item_id: int) -> dict:
    """Mark an item done and return it."""
    item = _find(items, item_id)
    item["done"] = True
    return item


def remove_item(items: list[dict], item_id: int) -> dict:
    """Remove an item and return it."""
    item = _find(items, item_id)
    items.remove(item)
    return item


def visible_items(items: list[dict], show_all: bool = False, priority: str | None = None) -> list[dict]:
    """Items to list: open ones (or all), optionally of one priority, by priority then id."""
    chosen = [i for i in items if (show_all or not i["done"]) and (priority is None or i["priority"] == priority)]
    return sorted(chosen, key=lambda i: (PRIORITIES.index(i["priority"]), i["id"]))


def format_item(item: dict) -> str:
    """One line for an item, e.g. ``#3 [x] Buy milk (high) due 2026-12-01``."""
    line = f"#{item['id']} [{'x' if item['done'] else ' '}] {item['text']} ({item['priority']})"
    return line + (f" due {item['due']}" if item.get("due") else "")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="todo", description=__doc__)
    parser.add_argument("--file", help="the JSON file (default: $TODO_FILE or ./todo.json)")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="add an item")
    add.add_argument("text")
    add.add_argument("--priority", default="medium")
    add.add_argument("--due")
    lst = sub.add_parser("list", help="list items")
    lst.add_argument("--all", action="store_true")
    lst.add_argument("--priority")
    for name in ("done", "remove"):
        cmd = sub.add_parser(name)
        cmd.add_argument("id", type=int)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    path = args.file or os.environ.get("TODO_FILE") or "todo.json"
    try:
        items = load_items(path)
        if args.command == "add":
            item = add_item(items, args.text, args.priority, args.due)
            save_items(path, items)
            print(f"Added #{item['id']}: {item['text']}")
        elif args.command == "list":
            shown = visible_items(items, args.all, args.priority)
            print("\n".join(format_item(i) for i in shown) if shown else "No items.")
        elif args.command == "done":
            complete_item(items, args.id)
            save_items(path, items)
            print(f"Completed #{args.id}")
        else:
            remove_item(items, args.id)
            save_items(path, items)
            print(f"Removed #{args.id}")
    except KeyError as exc:
        print(f"error: no item with id {exc.args[0]}", file=sys.stderr)
        return 1
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
