"""The Lark grammars of msinspect, installed as package data (``msinspect.grammars``)."""
