"""Lark parse tree -> splice model: the thin Transformer of lark's how-to.

The transformer is told where its text sits in the file (``base_pos``, ``base_line``) because
the chunked parser hands Lark one statement or one masked module skeleton at a time; spans and
lines are shifted back to file coordinates here, so every node carries real positions.
``keep_tokens`` leaves Lark tokens (``str`` subclasses with positions) in the model so that the
shape cache can find where each variable token went (see ``shapes.py``).
"""
from __future__ import annotations

from lark import Token, Transformer, Tree, v_args

from . import model as m
from .tokens import TokInt
from .printer import canonical_params


def _flat_tokens(children):
    out = []
    for c in children:
        if isinstance(c, Tree):
            out.extend(_flat_tokens(c.children))
        elif isinstance(c, Token):
            out.append(c)
        elif isinstance(c, (list, tuple)):
            out.extend(_flat_tokens(c))
    return out


class ModelBuilder(Transformer):
    def __init__(self, base_pos: int = 0, base_line: int = 1, keep_tokens: bool = False):
        super().__init__(visit_tokens=False)
        self.base_pos = base_pos
        self.base_line = base_line
        self.keep_tokens = keep_tokens

    # -- small functions -------------------------------------------------------------------------
    def _s(self, tok):
        return tok if self.keep_tokens else str(tok)

    def _span(self, meta):
        if getattr(meta, "empty", True):
            return None
        return (meta.start_pos + self.base_pos, meta.end_pos + self.base_pos)

    def _line(self, meta):
        if getattr(meta, "empty", True):
            return 0
        return meta.line + self.base_line - 1

    def _directive(self, meta, children):
        toks = _flat_tokens(children)
        terminated = bool(toks) and toks[-1] == ";"
        if terminated:
            toks = toks[:-1]
        return m.Directive(self._s(toks[0]), tuple(self._s(t) for t in toks[1:]),
                           self._span(meta), self._line(meta), terminated)

    # -- module --------------------------------------------------------------------------
    def module(self, children):
        return tuple(children)

    top_chunk = module
    body_items = module
    section_items = module

    def start(self, children):
        return children[0]

    @v_args(meta=True)
    def version(self, meta, children):
        return self._directive(meta, children)

    target = address_size = file = loc = pragma = alias = targets_list = version
    perf = perf_pragma = name_pragma = version

    def loc_function_name(self, children):
        return Tree("loc_attr", children)

    loc_inlined_at = loc_function_name

    # -- declarations --------------------------------------------------------------------
    def linkage(self, children):
        return self._s(children[0])

    space = func_kind = linkage

    def decl_attr(self, children):
        words = tuple(self._s(c) for c in children)
        if words[0] == ".attribute":      # one attribute word, as written without spaces:
            return ("".join(words),)      # `.attribute(.managed)`, not its five tokens
        return words

    def modifier(self, children):
        return self._s(children[0])

    def _int(self, tok):
        value = int(m.parse_number(str(tok)))
        return TokInt(value, tok.start_pos, str(tok)) if self.keep_tokens else value

    def range(self, children):
        return ("range", self._int(children[0]))

    def dim(self, children):
        return ("dim", self._int(children[0]) if children else None)

    def declarator(self, children):
        name = self._s(children[0])
        count = None
        dims = []
        init = None
        for c in children[1:]:
            if isinstance(c, tuple) and c and c[0] == "range":
                count = c[1]
            elif isinstance(c, tuple) and c and c[0] == "dim":
                dims.append(c[1])
            else:
                init = c
        return m.Declarator(name, count, tuple(dims), init)

    def init_list(self, children):
        return tuple(children)

    def init_value(self, children):
        c = children[0]
        return c.text if isinstance(c, m.Imm) else self._s(c)

    def init_symbol(self, children):
        return "+".join(str(c) for c in children)

    def init_generic(self, children):
        text = f"{children[0]}({children[1]})"
        if len(children) > 2:
            text += f"+{children[2]}"
        return text

    def init_op(self, children):
        """ZLUDA's IR ``= ld.b64 %3``: the dotted opcode, then the operands."""
        is_word = [isinstance(c, Token) and c.type in ("IDENT", "DOTNAME") for c in children]
        n = is_word.index(False) if False in is_word else len(children)
        head = "".join(str(c) for c in children[:n])
        rest = [str(c) for c in children[n:]]
        return head + (" " + ", ".join(rest) if rest else "")

    def number(self, children):
        return children[0]

    @v_args(meta=True)
    def decl(self, meta, children):
        linkage, attrs, decls = [], [], []
        space = None
        for c in children:
            if isinstance(c, m.Declarator):
                decls.append(c)
            elif isinstance(c, tuple):
                attrs.extend(c)
            elif space is None and c not in (".visible", ".extern", ".weak", ".common"):
                space = c
            elif space is None:
                linkage.append(c)
            else:
                attrs.append(c)
        return m.Decl(tuple(linkage), space, tuple(attrs), tuple(decls),
                      self._span(meta), self._line(meta))

    def param(self, children):
        space = children[0]
        attrs, decl = [], None
        for c in children[1:]:
            if isinstance(c, m.Declarator):
                decl = c
            else:
                attrs.extend(c)
        return m.Param(space, tuple(attrs), decl)

    def param_list(self, children):
        return ("params", tuple(children))

    @v_args(meta=True)
    def function(self, meta, children):
        linkage, perf = [], []
        kind = name = body = None
        returns = params = None
        for c in children:
            if isinstance(c, tuple) and c and c[0] == "params":
                if name is None:
                    returns = c[1]
                else:
                    params = c[1]
            elif isinstance(c, m.Block):
                body = c
            elif isinstance(c, m.Directive):
                perf.append(c)
            elif kind is None and c in (".entry", ".func"):
                kind = c
            elif kind is None:
                linkage.append(c)
            else:
                name = self._s(c)
        return m.Function(kind, tuple(linkage), name, returns, params, tuple(perf), body,
                          self._span(meta), self._line(meta))

    # -- sections ------------------------------------------------------------------------
    @v_args(meta=True)
    def section(self, meta, children):
        return m.Section(self._s(children[0]), tuple(children[1:]), self._span(meta),
                         self._line(meta))

    def section_data(self, children):
        return m.SectionData(self._s(children[0]), tuple(
            c.text if isinstance(c, m.Imm) else self._s(c) if isinstance(c, Token) else c
            for c in children[1:]))

    def sv_symbol(self, children):
        return self._s(children[0])

    def sv_plus(self, children):
        return m.Offset(m.Sym(self._s(children[0])), self._s(children[1]))

    def sv_minus(self, children):
        return f"{children[0]}-{children[1]}"

    # -- bodies --------------------------------------------------------------------------
    @v_args(meta=True)
    def block(self, meta, children):
        return m.Block(tuple(children), self._span(meta), self._line(meta))

    @v_args(meta=True)
    def label(self, meta, children):
        return m.Label(self._s(children[0]), self._span(meta), self._line(meta))

    @v_args(meta=True)
    def marker(self, meta, children):
        return m.Instruction(None, "<" + str(children[0]) + ">", (), tuple(children[1:]),
                             self._span(meta), self._line(meta))

    @v_args(meta=True)
    def callprototype(self, meta, children):

        parts = []
        for c in children:
            if isinstance(c, tuple) and c and c[0] == "params":
                parts.append(canonical_params(c[1]))
            else:
                parts.append(self._s(c))
        return m.Directive(".callprototype", tuple(parts), self._span(meta), self._line(meta), True)

    def guard(self, children):
        if len(children) == 2:
            return m.Guard(self._s(children[1]), True)
        return m.Guard(self._s(children[0]), False)

    @v_args(meta=True)
    def instruction(self, meta, children):
        i = 0
        guard = None
        if isinstance(children[0], m.Guard):
            guard = children[0]
            i = 1
        opcode = self._s(children[i])
        i += 1
        mods = []
        while i < len(children) and isinstance(children[i], str) and not isinstance(
                children[i], (m.Reg, m.Sym, m.Imm)) and children[i].startswith("."):
            mods.append(children[i])
            i += 1
        return m.Instruction(guard, opcode, tuple(mods), tuple(children[i:]),
                             self._span(meta), self._line(meta))

    # -- operands ------------------------------------------------------------------------
    def reg(self, children):
        return m.Reg(self._s(children[0]))

    def sym(self, children):
        return m.Sym(self._s(children[0]))

    def offset(self, children):
        return m.Offset(children[0], self._s(children[1]))

    def pair(self, children):
        return m.Pair(children[0], children[1])

    def not_(self, children):
        return m.Not(children[1])

    def vector(self, children):
        return m.Vec(tuple(children))

    def addr(self, children):
        return m.Addr(tuple(children))

    def parens(self, children):
        return m.ParenList(tuple(children))


def _number_imm(self, children):
    return m.Imm(self._s(children[0]))


# numbers are operands (Imm) inside instructions, plain text elsewhere; the grammar uses one
# `number` rule, so operands wrap it here.
ModelBuilder.number = _number_imm  # type: ignore[method-assign]
