"""pisess: a read-only inspector for the session files of the pi coding agent."""

__version__ = "0.1.0"
