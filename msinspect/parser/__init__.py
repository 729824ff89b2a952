"""Parsing MindSpore IR text with the Lark grammar in ``grammars/``."""
from msinspect.parser.core import parse_file, parse_text
from msinspect.parser.reading import read_text

__all__ = ["parse_file", "parse_text", "read_text"]
