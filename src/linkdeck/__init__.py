"""linkdeck: watch the interfaces of many hosts at once, live, and test the path between them."""

__version__ = "0.1.0"
