"""What the tools compute, apart from the component's bindings, so the unit
tests run on your machine's Python."""


def greeting(name: str) -> str:
    """The greeting for `name`."""
    return f"Hello, {name}!"
