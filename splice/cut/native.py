"""Native phases: hand-written PTX fragments against a symbolic ABI.

A native phase file is a list of PTX statements (no ``.entry`` around it) that names the cut's
live-ins and live-outs by role — ``%a0…``, ``%b0…``, ``%c0…``, ``%d0…`` for an mma phase,
``%in0…``/``%out0…`` for other cuts — plus named values (``%W``) and its own scratch
registers.  A header in a comment block declares template parameters and scratch types::

    // splice-native:
    //   params: {woff: 8512}          # defaults; the recipe's cut can override them
    //   scratch: {w: .b64, q<8>: .b32, p: .pred}

``{{ expr }}`` anywhere in the body is a template expression (integers, + - * // %, names from
the parameters and the cut's facts: ``phase``, ``first``, ``last``, ``mma``, ``weight_lo``,
``weight_hi``, ``slot_stride``, ``entry``, ``param0``).  Scratch may also be declared with
ordinary ``.reg`` lines in the body.

The body is parsed with ``splice.ptx`` (wrapped in a dummy entry); syntax errors are reported
at the native file's own line and column.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import SpliceError
from ..ptx import model as m
from ..ptx.errors import PtxSyntaxError, source_line

_WRAP_PRE = ".version 8.0\n.target sm_90\n.address_size 64\n.entry __splice_native()\n{\n"
_WRAP_LINES = _WRAP_PRE.count("\n")
_WRAP_POST = "\n}\n"

_TEMPLATE = re.compile(r"\{\{(.*?)\}\}")
_HEADER = re.compile(r"^\s*//\s*splice-native\s*:")
_SCRATCH_RANGE = re.compile(r"^%?([A-Za-z_$][\w$]*)<(\d+)>$")

REG_WIDTH = {
    ".pred": 1, ".b8": 8, ".u8": 8, ".s8": 8, ".b16": 16, ".u16": 16, ".s16": 16, ".f16": 16,
    ".bf16": 16, ".e4m3x2": 16, ".e5m2x2": 16, ".b32": 32, ".u32": 32, ".s32": 32, ".f32": 32,
    ".f16x2": 32, ".bf16x2": 32, ".tf32": 32, ".b64": 64, ".u64": 64, ".s64": 64, ".f64": 64,
    ".b128": 128,
}


@dataclass
class NativePhase:
    path: str
    source: str                   # the file's text as written
    text: str                     # after template substitution (same line count)
    params: dict                  # effective template parameters
    scratch: dict                 # scratch register name (with %) -> type
    body: tuple                   # parsed statements (Instruction/Label/Block), Decls removed
    header_line: int = 1
    used: dict = field(default_factory=dict)   # register -> first native line using it

    def line(self, node) -> int:
        """The native file's line of a parsed statement."""
        return max(1, node.line - _WRAP_LINES)

    def error(self, message: str, line: Optional[int] = None, detail: str = "") -> SpliceError:
        return SpliceError(message, self.path, line or self.header_line, None, detail)


# --------------------------------------------------------------------------------------------
# template expressions
# --------------------------------------------------------------------------------------------

_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load, ast.Add,
            ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.USub, ast.UAdd, ast.Div, ast.Pow,
            ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr)


def eval_expr(expr: str, env: dict):
    """Evaluate a template expression: arithmetic over integers and names in ``env``."""
    tree = ast.parse(expr.strip(), mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ValueError(f"not allowed in a template expression: {type(node).__name__}")
        if isinstance(node, ast.Name) and node.id not in env:
            raise KeyError(node.id)
    return eval(compile(tree, "<template>", "eval"), {"__builtins__": {}}, dict(env))  # noqa: S307


def substitute(text: str, env: dict, path: str) -> str:
    def repl(mt):
        expr = mt.group(1)
        line = text.count("\n", 0, mt.start()) + 1
        try:
            val = eval_expr(expr, env)
        except KeyError as exc:
            raise SpliceError(f"unknown template parameter {exc.args[0]!r} in {{{{{expr.strip()}}}}}"
                              f" (known: {', '.join(sorted(env)) or 'none'})", path, line,
                              mt.start() - text.rfind("\n", 0, mt.start())) from None
        except (ValueError, SyntaxError, TypeError, ZeroDivisionError) as exc:
            raise SpliceError(f"bad template expression {{{{{expr.strip()}}}}}: {exc}", path, line,
                              mt.start() - text.rfind("\n", 0, mt.start())) from None
        if isinstance(val, float) and val.is_integer():
            val = int(val)
        return str(val)

    return _TEMPLATE.sub(repl, text)


# --------------------------------------------------------------------------------------------
# header
# --------------------------------------------------------------------------------------------

def read_header(text: str, path: str) -> tuple:
    """(header dict, first line) of the ``// splice-native:`` comment block, ({}, 1) if none."""
    import yaml

    lines = text.split("\n")
    for i, ln in enumerate(lines):
        if not _HEADER.match(ln):
            continue
        block = [re.sub(r"^\s*//\s?", "", ln)]
        for nxt in lines[i + 1:]:
            if not nxt.strip().startswith("//") or _HEADER.match(nxt):
                break
            block.append(re.sub(r"^\s*//\s?", "", nxt))
        try:
            data = yaml.safe_load("\n".join(block)) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = i + 1 + (mark.line if mark else 0)
            raise SpliceError(f"bad splice-native header: {getattr(exc, 'problem', exc)}", path, line) from None
        hdr = data.get("splice-native") or {}
        if not isinstance(hdr, dict):
            raise SpliceError("splice-native header must be a mapping (params:, scratch:)", path, i + 1)
        unknown = set(hdr) - {"params", "scratch", "abi", "description", "schedule"}
        if unknown:
            raise SpliceError(f"unknown splice-native header key {sorted(unknown)[0]!r} "
                              "(expected params, scratch, abi, description, schedule)", path, i + 1)
        return hdr, i + 1
    return {}, 1


def _scratch_from_header(spec, path, line) -> dict:
    out = {}
    if not spec:
        return out
    if not isinstance(spec, dict):
        raise SpliceError("scratch: must map register names to types, e.g. {t: .b64}", path, line)
    for name, typ in spec.items():
        if not isinstance(name, str):
            raise SpliceError(f"scratch name {name!r} is not a string (YAML reads off/on/yes/no as "
                              "booleans: quote it)", path, line)
        typ = str(typ)
        if not typ.startswith("."):
            typ = "." + typ
        if typ not in REG_WIDTH:
            raise SpliceError(f"scratch register {name!r}: unknown type {typ}", path, line)
        mt = _SCRATCH_RANGE.match(str(name))
        if mt:
            for k in range(int(mt.group(2))):
                out[f"%{mt.group(1)}{k}"] = typ
        else:
            n = str(name)
            out[n if n.startswith("%") else "%" + n] = typ
    return out


# --------------------------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------------------------

def load_native(path, params: Optional[dict] = None, context: Optional[dict] = None,
                display: Optional[str] = None) -> NativePhase:
    p = Path(path)
    shown = display or str(path)
    try:
        source = p.read_text()
    except FileNotFoundError:
        raise SpliceError("native phase file not found", shown) from None
    return parse_native(source, shown, params, context)


def parse_native(source: str, path: str = "<native>", params: Optional[dict] = None,
                 context: Optional[dict] = None) -> NativePhase:
    from ..ptx import parse

    hdr, hline = read_header(source, path)
    env = dict(context or {})
    defaults = hdr.get("params") or {}
    if not isinstance(defaults, dict):
        raise SpliceError("params: must be a mapping of names to values", path, hline)
    env.update(defaults)
    env.update(params or {})
    # parameters may themselves be expressions over the cut's facts ("weight_lo + 512")
    for k, v in list(env.items()):
        if isinstance(v, str) and k in (set(defaults) | set(params or {})):
            try:
                env[k] = eval_expr(v, {kk: vv for kk, vv in env.items() if kk != k})
            except (KeyError, ValueError, SyntaxError, TypeError):
                pass
    text = substitute(source, env, path)
    if text.count("\n") != source.count("\n"):
        raise SpliceError("template substitution must not add lines", path, hline)
    wrapped = _WRAP_PRE + text + _WRAP_POST
    try:
        mod = parse(wrapped, path, cache=False)
    except PtxSyntaxError as exc:
        line = exc.line - _WRAP_LINES
        if line < 1 or line > text.count("\n") + 1:
            line = max(1, min(line, text.count("\n") + 1))
            msg = exc.message + " (unbalanced braces in the native phase?)"
        else:
            msg = exc.message
        raise PtxSyntaxError(path, line, exc.column, msg, source_line(text, line)) from None
    fn = mod.function("__splice_native")
    scratch = _scratch_from_header(hdr.get("scratch"), path, hline)
    body = []

    def collect(items, out):
        for it in items:
            if isinstance(it, m.Decl):
                if it.space != ".reg":
                    raise SpliceError(f"only .reg declarations are allowed in a native phase, not {it.space}",
                                      path, it.line - _WRAP_LINES)
                for d in it.declarators:
                    if d.count is not None:
                        base = d.name
                        for k in range(d.count):
                            scratch[f"{base}{k}"] = it.type
                    else:
                        scratch[d.name] = it.type
            elif isinstance(it, m.Block):
                inner = []
                collect(it.items, inner)
                out.append(m.Block(tuple(inner), it.span, it.line))
            elif isinstance(it, m.Directive):
                if it.name == ".pragma":      # e.g. "nounroll" on a native loop: kept in place
                    out.append(it)
                    continue
                if it.name in (".loc", ".file"):
                    continue
                raise SpliceError(f"directive {it.name} is not allowed in a native phase", path,
                                  it.line - _WRAP_LINES)
            else:
                out.append(it)

    collect(fn.body.items, body)
    nat = NativePhase(path, source, text, {k: env[k] for k in env if k in defaults or k in (params or {})},
                      scratch, tuple(body), hline)
    for st in m.walk(nat.body):
        if isinstance(st, m.Instruction):
            regs = []
            if st.guard is not None:
                regs.append(st.guard.pred)
            for o in st.operands:
                _all_regs(o, regs)
            for r in regs:
                nat.used.setdefault(r, nat.line(st))
    return nat


def _all_regs(op, out):
    if isinstance(op, m.Reg):
        if not op.special:
            out.append(op.name)
    elif isinstance(op, (m.Vec, m.Addr, m.ParenList)):
        for x in op.items:
            _all_regs(x, out)
    elif isinstance(op, m.Offset):
        _all_regs(op.base, out)
    elif isinstance(op, m.Not):
        _all_regs(op.operand, out)
    elif isinstance(op, m.Pair):
        _all_regs(op.first, out)
        _all_regs(op.second, out)
    return out


# --------------------------------------------------------------------------------------------
# renaming (a model walk, never a regex over PTX)
# --------------------------------------------------------------------------------------------

def rename_operand(op, regs: dict, labels: dict):
    if isinstance(op, m.Reg):
        new = regs.get(op.name)
        return m.Reg(new) if new else op
    if isinstance(op, m.Sym):
        new = labels.get(op.name) or regs.get(op.name)
        return m.Sym(new) if new else op
    if isinstance(op, m.Vec):
        return m.Vec(tuple(rename_operand(x, regs, labels) for x in op.items))
    if isinstance(op, m.Addr):
        return m.Addr(tuple(rename_operand(x, regs, labels) for x in op.items))
    if isinstance(op, m.ParenList):
        return m.ParenList(tuple(rename_operand(x, regs, labels) for x in op.items))
    if isinstance(op, m.Offset):
        return m.Offset(rename_operand(op.base, regs, labels), op.imm)
    if isinstance(op, m.Not):
        return m.Not(rename_operand(op.operand, regs, labels))
    if isinstance(op, m.Pair):
        return m.Pair(rename_operand(op.first, regs, labels), rename_operand(op.second, regs, labels))
    return op


def rename_node(node, regs: dict, labels: dict):
    if isinstance(node, m.Instruction):
        guard = node.guard
        if guard is not None and guard.pred in regs:
            guard = m.Guard(regs[guard.pred], guard.negated)
        return m.Instruction(guard, node.opcode, node.modifiers,
                             tuple(rename_operand(o, regs, labels) for o in node.operands))
    if isinstance(node, m.Label):
        return m.Label(labels.get(node.name, node.name))
    if isinstance(node, m.Block):
        return m.Block(tuple(rename_node(x, regs, labels) for x in node.items))
    return node


def render(nodes, indent: str = "\t") -> list:
    """Canonical text lines of statements (Blocks as indented ``{ }``)."""
    out = []
    for n in nodes:
        if isinstance(n, m.Block):
            out.append(indent + "{")
            out.extend(render(n.items, indent + "\t"))
            out.append(indent + "}")
        elif isinstance(n, m.Label):
            out.append(n.name + ":")
        else:
            out.append(indent + canonical_node(n, indent))
    return out


def canonical_node(node, indent=""):
    try:
        from ..ptx.printer import canonical_node as cn
    except ImportError:  # the printer was called emit.py before
        from ..ptx.emit import canonical_node as cn  # type: ignore
    return cn(node, indent)


def labels_of(nodes) -> list:
    return [n.name for n in m.walk(nodes) if isinstance(n, m.Label)]
