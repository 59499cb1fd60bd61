"""apachetune: Apache httpd configuration linter and MPM tuning advisor."""

__version__ = "0.1.0"
