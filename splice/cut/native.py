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
``weight_hi``, ``slot_stride``, ``entry``, ``param0``), on one line; any other ``{{`` or ``}}``
outside a comment is an unexpanded template, an error at its line.  Scratch may also be declared with
ordinary ``.reg`` lines in the body.

The body is parsed with ``splice.ptx`` (wrapped in a dummy entry); syntax errors are reported
at the native file's own line and column.
"""
from __future__ import annotations

import ast
import bisect
import dataclasses
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import SpliceError
from ..ptx import model as m
from ..ptx.errors import PtxSyntaxError, source_line
from ..util import read_text
from ..ptx.operands import map_operand, registers
from ..ptx import parse
from ..ptx.printer import canonical_node as cn
from ..yamlsafe import load_yaml_marked
from ..util import encode, encoding_advice

_WRAP_PRE = ".version 8.0\n.target sm_90\n.address_size 64\n.entry __splice_native()\n{\n"
_WRAP_LINES = _WRAP_PRE.count("\n")
_WRAP_POST = "\n}\n"

_HEADER = re.compile(r"^\s*//\s*splice-native\s*:")
MAX_SCRATCH = 1 << 16     # scratch registers a header, or a body's .reg lines, may declare in all
                          # (a phase uses a few dozen)
_SCRATCH_RANGE = re.compile(r"^%?([A-Za-z_$][\w$]*)<(\d{1,40})>$")

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
    declared: tuple = ()          # parameter names the header declares (a recipe may set only these)
    used: dict = field(default_factory=dict)   # register -> first native line using it

    def line(self, node) -> int:
        """The native file's line of a parsed statement."""
        return max(1, node.line - _WRAP_LINES)

    def error(self, message: str, line: Optional[int] = None, detail: str = "") -> SpliceError:
        return SpliceError(message, self.path, line or self.header_line, None, detail)


# --------------------------------------------------------------------------------------------
# template expressions
# --------------------------------------------------------------------------------------------

class TemplateError(ValueError):
    """A template expression that is not bounded integer arithmetic."""


MAX_EXPR_CHARS = 256          # a template expression is a short formula, never a program
MAX_BITS = 64                 # every value, intermediate ones included, fits a PTX immediate

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Div: operator.floordiv,
    ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_UNOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}


def eval_expr(expr: str, env: dict):
    """Evaluate a template expression: integer arithmetic over literals and names in ``env``.

    Interpreted node by node (never ``eval``), with every value bounded to ``MAX_BITS`` bits
    *before* it is computed, so ``9**9**9`` or ``1 << 10**8`` is an error, not a hang.  A name
    bound to a string (``entry``, ``param0``) may stand alone but not take part in arithmetic.
    Unknown names raise ``KeyError``; everything else wrong raises ``TemplateError``."""
    text = expr.strip()
    if len(text) > MAX_EXPR_CHARS:
        raise TemplateError(f"longer than {MAX_EXPR_CHARS} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise TemplateError(f"not an expression ({exc.msg})") from None
    except (RecursionError, MemoryError):
        raise TemplateError("nested too deeply") from None
    return _evaluate(tree.body, env)


def _bounded(v: int) -> int:
    if v.bit_length() > MAX_BITS:
        raise TemplateError(f"value does not fit in {MAX_BITS} bits")
    return v


def _integer(v, node) -> int:
    if isinstance(v, str):
        raise TemplateError(f"only integer arithmetic: {ast.unparse(node)!r} is the text {v!r}")
    return v


def _evaluate(node, env):
    if isinstance(node, ast.Constant):
        if type(node.value) is not int:
            raise TemplateError(f"only integers, not {node.value!r}")
        return _bounded(node.value)
    if isinstance(node, ast.Name):
        v = env[node.id]
        if type(v) is int:
            return _bounded(v)
        if isinstance(v, str):
            return v
        raise TemplateError(f"{node.id} is {v!r}, not an integer")
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNOPS:
        return _bounded(_UNOPS[type(node.op)](_integer(_evaluate(node.operand, env), node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a = _integer(_evaluate(node.left, env), node.left)
        b = _integer(_evaluate(node.right, env), node.right)
        return _bounded(_binop(type(node.op), a, b))
    raise TemplateError(f"not allowed in a template expression: {type(node).__name__}")


def _binop(op, a: int, b: int) -> int:
    if op in (ast.FloorDiv, ast.Mod, ast.Div) and b == 0:
        raise TemplateError("division by zero")
    if op is ast.Div and a % b:
        raise TemplateError(f"{a} / {b} is not an integer (use // to round down)")
    if op in (ast.LShift, ast.RShift) and not 0 <= b <= MAX_BITS:
        raise TemplateError(f"shift by {b} (0..{MAX_BITS})")
    if op is ast.Pow:
        if b < 0:
            raise TemplateError("negative exponent")
        if abs(a) > 1 and (abs(a).bit_length() - 1) * b > MAX_BITS:
            raise TemplateError(f"{a} ** {b} does not fit in {MAX_BITS} bits")
    return _BINOPS[op](a, b)


def template_spans(text: str):
    r"""(start, end, expression) of each ``{{expression}}``: the first ``}}`` after its ``{{`` on
    the same line.  By ``str.find``, a line at a time: the regex ``\{\{(.*?)\}\}`` searched a
    line of ``{{`` with no ``}}`` to its end again from each of them (quadratic)."""
    pos = 0
    while True:
        s = text.find("{{", pos)
        if s < 0:
            return
        eol = text.find("\n", s)
        eol = len(text) if eol < 0 else eol
        e = text.find("}}", s + 2, eol)
        if e < 0:
            pos = eol
            continue
        yield s, e + 2, text[s + 2:e]
        pos = e + 2


def _comment_spans(text: str) -> list:
    """(start, end) of each ``//`` and ``/* */`` comment of ``text``, in order (one pass)."""
    spans, i, n = [], 0, len(text)
    while True:
        a, b = text.find("//", i), text.find("/*", i)
        if a < 0 and b < 0:
            return spans
        if b < 0 or 0 <= a < b:
            e = text.find("\n", a)
            e = n if e < 0 else e
            spans.append((a, e))
        else:
            e = text.find("*/", b + 2)
            e = n if e < 0 else e + 2
            spans.append((b, e))
        i = e


def _unexpanded(text: str, lo: int, hi: int, path: str, comments: list) -> None:
    """A ``{{`` or ``}}`` left in ``text[lo:hi]`` (text between templates) outside a comment is
    a template that was not expanded -- split across lines, or never opened -- and would be
    written into the spliced module as it stands (``add.u32 %r11, %r11, {{1+2`` / ``}};`` was,
    with exit 0): an error at its line and column in the native.  Comments are not emitted (the
    header's one-line YAML may well end in ``}}``).  ``comments``: :func:`_comment_spans`'s list,
    filled on first need."""
    pos = lo
    while True:
        hits = [i for i in (text.find("{{", pos, hi), text.find("}}", pos, hi)) if i >= 0]
        if not hits:
            return
        at = min(hits)
        if not comments:
            comments.extend(_comment_spans(text) or [(-1, -1)])
        k = bisect.bisect_right(comments, (at, len(text) + 1)) - 1
        if k >= 0 and comments[k][0] <= at < comments[k][1]:
            pos = comments[k][1]          # in a comment: on after it
            continue
        line, col = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
        if text.startswith("{{", at):
            raise SpliceError("unexpanded template: this {{ has no }} on its line (a template is one line: "
                              "{{ expression }})", path, line, col)
        raise SpliceError("unexpanded template: this }} closes no {{ on its line (nested blocks: write } })",
                          path, line, col)


def substitute(text: str, env: dict, path: str) -> str:
    """``text`` with every ``{{ expression }}`` replaced by its value; a ``{{`` or ``}}`` that is
    not part of a one-line template is an error (:func:`_unexpanded`), never output."""
    out, at, line, counted, comments = [], 0, 1, 0, []
    for start, end, expr in template_spans(text):
        _unexpanded(text, at, start, path, comments)
        line += text.count("\n", counted, start)   # running: one count per template was quadratic
        counted = start
        col = start - text.rfind("\n", 0, start)
        try:
            val = eval_expr(expr, env)
        except KeyError as exc:
            raise SpliceError(f"unknown template parameter {exc.args[0]!r} in {{{{{expr.strip()}}}}}"
                              f" (known: {', '.join(sorted(env)) or 'none'})", path, line, col) from None
        except TemplateError as exc:
            raise SpliceError(f"bad template expression {{{{{expr.strip()}}}}}: {exc}", path, line,
                              col) from None
        out += [text[at:start], str(val)]
        at = end
    _unexpanded(text, at, len(text), path, comments)
    out.append(text[at:])
    return "".join(out)


def _resolve_params(env: dict, names: set, path: str, line: int) -> None:
    """Parameters written as text are expressions over the cut's facts and the other
    parameters (``woff: weight_lo + 512``): evaluate them in dependency order, in place.  One
    that cannot be evaluated (a typo, a cycle, a string in arithmetic) is an error at the
    header's line, never left as text for the template to paste."""
    pending = sorted(k for k in names if isinstance(env[k], str))
    while pending:
        ready = {k: v for k, v in env.items() if k not in pending}
        done = []
        for k in pending:
            try:
                env[k] = eval_expr(env[k], ready)
                done.append(k)
            except KeyError:
                continue
            except TemplateError as exc:
                raise SpliceError(f"params: {k}: bad expression {env[k]!r}: {exc}", path, line) from None
        if not done:
            k = pending[0]
            try:
                eval_expr(env[k], {kk: vv for kk, vv in env.items() if kk != k})
            except (KeyError, TemplateError) as exc:
                what = f"unknown name {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
                raise SpliceError(f"params: {k}: cannot evaluate {env[k]!r}: {what} (or a cycle "
                                  f"through {', '.join(pending)})", path, line) from None
            raise SpliceError(f"params: {', '.join(pending)} refer to each other", path, line)
        pending = [k for k in pending if k not in done]


# --------------------------------------------------------------------------------------------
# header
# --------------------------------------------------------------------------------------------

def read_header(text: str, path: str) -> tuple:
    """(header dict, first line) of the ``// splice-native:`` comment block, ({}, 1) if none."""
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        if not _HEADER.match(ln):
            continue
        block = [re.sub(r"^\s*//\s?", "", ln)]
        for j, nxt in enumerate(lines[i + 1:], i + 2):
            if not nxt.strip().startswith("//") or _HEADER.match(nxt):
                break
            body = re.sub(r"^\s*// ?", "", nxt).rstrip("\r")     # a tab stays: indentation YAML refuses
            if body.strip() and not body[:1].isspace():   # the header's block ends; a comment follows
                _not_a_header_key(body, path, j)
                break
            block.append(body)
        try:
            data = load_yaml_marked("\n".join(block), path)
        except SpliceError as exc:
            line = min(i + (exc.line or 1), i + len(block))    # end-of-stream errors: the last line
            raise SpliceError(f"bad splice-native header: {exc.message}", path, line) from None
        if not isinstance(data, dict):
            raise SpliceError("splice-native header must be a mapping (params:, scratch:)", path, i + 1)
        hdr = data.get("splice-native") or {}
        if not isinstance(hdr, dict):
            raise SpliceError("splice-native header must be a mapping (params:, scratch:)", path, i + 1)
        unknown = set(hdr) - {"params", "scratch", "abi", "description", "schedule"}
        if unknown:
            raise SpliceError(f"unknown splice-native header key {sorted(unknown)[0]!r} "
                              "(expected params, scratch, abi, description, schedule)", path, i + 1)
        again = next((j for j in range(i + len(block), len(lines)) if _HEADER.match(lines[j])), None)
        if again is not None:      # it was ignored: its params and scratch were not there
            raise SpliceError(f"a second splice-native header (the first is at line {i + 1}): a native has one",
                              path, again + 1)
        return hdr, i + 1
    return {}, 1


#: the header's own keys, as a line that ends its block may spell one left unindented
_HEADER_KEY = re.compile(r"(params|scratch|abi|description|schedule)\s*:")


def _not_a_header_key(text: str, path: str, line: int) -> None:
    """The comment line that ends the header block (``// splice-native:`` and the lines indented
    under it): prose there is an ordinary comment, but a header key at its column would be
    dropped in silence, so it is an error.  Every comment line after the header was read as
    YAML: ``// swap the n-tiles: d0 <-> d2`` became a key, and plain prose was "could not
    find expected ':'" — a native refused for a comment, where everything but the header is
    meant to be ignored."""
    if _HEADER_KEY.match(text):
        raise SpliceError(f"{text.split(':')[0].strip()}: belongs under splice-native: indent it "
                          "(e.g. '//   params: {}')", path, line)


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
            count = int(mt.group(2))
            if len(out) + count > MAX_SCRATCH:     # expanded one name per register: 10^11 would never
                # end, nor would 200 ranges of 65536 (13M names, 10 GB): the bound is the header's total
                raise SpliceError(f"scratch register range {name!r}: {count} registers, "
                                  f"{len(out) + count} in all (at most {MAX_SCRATCH})", path, line)
            for k in range(count):
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
        source = read_text(p)
    except FileNotFoundError:
        raise SpliceError("native phase file not found", shown) from None
    return parse_native(source, shown, params, context)


def _collect_body(items, out: list, scratch: dict, path: str, env: dict, nested: bool) -> None:
    """The native's statements into ``out`` and its ``.reg`` declarations into ``scratch``
    (flat: a nested scope's register that shadows one declared before it, ``{ .reg .b32 %r5; }``
    inside code using another ``%r5``, gets a name of its own and its uses in the scope follow
    it); ``.pragma`` stays in place, ``.loc``/``.file`` go, any other directive is an error; a
    ``.param`` declaration, a ``.callprototype``, a ``.calltargets`` and a ``.branchtargets``
    list are kept where a nested scope holds them (a call sequence's arguments, an indirect
    call's prototype or targets, a ``brx.idx`` jump table: extract writes them so)."""
    env = dict(env)
    for it in items:
        if isinstance(it, m.Decl) and it.space == ".param" and nested:
            out.append(it)     # a call sequence's argument slots (`{ .param .b64 param0; … call …; }`):
            continue           # local to that scope, named by its st.param/call only
        if isinstance(it, m.Decl):
            if it.space != ".reg":
                raise SpliceError(f"only .reg declarations are allowed in a native phase, not {it.space}"
                                  + (" (outside a { } call sequence)" if it.space == ".param" else ""),
                                  path, it.line - _WRAP_LINES)
            for d in it.declarators:
                if d.count is not None and len(scratch) + d.count > MAX_SCRATCH:   # %x<4294967296>: 16 GB
                    raise SpliceError(f".reg {d.name}<{d.count}>: {len(scratch) + d.count} scratch registers in all "
                                      f"(at most {MAX_SCRATCH})", path, it.line - _WRAP_LINES)
                names = [f"{d.name}{k}" for k in range(d.count)] if d.count is not None else [d.name]
                for name in names:
                    _declare(name, it.type, scratch, env, nested)
        elif isinstance(it, m.Block):
            inner: list = []
            _collect_body(it.items, inner, scratch, path, env, True)
            out.append(m.Block(tuple(inner), it.span, it.line))
        elif isinstance(it, m.Directive):
            if it.name == ".pragma":      # e.g. "nounroll" on a native loop: kept in place
                out.append(it)
            elif it.name in (".callprototype", ".calltargets", ".branchtargets") and nested:
                out.append(it)            # an indirect call's prototype or target list, a brx.idx
                                          # jump table (`proto: .callprototype …;`, `$tbl: .branchtargets …;`)
            elif it.name not in (".loc", ".file"):
                where = (" outside a { } scope (write it inside one with the call or brx.idx that uses it, "
                         "as extract does)" if it.name in (".callprototype", ".calltargets", ".branchtargets") else "")
                raise SpliceError(f"directive {it.name} is not allowed in a native phase{where}", path,
                                  it.line - _WRAP_LINES)
        elif env and isinstance(it, m.Instruction):     # keeps its line for diagnostics
            out.append(dataclasses.replace(rename_node(it, env, {}), span=it.span, line=it.line))
        else:
            out.append(it)


def _declare(name: str, ty: Optional[str], scratch: dict, env: dict, nested: bool) -> None:
    if nested and name in scratch:
        fresh, k = name, 1
        while fresh in scratch:
            fresh, k = f"{name}_s{k}", k + 1
        env[name] = fresh
        name = fresh
    scratch[name] = ty


def _yaml_key(k) -> str:
    """How to name a key YAML did not read as a word: ``off``/``on``/``yes``/``no`` are YAML 1.1
    booleans, so a parameter called ``off`` arrives as ``False`` unless it is quoted."""
    if isinstance(k, bool):
        return f"the YAML boolean {k} (off/on/yes/no/true/false read as booleans: quote the name)"
    return repr(k)


def parse_native(source: str, path: str = "<native>", params: Optional[dict] = None,
                 context: Optional[dict] = None) -> NativePhase:

    hdr, hline = read_header(source, path)
    env = dict(context or {})
    defaults = hdr.get("params") or {}
    if not isinstance(defaults, dict):
        raise SpliceError("params: must be a mapping of names to values", path, hline)
    for k in defaults:
        if not isinstance(k, str) or not k.isidentifier():
            raise SpliceError(f"params: a parameter name must be a word, got {_yaml_key(k)}", path, hline)
    env.update(defaults)
    env.update(params or {})
    _resolve_params(env, set(defaults) | set(params or {}), path, hline)
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
        if line == 1:   # a UTF-16 native file fails on its first character
            msg += encoding_advice(encode(source[:64]))
        raise PtxSyntaxError(path, line, exc.column, msg, source_line(text, line)) from None
    fn = mod.function("__splice_native")
    scratch = _scratch_from_header(hdr.get("scratch"), path, hline)
    body: list = []
    _collect_body(fn.body.items, body, scratch, path, {}, False)
    nat = NativePhase(path, source, text, {k: env[k] for k in env if k in defaults or k in (params or {})},
                      scratch, tuple(body), hline, tuple(defaults))
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
    """``%`` registers named inside an operand (``splice.ptx.operands``)."""
    return registers(op, out, syms=False)


# --------------------------------------------------------------------------------------------
# renaming (a model walk, never a regex over PTX)
# --------------------------------------------------------------------------------------------

def rename_operand(op, regs: dict, labels: dict):
    """``op`` with registers renamed by ``regs`` and identifiers by ``labels`` (then ``regs``)."""
    def leaf(x):
        t = type(x)
        if t is m.Reg:
            new = regs.get(x.name)
            return m.Reg(new) if new else x
        if t is m.Sym:
            new = labels.get(x.name) or regs.get(x.name)
            return m.Sym(new) if new else x
        return x

    return map_operand(op, leaf)


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
    if isinstance(node, m.Directive) and node.name == ".branchtargets":
        # a jump table lists labels: they are renamed with the labels they name (the native's
        # own `$even` becomes `$Lsplice1_even`, so must its entry in the table)
        return dataclasses.replace(node, args=tuple(labels.get(a, a) for a in node.args))
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

    return cn(node, indent)


def labels_of(nodes) -> list:
    return [n.name for n in m.walk(nodes) if isinstance(n, m.Label)]
