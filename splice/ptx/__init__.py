"""splice.ptx: PTX text <-> model.  parse -> lossless model -> emit; the notes' statement index.

    from splice.ptx import parse_file, emit, canonical, statement_index, attach
"""
from .printer import canonical, emit
from .errors import PtxSyntaxError
from .index import IndexedStatement, Stmt, attach, statement_index
from .locate import operand_spans
from .model import (Addr, Block, Decl, Declarator, Directive, Function, Guard, Imm, Instruction,
                    Label, Module, Not, Offset, Pair, Param, ParenList, Raw, Reg, Section, Sym,
                    Vec, walk)
from .parser import parse, parse_file

__all__ = [
    "parse", "parse_file", "emit", "canonical", "statement_index", "attach", "IndexedStatement",
    "operand_spans",
    "Stmt", "PtxSyntaxError", "Addr", "Block", "Decl", "Declarator", "Directive", "Function",
    "Guard", "Imm", "Instruction", "Label", "Module", "Not", "Offset", "Pair", "Param",
    "ParenList", "Raw", "Reg", "Section", "Sym", "Vec", "walk",
]
