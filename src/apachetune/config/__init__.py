"""Reading httpd configuration: grammar -> lossless tree -> resolved effective config."""

from apachetune.config.parser import parse_file, parse_text
from apachetune.config.tree import Blank, Comment, ConfigFile, Directive, Node, Section
from apachetune.config.words import split_words

__all__ = [
    "Blank", "Comment", "ConfigFile", "Directive", "Node", "Section",
    "parse_file", "parse_text", "split_words",
]
