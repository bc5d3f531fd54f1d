"""CLI command groups. Each module has ``register(app: typer.Typer) -> None``."""
