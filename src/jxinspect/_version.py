"""The installed version, alone so that importing it loads nothing else of ours."""

__version__ = "0.1.0"
